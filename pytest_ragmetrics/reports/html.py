"""The HTML report (``--ragmetrics-html``): one self-contained page, a pure function of
the JSON report document (``--ragmetrics-json``).

Per eval: the verdict, the per-system table with ratios and deltas against the reference
system, the gates, the Pareto view of overlap against tokens and per-metric bars (inline
SVG drawn by matplotlib), the token and stop-reason breakdowns, the IDK → supported
transformations and a drill-down of every row. The page holds no JavaScript and fetches
nothing: its Content-Security-Policy forbids both, and every text taken from the document
is HTML-escaped. The same document always renders to the same string.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.reports.columns import (
    NOT_COMPUTED,
    SYSTEM_COLUMNS,
    VS_COLUMNS,
    Entry,
    number,
    stat,
)
from pytest_ragmetrics.reports.document import gates

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Draw = Callable[["Figure"], None]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
# The 0-1 metrics drawn as grouped bars, when some system has them.
BAR_METRICS = (
    "overlap",
    "faithfulness",
    "f1",
    "f1_short",
    "em",
    "abstain",
    "anchor_coverage",
    "determinism",
)
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;color:#1f2328;max-width:1200px;margin:1.5rem auto;
padding:0 1rem}h1{font-size:1.4rem}h3{font-size:1rem;margin:1.2rem 0 .4rem}
h2{font-size:1.2rem;border-top:2px solid #d0d7de;padding-top:.8rem;margin-top:2rem}
table{border-collapse:collapse;margin:.3rem 0;font-size:13px}th{background:#f6f8fa}
th,td{border:1px solid #d0d7de;padding:.15rem .45rem;text-align:left;vertical-align:top}
table.num td+td,.row-metrics td,.gates td:nth-child(n+5):nth-child(-n+7),
.sentences td:nth-child(3){text-align:right;font-variant-numeric:tabular-nums}
.main td:first-child{white-space:nowrap}
.verdict,.status{padding:0 .4rem;border-radius:.3rem;font-weight:600}
.failed{background:#ffebe9;color:#a40e26}.passed{background:#dafbe1;color:#116329}
.skipped{background:#eaeef2;color:#57606a}.muted,.note,figcaption{color:#57606a}
figure.plot{display:inline-block;vertical-align:top;margin:.4rem 1rem .4rem 0;max-width:100%}
figure.plot svg{max-width:100%;height:auto}figcaption{font-size:12px;max-width:36rem}
details.row{border-bottom:1px solid #eaeef2;padding:.1rem 0}summary{cursor:pointer}
details.row>:not(summary){margin:.3rem 0 .3rem 1.2rem}dt{font-weight:600}dd{margin-left:1rem}
.text{white-space:pre-wrap;background:#f6f8fa;padding:.3rem .5rem;border-radius:.3rem}
.supported{color:#116329}.unsupported,.error{color:#a40e26}.not-claim{color:#57606a}
"""
_GATE_ORDER = {"failed": 0, "skipped": 1, "passed": 2}


class _Html(str):
    """Markup built here: every text from the document inside it is already escaped."""


def _e(text: object) -> _Html:
    return _Html(html.escape(str(text), quote=True))


def _fmt(value: object) -> str:
    """A value from the document for a cell: integers as they are, other numbers to six
    significant digits, ``None`` as not computed."""
    if value is None:
        return NOT_COMPUTED
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    found = number(value)
    return str(value) if found is None else f"{found:g}"


def _system(entry: Entry) -> str:
    system = entry.get("system")
    return "all rows" if system is None else str(system)


