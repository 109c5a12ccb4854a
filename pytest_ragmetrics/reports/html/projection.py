"""The picture of an eval's embedding space in the HTML report: its questions, answers and
chunks as points of a 2-D projection (the entry's ``projection``, docs/reports.md), the
points far from every chunk and the outliers listed beside it, and the topic coverage of
the ``sources`` metric as a table and a bar chart, weakly covered topics first.

The scatter plot is SVG written here, not by matplotlib: one small element per point,
which carries its text as an SVG ``title`` (a tooltip without the script) and its index
(``data-p``), so the page's script can show the text on hover or click, highlight the
point a listed row names, and recolour the points (by kind, topic or row status) by
switching one class. Coordinates are drawn to a tenth of a pixel, with the same scale on
both axes so distances are not distorted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_ragmetrics.metrics.space.embedding import EMBEDDING_SPACE
from pytest_ragmetrics.metrics.space.points import CHUNK, FIELD_KINDS
from pytest_ragmetrics.metrics.space.sources import SOURCES
from pytest_ragmetrics.reports.columns import Entry
from pytest_ragmetrics.reports.html.markup import Html, escape, scrolling
from pytest_ragmetrics.reports.html.plots import Draw, plot_figure, system_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KIND_CLASS = {"question": "q", "answer": "a", "chunk": "c"}
KIND_PLURAL = {"question": "questions", "answer": "answers", "chunk": "chunks"}
STATUS_CLASS = {"passed": "sp", "failed": "sf", "error": "se"}
STATUS_COLOURS = {"sp": "#1a7f37", "sf": "#cf222e", "se": "#bf8700"}
KIND_COLOURS = {"q": "#1f77b4", "a": "#ff7f0e", "c": "#2ca02c"}
# Topic colours: matplotlib's tab10, then its lighter tab20 companions; topic t is
# drawn in colour t mod 20.
TOPIC_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)  # fmt: skip
UNKNOWN = "#afb8c1"  # a point the current colouring knows nothing about
METHOD_NAMES = {"pca": "PCA", "umap": "UMAP"}
DRAW_ORDER = ("chunk", "answer", "question")  # questions on top: they are what is hovered
LISTED = 20  # rows of each list beside the plot; the JSON report has them all
WIDTH, HEIGHT = 520, 400  # the plot's box, in SVG units; the inner area leaves room for labels
LEFT, BOTTOM, INSET = 22, 22, 8


def projection_style() -> str:
    """The CSS of the picture: the layout, the point shapes, and a colour rule per class
    for each colouring (the wrapper's ``by-kind``, ``by-topic`` or ``by-status``)."""
    rules = [
        ".pmap .body{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:flex-start}",
        ".pmap .maps{display:flex;flex-wrap:wrap;gap:0 1.5rem;max-width:100%}",
        ".pmap .side{flex:1 1 24rem;min-width:0}.pmap td.nw{white-space:nowrap}",
        "table.topics>tbody>tr>td:last-child{text-align:left}",
        ".pmap figure.scatter{margin:.3rem 0;max-width:100%}",
        ".pmap svg.scatter{width:520px;max-width:100%;height:auto;background:#fff}",
        ".pmap .frame{fill:none;stroke:#d0d7de}.pmap .axis{font-size:11px;fill:#57606a}",
        f".pmap .pt{{fill:{UNKNOWN};stroke:{UNKNOWN};stroke-width:1}}",
        *(f".by-kind .{c}{{fill:{colour};stroke:{colour}}}" for c, colour in KIND_COLOURS.items()),
        *(
            f".by-topic .t{i}{{fill:{colour};stroke:{colour}}}"
            for i, colour in enumerate(TOPIC_COLOURS)
        ),
        *(
            f".by-status .{c}{{fill:{colour};stroke:{colour}}}"
            for c, colour in STATUS_COLOURS.items()
        ),
        ".pmap .pt.a{fill:#fff;stroke-width:1.6}",  # answers hollow, whatever the colouring
        ".pmap .pt.hl,.pmap .pt:hover{stroke:#000;stroke-width:2.5}",
        ".pmap .ring{fill:none;pointer-events:none;stroke-width:1.3}",
        ".pmap .ring.out{stroke:#24292f}.pmap .ring.far{stroke:#cf222e;stroke-dasharray:2 2}",
        ".pmap .legend{margin:.2rem 0;font-size:12px}.pmap .legend svg{vertical-align:middle}",
        ".pmap .key{margin-right:.8rem;white-space:nowrap}",
        ".pmap:not(.by-kind) .legend.kind,.pmap:not(.by-topic) .legend.topic,"
        ".pmap:not(.by-status) .legend.status{display:none}",
        ".pmap .point-info{white-space:pre-wrap;background:#f6f8fa;padding:.3rem .5rem;"
        "border-radius:.3rem;min-height:2.9em;max-width:60rem}",
        ".pmap tr[data-p]{cursor:default}.pmap tr[data-p]:hover{background:#fff8c5}",
    ]
    return "".join(rules)


# -- the scatter plot ----------------------------------------------------------------------


def _placed(coordinates: Sequence[Sequence[float]]) -> list[tuple[float, float]]:
    """SVG positions of the points: one scale for both axes (the larger span fills its
    side), the cloud centred, y upwards."""
    xs = [point[0] for point in coordinates]
    ys = [point[1] for point in coordinates]
    inner_w, inner_h = WIDTH - LEFT - 2 * INSET, HEIGHT - BOTTOM - 2 * INSET
    span_x, span_y = max(xs) - min(xs), max(ys) - min(ys)
    scale = min(
        inner_w / span_x if span_x > 0 else float("inf"),
        inner_h / span_y if span_y > 0 else float("inf"),
    )
    if scale == float("inf"):  # a single place: the centre (pca_plane gives none such)
        scale = 0.0
    mid_x, mid_y = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    centre_x, centre_y = LEFT + INSET + inner_w / 2, INSET + inner_h / 2
    return [
        (centre_x + (x - mid_x) * scale, centre_y - (y - mid_y) * scale)
        for x, y in zip(xs, ys, strict=True)
    ]


def point_title(point: Mapping[str, Any]) -> str:
    """What a point's tooltip and the info box say: kind and id, what is known of it, a
    line break, its text."""
    facts = [f"{point.get('kind')} {point.get('id')}"]
    if point.get("topic") is not None:
        facts.append(f"topic {point['topic']}")
    if point.get("status") is not None:
        facts.append(f"row {point['status']}")
    if point.get("outlier"):
        facts.append("outlier")
    if point.get("far"):
        facts.append("far from every chunk")
    if point.get("nearest_chunk") is not None:
        facts.append(
            f"nearest chunk {point['nearest_chunk']} (cosine {point['nearest_cosine']:.3f})"
        )
    return f"{' · '.join(facts)}\n{point.get('text')}"


def _classes(point: Mapping[str, Any]) -> str:
    classes = ["pt", KIND_CLASS.get(str(point.get("kind")), "c")]
    if point.get("topic") is not None:
        classes.append(f"t{int(point['topic']) % len(TOPIC_COLOURS)}")
    if point.get("status") in STATUS_CLASS:
        classes.append(STATUS_CLASS[point["status"]])
    return " ".join(classes)


def _shape(point: Mapping[str, Any], p: int, x: float, y: float) -> str:
    title = f"<title>{escape(point_title(point))}</title>"
    attributes = f'class="{_classes(point)}" data-p="{p}"'
    if point.get("kind") == "chunk":
        corner = f'x="{x - 2.6:.1f}" y="{y - 2.6:.1f}" width="5.2" height="5.2"'
        return f"<rect {corner} {attributes}>{title}</rect>"
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" {attributes}>{title}</circle>'


def _axes(method: str, variance: Sequence[float]) -> str:
    if method == "pca" and len(variance) == 2:
        x_label = f"PC1 ({100 * variance[0]:.1f} % of variance)"
        y_label = f"PC2 ({100 * variance[1]:.1f} %)"
    else:
        x_label, y_label = (
            f"{METHOD_NAMES.get(method, method)} 1",
            f"{METHOD_NAMES.get(method, method)} 2",
        )
    bottom = HEIGHT - BOTTOM
    return (
        f'<rect class="frame" x="{LEFT}" y="0.5" width="{WIDTH - LEFT - 0.5}" height="{bottom}"/>'
        f'<text class="axis" x="{LEFT + (WIDTH - LEFT) / 2:.1f}" y="{HEIGHT - 6}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
        f'<text class="axis" transform="translate(14 {bottom / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )


def scatter(figure_id: str, picture: Mapping[str, Any], method: str) -> str:
    """The SVG of one projection of the picture's points, or a note saying why there is
    none (too few points, all in one place)."""
    about = (picture.get("methods") or {}).get(method) or {}
    points = picture.get("points") or []
    drawn = [(p, point) for p, point in enumerate(points) if point.get(method) is not None]
    name = METHOD_NAMES.get(method, method)
    if not drawn:
        why = about.get("note") or picture.get("note") or "no point has coordinates"
        return f'<p class="note">{name} projection not drawn: {escape(why)}.</p>'
    places = _placed([point[method] for _, point in drawn])
    at = {p: place for (p, _), place in zip(drawn, places, strict=True)}
    shapes = [
        _shape(point, p, *at[p])
        for kind in DRAW_ORDER
        for p, point in drawn
        if point.get("kind") == kind
    ]
    rings = [
        f'<circle class="ring {mark}" cx="{at[p][0]:.1f}" cy="{at[p][1]:.1f}" r="{radius}"/>'
        for p, point in drawn
        for mark, radius in (("out", 7), ("far", 9.5))
        if point.get("outlier" if mark == "out" else "far")
    ]
    svg = (
        f'<svg class="scatter" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(name)} projection of {len(drawn)} points">'
        f"{_axes(method, about.get('explained_variance') or ())}"
        f"{''.join(shapes)}{''.join(rings)}</svg>"
    )
    caption = _caption(picture, method, about)
    return (
        f'<figure class="scatter" id="{figure_id}">{svg}<figcaption>{caption}</figcaption></figure>'
    )


def _caption(picture: Mapping[str, Any], method: str, about: Mapping[str, Any]) -> str:
    if method == "pca":
        text = "PCA of the unit-length embeddings: the two directions of largest variance."
    else:
        text = (
            f"UMAP (umap-learn {about.get('version')}, cosine, {about.get('n_neighbors')} "
            f"neighbours, min_dist {about.get('min_dist')}, seed {about.get('seed')}): "
            "neighbourhoods kept, distances between clusters not to scale."
        )
    if about.get("note"):
        text += f" Note: {about['note']}."
    return escape(text)


# -- the legend, the colouring and the lists beside the plot -------------------------------


def _key(shape: str, classes: str, label: str) -> str:
    if shape == "rect":
        mark = f'<rect class="{classes}" x="3" y="3" width="6" height="6"/>'
    elif shape == "ring":
        mark = f'<circle class="{classes}" cx="6" cy="6" r="4.5"/>'
    else:
        mark = f'<circle class="{classes}" cx="6" cy="6" r="3.5"/>'
    icon = f'<svg width="12" height="12" aria-hidden="true">{mark}</svg>'
    return f'<span class="key">{icon} {escape(label)}</span>'


def _legends(picture: Mapping[str, Any]) -> str:
    total = picture.get("total") or {}
    drawn = picture.get("drawn") or {}
    points = picture.get("points") or []
    kinds = [
        _key("rect" if kind == "chunk" else "circle", f"pt {cls}", f"{kind} ({drawn.get(kind, 0)})")
        for kind, cls in KIND_CLASS.items()
        if total.get(kind)
    ]
    marks = []
    if any(point.get("outlier") for point in points):
        marks.append(_key("ring", "ring out", "outlier (embedding_space)"))
    if any(point.get("far") for point in points):
        marks.append(_key("ring", "ring far", "far from every chunk"))
    parts = [f'<p class="legend kind">{"".join(kinds + marks)}</p>']
    topics = sorted({int(p["topic"]) for p in points if p.get("topic") is not None})
    if topics:
        keys = [_key("circle", f"pt t{t % len(TOPIC_COLOURS)}", f"topic {t}") for t in topics]
        keys.append(_key("circle", "pt", "no topic (chunks)"))
        parts.append(f'<p class="legend topic">{"".join(keys + marks)}</p>')
    if any(point.get("status") for point in points):
        keys = [_key("circle", f"pt {cls}", status) for status, cls in STATUS_CLASS.items()]
        keys.append(_key("circle", "pt", "no row test"))
        parts.append(f'<p class="legend status">{"".join(keys + marks)}</p>')
    return "".join(parts)


def _colour_menu(picture: Mapping[str, Any]) -> str:
    """A menu of the colourings the run has data for; hidden until the script runs, and
    left out when points can only be coloured by kind."""
    colours = [c for c in picture.get("colours") or () if c in ("kind", "topic", "status")]
    if len(colours) < 2:
        return ""
    options = "".join(f'<option value="{c}">{c}</option>' for c in colours)
    return f'<label class="colour-by" hidden>Colour by <select>{options}</select></label>'


def _positions(picture: Mapping[str, Any]) -> dict[tuple[str, str], int]:
    """(kind, id) -> index of the drawn point."""
    return {
        (str(point.get("kind")), str(point.get("id"))): p
        for p, point in enumerate(picture.get("points") or ())
    }


def _list(headings: Sequence[str], rows: Sequence[tuple[int | None, Sequence[str]]]) -> Html:
    """A table whose rows name a drawn point (``data-p``), so hovering one marks it; every
    cell but the last (the text) stays on one line."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    body = "".join(
        ("<tr>" if p is None else f'<tr data-p="{p}">')
        + "".join(f'<td class="nw">{escape(cell)}</td>' for cell in cells[:-1])
        + f"<td>{escape(cells[-1])}</td></tr>"
        for p, cells in rows
    )
    return scrolling(
        f'<table class="points"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def _more(count: int) -> str:
    if count <= LISTED:
        return ""
    return f'<p class="note">and {count - LISTED} more in the JSON report.</p>'


def _unmeasured(picture: Mapping[str, Any]) -> str:
    """Why no question or answer was measured against the chunks."""
    total = picture.get("total") or {}
    if picture.get("note"):
        return "Coverage by the chunks was not measured: the picture has no points."
    if not total.get(CHUNK):
        return "No chunk to measure coverage by: the rows carry no contexts."
    return "No question or answer to measure against the chunks."


def far_list(picture: Mapping[str, Any]) -> str:
    """The drawn questions and answers far from every chunk, least covered first."""
    bounds = (picture.get("far") or {}).get("bounds") or {}
    if not bounds:
        return f'<p class="note">{escape(_unmeasured(picture))}</p>'
    far = [(p, point) for p, point in enumerate(picture.get("points") or ()) if point.get("far")]
    far.sort(key=lambda item: (float(item[1].get("nearest_cosine") or 0.0), item[0]))
    rule = ", ".join(
        f"{cosine:.3f} for {KIND_PLURAL.get(kind, kind)}" for kind, cosine in bounds.items()
    )
    sigmas = (picture.get("far") or {}).get("sigmas")
    intro = (
        f'<h4>Far from every chunk ({len(far)})</h4><p class="note">A question or answer '
        f"whose nearest chunk has a cosine below its kind's mean minus {sigmas:g} standard "
        f"deviations: {escape(rule)}.</p>"
    )
    if not far:
        return intro
    rows = [
        (
            p,
            [
                str(point["kind"]),
                str(point["id"]),
                str(point["nearest_chunk"]),
                f"{point['nearest_cosine']:.3f}",
                str(point["text"]),
            ],
        )
        for p, point in far[:LISTED]
    ]
    table = _list(["Kind", "ID", "Nearest chunk", "Cosine", "Text"], rows)
    return intro + table + _more(len(far))


def outlier_list(entry: Entry, picture: Mapping[str, Any]) -> str:
    """The outliers ``embedding_space`` counted, most isolated first; nothing when the
    eval did not compute it."""
    space = entry.dataset_details.get(EMBEDDING_SPACE.name)
    if not isinstance(space, Mapping) or "outliers" not in space:
        return ""
    outliers = space.get("outliers") or []
    field = space.get("field")
    kind = FIELD_KINDS.get(str(field))
    intro = (
        f'<h4>Outliers of embedding_space ({len(outliers)})</h4><p class="note">Texts of '
        f"{escape(field)} whose mean distance to their nearest neighbours is above "
        f"avg_nn_distance + 2 std_nn_distance = {float(space.get('outlier_bound') or 0):.3f}.</p>"
    )
    if not outliers:
        return intro
    where = _positions(picture)
    rows = [
        (
            where.get((str(kind), str(outlier["id"]))),
            [str(outlier["id"]), f"{outlier['nn_distance']:.3f}", str(outlier["text"])],
        )
        for outlier in outliers[:LISTED]
    ]
    return intro + _list(["ID", "k-NN distance", "Text"], rows) + _more(len(outliers))


def _summary(picture: Mapping[str, Any]) -> str:
    """What is drawn: counts per kind, sampling, seed, the methods' notes."""
    total = picture.get("total") or {}
    drawn = picture.get("drawn") or {}
    counts = ", ".join(
        f"{drawn.get(kind, 0)} {kind if drawn.get(kind, 0) == 1 else KIND_PLURAL[kind]}"
        + (f" of {total[kind]}" if drawn.get(kind, 0) != total.get(kind, 0) else "")
        for kind in KIND_CLASS
        if total.get(kind)
    )
    line = f"{sum(drawn.values())} points drawn: {counts or 'none'}"
    if picture.get("sampled"):
        line += (
            f"; a sample (seed {picture.get('seed')}) of at most {picture.get('limit')} "
            "points shared equally between the kinds (--ragmetrics-projection-limit); the "
            "lists below are of the drawn points"
        )
    else:
        line += f"; seed {picture.get('seed')}"
    missing = [KIND_PLURAL[kind] for kind in KIND_CLASS if not total.get(kind)]
    if missing:
        line += f". The rows have no {' or '.join(missing)}"
    if picture.get("note"):
        line += f". {picture['note']}"
    return f'<p class="muted">{escape(line)}.</p>'


def picture_html(index: int, system: int, entry: Entry, picture: Mapping[str, Any]) -> str:
    """One system's picture: summary, colour menu, the projections side by side with the
    legend and the hovered point's text under them, then the lists."""
    methods = [m for m in ("pca", "umap") if m in (picture.get("methods") or {})]
    figures = "".join(
        scatter(f"map-{index}-{system}-{method}", picture, method) for method in methods
    )
    info = (
        '<p class="point-info" aria-live="polite" hidden>Hover over a point, or click it to '
        "keep it, to read its text here.</p>"
    )
    return (
        f'<div class="pmap by-kind">{_summary(picture)}<div class="body">'
        f'<div class="figures">{_colour_menu(picture)}<div class="maps">{figures}</div>'
        f"{_legends(picture)}</div>"
        f'<div class="side">{info}{far_list(picture)}{outlier_list(entry, picture)}</div>'
        "</div></div>"
    )


# -- topic coverage -------------------------------------------------------------------------


def weakest_first(topics: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Topics ordered weakly covered first: fewest distinct chunks per question, then
    more questions first, then by id; topics without questions last."""

    def key(topic: Mapping[str, Any]) -> tuple[int, float, int, int]:
        questions = int(topic.get("question_count") or 0)
        if questions == 0:
            return (1, 0.0, 0, int(topic.get("topic_id") or 0))
        per_question = int(topic.get("unique_chunks") or 0) / questions
        return (0, per_question, -questions, int(topic.get("topic_id") or 0))

    return sorted(topics, key=key)


def _draw_topic_bars(topics: Sequence[Mapping[str, Any]]) -> Draw:
    def draw(figure: Figure) -> None:
        axes = figure.add_subplot()
        places = list(range(len(topics)))
        questions = [int(t.get("question_count") or 0) for t in topics]
        chunks = [int(t.get("unique_chunks") or 0) for t in topics]
        axes.barh(
            [y - 0.2 for y in places], questions, 0.4, color=KIND_COLOURS["q"], label="questions"
        )
        axes.barh(
            [y + 0.2 for y in places], chunks, 0.4, color=KIND_COLOURS["c"], label="distinct chunks"
        )
        axes.set_yticks(places, [f"topic {t.get('topic_id')}" for t in topics])
        axes.invert_yaxis()  # the weakest topic on top
        axes.tick_params(labelsize=8)
        axes.grid(axis="x", alpha=0.3)
        axes.legend(fontsize=8, loc="lower right")

    return draw


def topic_coverage(index: int, system: int, entry: Entry) -> str:
    """The ``sources`` topics as a table and bars, weakly covered first; nothing when the
    eval clustered no topics."""
    sources = entry.dataset_details.get(SOURCES.name)
    topics = (sources or {}).get("topics") if isinstance(sources, Mapping) else None
    if not topics:
        return ""
    ordered = weakest_first(topics)
    rows = []
    for topic in ordered:
        questions = int(topic.get("question_count") or 0)
        chunks = int(topic.get("unique_chunks") or 0)
        ratio = f"{chunks / questions:.2f}" if questions else "—"
        examples = " · ".join(str(e) for e in topic.get("examples") or ())
        cells = [str(topic.get("topic_id")), str(questions), str(chunks), ratio]
        rows.append([*cells, str(topic.get("unique_urls", "")), examples])
    headings = [
        "Topic",
        "Questions",
        "Distinct chunks",
        "Chunks per question",
        "Distinct URLs",
        "Its first questions",
    ]
    head = "".join(f"<th>{h}</th>" for h in headings)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    table = scrolling(
        f'<table class="topics num"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    )
    height = 0.9 + 0.32 * len(ordered)
    caption = (
        "Questions and the distinct chunks they retrieved, per k-means topic of the questions "
        "(sources), weakly covered topics first: fewest distinct chunks per question."
    )
    figure = plot_figure(
        f"topics-{index}-{system}", _draw_topic_bars(ordered), caption, (6.4, height)
    )
    return f"<h4>Topic coverage ({len(ordered)} topics)</h4>{figure}{table}"


def embedding_section(index: int, entries: Sequence[Entry]) -> str:
    """The eval's embedding-space section: per system, its picture and topic coverage;
    nothing for an eval that drew none."""
    parts = []
    for system, entry in enumerate(entries):
        picture = entry.projection
        topics = topic_coverage(index, system, entry)
        if not isinstance(picture, Mapping) and not topics:
            continue
        if len(entries) > 1:
            parts.append(f"<h4>{escape(system_name(entry))}</h4>")
        if isinstance(picture, Mapping):
            parts.append(picture_html(index, system, entry, picture))
        parts.append(topics)
    if not parts:
        return ""
    return "<h3>Embedding space</h3>" + "".join(parts)
