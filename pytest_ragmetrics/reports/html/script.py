"""The page's one script: sorting and filtering the rows of each system, reading the
points of an embedding-space picture (the hovered or clicked point's text, the point a
listed row names, the colouring), and the Content-Security-Policy that allows exactly
that script.

The script only enhances what the page already shows: without it every row is listed in
dataset order, every control stays hidden, and a point's text is its SVG tooltip. It
reads the document's text only through ``textContent`` and data attributes, never builds
markup from it (no ``innerHTML``), moves existing nodes to sort, sets ``hidden`` to
filter, and switches classes to mark and colour points. It is allowed by its SHA-256
(``script-src 'sha256-…'``), so a script a dataset smuggled into the page would not run
even if it escaped the escaping; the page has no inline event handler.
"""

from __future__ import annotations

import base64
import hashlib

SCRIPT = """
"use strict";
(function () {
  function searchable(body) {
    var parts = [];
    body.querySelectorAll("[data-search]").forEach(function (node) {
      parts.push(node.textContent.toLowerCase());
    });
    return parts.join("\\n");
  }
  function sortValue(body, column, kind) {
    if (kind === "index") {
      return Number(body.getAttribute("data-index"));
    }
    var cell = body.rows[0].cells[column];
    var text = cell ? cell.getAttribute("data-value") : null;
    return text === null || text === "" ? null : Number(text);
  }
  function setUp(list) {
    var table = list.querySelector("table.rows");
    var controls = list.querySelector(".controls");
    if (!table || !controls) {
      return;
    }
    var status = controls.querySelector("select.status-filter");
    var text = controls.querySelector("input.text-filter");
    var shown = controls.querySelector(".shown");
    var bodies = Array.prototype.slice.call(table.tBodies);
    var texts = bodies.map(searchable);
    var current = {column: -1, descending: false};
    function filter() {
      var wanted = status.value;
      var needle = text.value.trim().toLowerCase();
      var count = 0;
      bodies.forEach(function (body, i) {
        var keep = (wanted === "" || body.getAttribute("data-status") === wanted) &&
          (needle === "" || texts[i].indexOf(needle) >= 0);
        body.hidden = !keep;
        count += keep ? 1 : 0;
      });
      shown.textContent = count + " of " + bodies.length + " rows shown";
    }
    function sortBy(th) {
      var column = th.cellIndex;
      var kind = th.getAttribute("data-sort");
      current.descending = current.column === column ? !current.descending : false;
      current.column = column;
      var sign = current.descending ? -1 : 1;
      var keyed = bodies.map(function (body) {
        return {body: body, value: sortValue(body, column, kind),
                index: Number(body.getAttribute("data-index"))};
      });
      keyed.sort(function (a, b) {
        if (a.value === null || b.value === null) {
          return a.value === b.value ? a.index - b.index : a.value === null ? 1 : -1;
        }
        return (a.value - b.value) * sign || a.index - b.index;
      });
      keyed.forEach(function (item) {
        table.appendChild(item.body);
      });
      table.querySelectorAll("thead th").forEach(function (other) {
        other.removeAttribute("aria-sort");
        var arrow = other.querySelector(".arrow");
        if (arrow) {
          arrow.textContent = "";
        }
      });
      th.setAttribute("aria-sort", current.descending ? "descending" : "ascending");
      th.querySelector(".arrow").textContent = current.descending ? " \u25bc" : " \u25b2";
    }
    table.querySelectorAll("thead th[data-sort]").forEach(function (th) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) {
        button.appendChild(th.firstChild);
      }
      var arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.setAttribute("aria-hidden", "true");  // aria-sort says it; the name stays
      button.appendChild(arrow);
      th.appendChild(button);
      button.addEventListener("click", function () {
        sortBy(th);
      });
    });
    status.addEventListener("change", filter);
    text.addEventListener("input", filter);
    controls.hidden = false;
    filter();
  }
  document.querySelectorAll(".rows-list").forEach(setUp);
  function setUpMap(map) {
    var info = map.querySelector(".point-info");
    var menu = map.querySelector("label.colour-by");
    var resting = info.textContent;
    var pinned = null;
    function pointOf(event) {
      return event.target.closest ? event.target.closest("svg.scatter [data-p]") : null;
    }
    function show(point) {
      info.textContent = point ? point.querySelector("title").textContent : resting;
    }
    function mark(index, on) {
      map.querySelectorAll("svg.scatter [data-p]").forEach(function (point) {
        if (point.getAttribute("data-p") === index) {
          point.classList.toggle("hl", on);
        }
      });
    }
    function isPinned(index) {
      return pinned !== null && pinned.getAttribute("data-p") === index;
    }
    function pin(point) {
      if (pinned !== null) {
        mark(pinned.getAttribute("data-p"), false);
      }
      pinned = point;
      if (point) {
        mark(point.getAttribute("data-p"), true);
      }
      show(point);
    }
    var hovered = null;
    function hover(point) {
      if (hovered !== null && !isPinned(hovered)) {
        mark(hovered, false);
      }
      hovered = point ? point.getAttribute("data-p") : null;
      if (point) {
        mark(hovered, true);  // in every projection of the picture
      }
      show(point || pinned);
    }
    map.querySelectorAll("svg.scatter").forEach(function (svg) {
      svg.addEventListener("mouseover", function (event) {
        var point = pointOf(event);
        if (point) {
          hover(point);
        }
      });
      svg.addEventListener("mouseleave", function () {
        hover(null);
      });
      svg.addEventListener("click", function (event) {
        pin(pointOf(event));
      });
    });
    map.querySelectorAll("tr[data-p]").forEach(function (row) {
      var index = row.getAttribute("data-p");
      row.addEventListener("mouseenter", function () {
        mark(index, true);
      });
      row.addEventListener("mouseleave", function () {
        mark(index, isPinned(index));
      });
    });
    if (menu) {
      var select = menu.querySelector("select");
      select.addEventListener("change", function () {
        map.classList.remove("by-kind", "by-topic", "by-status");
        map.classList.add("by-" + select.value);
      });
      menu.hidden = false;
    }
    info.hidden = false;
  }
  document.querySelectorAll(".pmap").forEach(setUpMap);
})();
"""


def script_hash(script: str) -> str:
    """The CSP source that allows ``script`` and nothing else: ``'sha256-<base64>'`` of
    its UTF-8 text, exactly as it stands between the tags."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(script: str) -> str:
    """Nothing may load or run but the page's inline styles, its data: images and
    ``script``."""
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src {script_hash(script)}"
    )