def _table(headings: Sequence[str], rows: Iterable[Sequence[str]], cls: str) -> _Html:
    """A table. Plain ``str`` cells are escaped, ``_Html`` cells go in as they are."""
    head = "".join(f"<th>{_e(heading)}</th>" for heading in headings)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if isinstance(c, _Html) else _e(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return _Html(
        f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _verdict(gates: Sequence[Mapping[str, Any]]) -> _Html:
    failed = sum(gate.get("status") == "failed" for gate in gates)
    if failed:
        return _Html(f'<span class="verdict failed">{failed} gate(s) failed</span>')
    if gates:
        return _Html('<span class="verdict passed">all gates hold</span>')
    return _Html('<span class="verdict skipped">no gates configured</span>')


def pareto_optimal(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For each ``(overlap, tokens)`` point, whether it is Pareto-optimal: no other point
    has at least its overlap and at most its tokens while being strictly better in one.
    Equal points are all optimal; an empty input gives an empty list."""
    return [
        not any(o >= overlap and t <= tokens and (o > overlap or t < tokens) for o, t in points)
        for overlap, tokens in points
    ]


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'((?:xlink:)?href="#|url\(#)([^")]+)')


def _svg(draw: Draw, figure_id: str) -> str:
    """What ``draw`` puts on a fresh figure, as inline SVG: matplotlib's default style,
    byte-deterministic, without prolog or comments (matplotlib copies each text into a
    comment), every id prefixed with ``figure_id`` so figures on one page do not clash."""
    from matplotlib import rc_context, style
    from matplotlib.figure import Figure

    # Fixed hash salt, glyphs as paths: the same bytes on every run and machine. No
    # mathtext: "$" in a system name is text.
    with (
        style.context("default"),
        rc_context(
            {"svg.hashsalt": "ragmetrics", "svg.fonttype": "path", "text.parse_math": False}
        ),
    ):
        figure = Figure(figsize=(6.4, 3.8), layout="constrained")
        draw(figure)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    svg = _COMMENT.sub("", text[text.index("<svg") :])
    svg = _ID.sub(lambda m: f'id="{figure_id}-{m.group(1)}"', svg)
    return _REFERENCE.sub(lambda m: f"{m.group(1)}{figure_id}-{m.group(2)}", svg)


def _figure(figure_id: str, draw: Draw, caption: str) -> str:
    svg = _svg(draw, figure_id)
    return f'<figure class="plot" id="{figure_id}">{svg}<figcaption>{caption}</figcaption></figure>'


def _skipped(what: str, why: str) -> str:
    return f'<p class="note">{what} skipped: {why}.</p>'


def _row_cloud(entry: Entry) -> tuple[list[float], list[float]]:
    """Tokens and overlap of the rows that have both."""
    pairs = [
        (tokens, overlap)
        for row in entry.get("rows") or ()
        if (tokens := number((row.get("metrics") or {}).get("tokens"))) is not None
        and (overlap := number((row.get("metrics") or {}).get("overlap"))) is not None
    ]
    return [t for t, _ in pairs], [o for _, o in pairs]


def _draw_pareto(
    systems: Sequence[tuple[int, str, float, float]],
    clouds: Sequence[tuple[list[float], list[float]]],
    optimal: Sequence[bool],
) -> Draw:
    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        for (index, name, overlap, tokens), cloud, best in zip(
            systems, clouds, optimal, strict=True
        ):
            colour = f"C{index % 10}"
            axes.scatter(*cloud, s=20, color=colour, alpha=0.35, linewidths=0)
            axes.scatter([tokens], [overlap], s=60, color=colour, zorder=3)
            if best:
                axes.scatter([tokens], [overlap], s=220, facecolors="none", edgecolors="black")
            axes.annotate(name, (tokens, overlap), xytext=(7, 7), textcoords="offset points")
        front = sorted((t, o) for (_, _, o, t), best in zip(systems, optimal, strict=True) if best)
        axes.plot([t for t, _ in front], [o for _, o in front], "--", color="grey", zorder=1)
        axes.set_xlabel("tokens.mean (per row)")
        axes.set_ylabel("overlap.mean")
        axes.grid(alpha=0.3)

    return draw


def _pareto(index: int, entries: Sequence[Entry]) -> str:
    if len(entries) < 2:
        return _skipped("Pareto plot", "one system only")
    systems = [
        (i, _system(entry), overlap, tokens)
        for i, entry in enumerate(entries)
        if (overlap := stat(entry, "overlap", "mean")) is not None
        and (tokens := stat(entry, "tokens", "mean")) is not None
    ]
    if len(systems) < 2:
        return _skipped("Pareto plot", "fewer than two systems have overlap.mean and tokens.mean")
    clouds = [_row_cloud(entries[i]) for i, *_ in systems]
    optimal = pareto_optimal([(overlap, tokens) for _, _, overlap, tokens in systems])
    best = ", ".join(name for (_, name, _, _), b in zip(systems, optimal, strict=True) if b)
    caption = (
        "Overlap against tokens, one point per system (light dots: its rows). Ringed and "
        f"joined: Pareto-optimal (higher overlap, fewer tokens): {_e(best)}."
    )
    return _figure(f"pareto-{index}", _draw_pareto(systems, clouds, optimal), caption)


def _mean(entry: Entry, metric: str) -> float | None:
    mean = stat(entry, metric, "mean")
    return stat(entry, metric, "rate") if mean is None else mean


def _draw_bars(
    names: Sequence[str], metrics: Sequence[str], values: Sequence[Sequence[float | None]]
) -> Draw:
    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        width = 0.8 / len(names)
        bars = []
        for i, row in enumerate(values):
            shift = (i - (len(names) - 1) / 2) * width
            placed = [(j + shift, v) for j, v in enumerate(row) if v is not None]
            x, height = [x for x, _ in placed], [v for _, v in placed]
            bars.append(axes.bar(x, height, width, color=f"C{i % 10}"))
        # Explicit labels: a name starting with "_" would otherwise be left out.
        axes.legend(bars, names, fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
        axes.set_xticks(range(len(metrics)), metrics, rotation=20)
        axes.set_ylim(0, 1.05)
        axes.grid(axis="y", alpha=0.3)

    return draw


def _bars(index: int, entries: Sequence[Entry]) -> str:
    if len(entries) < 2:
        return _skipped("Metric bars", "one system only; the table has every value")
    metrics = [m for m in BAR_METRICS if any(_mean(entry, m) is not None for entry in entries)]
    if not metrics:
        return _skipped("Metric bars", "no 0–1 metric was computed")
    values = [[_mean(entry, m) for m in metrics] for entry in entries]
    draw = _draw_bars([_system(entry) for entry in entries], metrics, values)
    return _figure(f"bars-{index}", draw, "Mean (rate for yes/no metrics) per system, 0–1.")


def _main_table(entries: Sequence[Entry]) -> _Html:
    compared = any(entry.get("compare_to") is not None for entry in entries)
    columns = [*SYSTEM_COLUMNS, *(VS_COLUMNS if compared else ())]
    rows = []
    for entry in entries:
        reference = entry.get("compare_to")
        versus = "" if reference is None else f' <span class="muted">vs {_e(reference)}</span>'
        name = _Html(f"{_e(_system(entry))}{versus}")
        counts = [_fmt(entry.get("n")), _fmt(entry.get("errors"))]
        rows.append([name, *counts, *(column.cell(entry) for column in columns)])
    return _table(["System", "N", "Errors", *(c.heading for c in columns)], rows, "main num")


def _gate_message(gate: Mapping[str, Any], anchors: Mapping[str, str]) -> _Html:
    """The gate's verdict line; for a gate that did not pass, the rows that regressed
    (linked to their drill-down) and the whole message, collapsed."""
    lines = str(gate.get("message") or "").splitlines()
    parts = [_e(lines[0]) if lines else ""]
    regressed = [change.get("id") for change in gate.get("regressed") or ()]
    if regressed:
        parts.append(f"<br>regressed {_links(regressed, anchors)}")
    if gate.get("status") != "passed" and len(lines) > 1:
        parts.append(f"<details><summary>details</summary><pre>{_e(chr(10).join(lines))}</pre>")
        parts.append("</details>")
    return _Html("".join(parts))


def _gates_table(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> str:
    gates = [
        (entry, ids, gate)
        for entry, ids in zip(entries, anchors, strict=True)
        for gate in entry.get("gates") or ()
    ]
    if not gates:
        return '<p class="note">No gates are configured for this eval.</p>'
    gates.sort(key=lambda found: _GATE_ORDER.get(found[2].get("status"), 1))
    rows = []
    for entry, ids, gate in gates:
        status = str(gate.get("status"))
        css = status if status in _GATE_ORDER else "skipped"
        rows.append(
            [
                _Html(f'<span class="status {css}">{_e(status)}</span>'),
                _system(entry),
                str(gate.get("name")),
                str(gate.get("rule")),
                *(_fmt(gate.get(key)) for key in ("value", "bound", "baseline")),
                _gate_message(gate, ids),
            ]
        )
    headings = ["Status", "System", "Gate", "Rule", "Value", "Bound", "Baseline", "Message"]
    return _table(headings, rows, "gates")


_BREAKDOWNS: dict[str, tuple[str, Callable[[Mapping[str, float]], str]]] = {
    "tokens_by_stage": ("Tokens by stage (mean per row)", lambda v: f"{v['mean']:.1f}"),
    "stop_reason": ("Stop reason (rows, share)", lambda v: f"{v['sum']:.0f} ({v['mean']:.0%})"),
}


def _breakdowns(entries: Sequence[Entry]) -> list[str]:
    """One table per breakdown that some system has: categories by systems."""
    parts = []
    for key, (title, fmt) in _BREAKDOWNS.items():
        per_system = [(entry.get("breakdowns") or {}).get(key) or {} for entry in entries]
        categories = dict.fromkeys(c for breakdown in per_system for c in breakdown)
        rows = [
            [str(c), *(fmt(b[c]) if c in b else NOT_COMPUTED for b in per_system)]
            for c in categories
        ]
        if rows:
            headings = [key, *(_system(entry) for entry in entries)]
            parts += [f"<h3>{title}</h3>", _table(headings, rows, f"{key} num")]
    return parts


def _aggregates(entries: Sequence[Entry]) -> str:
    """Every numeric aggregate of every system, collapsed."""
    names = dict.fromkeys(
        (metric, name)
        for entry in entries
        for metric, stats in sorted((entry.get("metrics") or {}).items())
        if isinstance(stats, Mapping)
        for name in stats
    )
    rows = [
        [f"{metric}.{name}", *(_fmt(stat(entry, metric, name)) for entry in entries)]
        for metric, name in names
        if any(stat(entry, metric, name) is not None for entry in entries)
    ]
    table = _table(["Aggregate", *(_system(entry) for entry in entries)], rows, "aggregates num")
    return f"<details><summary>All aggregates ({len(rows)})</summary>{table}</details>"


def _links(row_ids: Sequence[object], anchors: Mapping[str, str]) -> str:
    """``(n) id, id``: each id linked to its drill-down when the system has that row."""
    shown = [
        f'<a href="#{anchors[str(i)]}">{_e(i)}</a>' if str(i) in anchors else _e(i) for i in row_ids
    ]
    return f"({len(shown)}) {', '.join(shown) or 'none'}"


def _transformations(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> list[str]:
    items = []
    for entry, ids in zip(entries, anchors, strict=True):
        if entry.get("compare_to") is None:
            continue
        head = f"<b>{_e(_system(entry))}</b> vs {_e(entry['compare_to'])}"
        changes = entry.get("transformations")
        if changes is None:
            note = entry.get("transformations_note") or "not computed"
            items.append(f"<li>{head}: {_e(note)}</li>")
        else:
            compared = _e(_fmt(changes.get("compared")))
            idk = _links(changes.get("idk_to_supported") or (), ids)
            items.append(
                f"<li>{head} ({compared} ids compared): IDK → supported {idk} · "
                f"regressions {_links(changes.get('regressions') or (), ids)}</li>"
            )
    return ["<h3>Transformations</h3>", f"<ul>{''.join(items)}</ul>"] if items else []


def _stored_baselines(entries: Sequence[Entry], anchors: Sequence[Mapping[str, str]]) -> list[str]:
    """Per system with a stored baseline: how its rows pair with this run's by id."""
    items = []
    for entry, ids in zip(entries, anchors, strict=True):
        stored = entry.get("baseline") or {}
        status = stored.get("status")
        if status in (None, "none stored"):
            continue
        head = f"<b>{_e(_system(entry))}</b> ({_e(stored.get('path'))})"
        if status != "paired":
            why = str(stored.get("problem") or stored.get("note") or status).splitlines()[0]
            items.append(f"<li>{head}: {_e(status)}: {_e(why)}</li>")
            continue
        parts = [
            f"{_e(_fmt(stored.get('shared')))} of {_e(_fmt(stored.get('stored_rows')))} stored "
            f"rows paired (coverage {_e(_fmt(stored.get('coverage')))})"
        ]
        for title, key in (("removed", "removed_ids"), ("added", "added_ids")):
            if stored.get(key):
                parts.append(f"{title} {_links(stored[key], ids)}")
        if stored.get("changed_ids"):
            parts.append(f"inputs changed {_links(stored['changed_ids'], ids)}")
        changes = stored.get("transformations")
        if isinstance(changes, Mapping):
            parts.append(f"IDK → supported {_links(changes.get('idk_to_supported') or (), ids)}")
            parts.append(f"regressions {_links(changes.get('regressions') or (), ids)}")
        items.append(f"<li>{head}: {' · '.join(parts)}</li>")
    return ["<h3>Stored baseline</h3>", f"<ul>{''.join(items)}</ul>"] if items else []


def _sentences(sentences: Sequence[Mapping[str, Any]]) -> _Html:
    rows = []
    for sentence in sentences:
        if sentence.get("supported"):
            verdict, css = "supported", "supported"
        elif sentence.get("claim"):
            verdict, css = "unsupported", "unsupported"
        else:
            verdict, css = "not a claim", "not-claim"
        rows.append(
            [
                _Html(f'<span class="{css}">{verdict}</span>'),
                str(sentence.get("sentence", "")),
                _fmt(sentence.get("similarity")),
                ", ".join(map(str, sentence.get("citations") or ())),
                str(sentence.get("reason", "")),
            ]
        )
    return _table(["Verdict", "Sentence", "Similarity", "Citations", "Reason"], rows, "sentences")


def _aliases(gold: object) -> str:
    """Every gold alias, answer groups flattened, separated by " | "."""
    if isinstance(gold, str):
        return gold
    items = gold if isinstance(gold, list) else [gold]
    flat = [a for item in items for a in (item if isinstance(item, list) else [item])]
    return " | ".join(str(alias) for alias in flat)


def _row_details(anchor: str, row: Mapping[str, Any]) -> str:
    """One row's drill-down, collapsed: its summary line shows overlap, F1 and tokens."""
    metrics = row.get("metrics") or {}
    errors = row.get("errors") or ()
    shown = [f"{m} {_e(_fmt(metrics[m]))}" for m in ("overlap", "f1", "tokens") if m in metrics]
    summary = " · ".join([_e(row.get("id")), *shown])
    if errors:
        summary += f' · <span class="error">{len(errors)} error(s)</span>'
    body = [
        f'<div class="text"><b>Question</b> {_e(row.get("question") or NOT_COMPUTED)}</div>',
        f'<div class="text"><b>Answer</b> {_e(row.get("answer") or NOT_COMPUTED)}</div>',
    ]
    if row.get("gold") is not None:
        flag = row.get("answerable")
        answerable = "" if flag is None else " (answerable)" if flag else " (not answerable)"
        body.append(f'<div class="text"><b>Gold</b> {_e(_aliases(row["gold"]))}{answerable}</div>')
    live = row.get("live")
    if isinstance(live, Mapping):
        origin = "from the cache, as measured then" if live.get("cached") else "called in this run"
        body.append(
            f'<div class="text"><b>Live system</b> {_e(live.get("system"))} '
            f'<span class="muted">(fingerprint {_e(live.get("fingerprint"))}; output '
            f"{origin})</span></div>"
        )
    short = row.get("short_answer")
    if isinstance(short, Mapping):
        body.append(
            f'<div class="text"><b>Short answer</b> {_e(short.get("text"))} '
            f'<span class="muted">(finalizer rule {_e(short.get("rule"))})</span></div>'
        )
    if row.get("sentences"):
        body.append(_sentences(row["sentences"]))
    if metrics:
        values = [_fmt(value) for value in metrics.values()]
        body.append(_table([str(metric) for metric in metrics], [values], "row-metrics"))
    evidence = "".join(
        f"<dt>{_e(m)}</dt><dd>{_e(t)}</dd>" for m, t in (row.get("evidence") or {}).items()
    )
    if evidence:
        body.append(f"<dl>{evidence}</dl>")
    if errors:
        body.append(f'<ul class="error">{"".join(f"<li>{_e(e)}</li>" for e in errors)}</ul>')
    return (
        f'<details class="row" id="{anchor}"><summary>{summary}</summary>{"".join(body)}</details>'
    )


def _anchors(index: int, system: int, entry: Entry) -> dict[str, str]:
    """Row id -> the id of its drill-down; built from positions, so any row id is safe."""
    anchors: dict[str, str] = {}
    for r, row in enumerate(entry.get("rows") or ()):
        anchors.setdefault(str(row.get("id")), f"row-{index}-{system}-{r}")
    return anchors


def _eval_section(index: int, name: str, entries: Sequence[Entry]) -> str:
    first = entries[0]
    anchors = [_anchors(index, s, entry) for s, entry in enumerate(entries)]
    dataset_errors = [
        error
        for entry in entries
        for error in (entry.get("dataset_level") or {}).get("errors") or ()
    ]
    parts = [
        f'<section id="eval-{index}"><h2>{_e(name)} {_verdict(gates(entries))}</h2>',
        f'<p class="muted">dataset {_e(first.get("dataset"))} · {_e(first.get("dataset_rows"))} '
        f"rows · sha256 {_e(str(first.get('dataset_sha256'))[:12])}</p>",
        *(f'<p class="error">{_e(error)}</p>' for error in dataset_errors),
        *(
            f'<p class="error">Warning: {_e(warning)}</p>'
            for entry in entries
            for warning in entry.get("warnings") or ()
        ),
        "<h3>Systems</h3>",
        _main_table(entries),
        f'<p class="note">{NOT_COMPUTED} = not computed by this eval</p>',
        "<h3>Gates</h3>",
        _gates_table(entries, anchors),
        "<h3>Plots</h3>",
        _pareto(index, entries),
        _bars(index, entries),
        *_breakdowns(entries),
        *_transformations(entries, anchors),
        *_stored_baselines(entries, anchors),
        _aggregates(entries),
        "<h3>Rows</h3>",
    ]
    for s, entry in enumerate(entries):
        rows = entry.get("rows") or ()
        parts.append(f"<h4>{_e(_system(entry))} ({len(rows)} rows)</h4>")
        parts += [_row_details(f"row-{index}-{s}-{r}", row) for r, row in enumerate(rows)]
    return "\n".join([*parts, "</section>"])


def _header(document: Mapping[str, Any], groups: Mapping[str, Sequence[Entry]]) -> str:
    """Verdict of the whole run, version and settings, and a link to each eval."""
    settings = document.get("settings") or {}
    values = [
        [str(key), ", ".join(map(str, value)) if isinstance(value, list) else str(value)]
        for key, value in settings.items()
    ]
    line = [
        f"pytest-ragmetrics {_e(document.get('plugin_version'))}",
        f"tau_sim {_e(settings.get('tau_sim'))}",
        f"citations: {_e(settings.get('citation_format'))}",
    ]
    if judge := (document.get("trust_judge") or {}).get("description"):
        line.append(f"Trust-Score judge: {_e(judge)}")
    nav = "".join(
        f'<li><a href="#eval-{i}">{_e(name)}</a> {_verdict(gates(entries))}</li>'
        for i, (name, entries) in enumerate(groups.items())
    )
    all_entries = [entry for entries in groups.values() for entry in entries]
    return "\n".join(
        [
            f"<h1>pytest-ragmetrics: {_verdict(gates(all_entries))}</h1>",
            f'<p class="muted">{" · ".join(line)}</p>',
            f"<details><summary>Settings</summary>{_table(['Setting', 'Value'], values, '')}",
            f"</details><nav><ul>{nav}</ul></nav>",
        ]
    )


def render_html(document: Mapping[str, Any]) -> str:
    """The whole page for a JSON report document; entries of one eval (same ``name``) are
    its systems, in document order."""
    groups: dict[str, list[Entry]] = {}
    for entry in document.get("evals") or ():
        groups.setdefault(str(entry.get("name")), []).append(entry)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>pytest-ragmetrics report</title><style>{_STYLE}</style></head><body>",
            _header(document, groups),
            *(_eval_section(i, name, entries) for i, (name, entries) in enumerate(groups.items())),
            "</body></html>",
            "",
        ]
    )
