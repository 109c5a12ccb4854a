"""The whole HTML page: head (with its Content-Security-Policy), the run's header, one
section per eval, the trends of the run history when one is kept, and the page's one
script at the end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ragmetrics.reports.columns import NOT_COMPUTED, Entry
from pytest_ragmetrics.reports.document import model_of, run_verdict
from pytest_ragmetrics.reports.html.forest import forest
from pytest_ragmetrics.reports.html.markup import escape, table
from pytest_ragmetrics.reports.html.plots import bars, distributions, pareto
from pytest_ragmetrics.reports.html.projection import embedding_section, projection_style
from pytest_ragmetrics.reports.html.rows import anchors, rows_list, shown_rows
from pytest_ragmetrics.reports.html.script import SCRIPT, content_security_policy
from pytest_ragmetrics.reports.html.tables import (
    aggregates,
    breakdowns,
    gates_table,
    signatures,
    stored_baselines,
    systems_table,
    transformations,
    verdict,
)
from pytest_ragmetrics.reports.html.trends import trends_section
from pytest_ragmetrics.reports.model import ReportModel

# Fits a 1366 px laptop screen: the body is at most 1200 px wide, every table scrolls
# sideways inside its own box (.scroll), long words and ids break, plots shrink to fit.
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;color:#1f2328;max-width:1200px;margin:1.5rem auto;
padding:0 1rem;overflow-wrap:break-word}h1{font-size:1.4rem}h3{font-size:1rem;margin:1.2rem 0 .4rem}
h2{font-size:1.2rem;border-top:2px solid #d0d7de;padding-top:.8rem;margin-top:2rem}
h4{margin:1rem 0 .3rem}pre{white-space:pre-wrap}
.scroll{overflow-x:auto;max-width:100%;container-type:inline-size}
table{border-collapse:collapse;margin:.3rem 0;font-size:13px}th{background:#f6f8fa}
th,td{border:1px solid #d0d7de;padding:.15rem .45rem;text-align:left;vertical-align:top}
.num td,.num th{overflow-wrap:normal}
table.num>tbody>tr>td+td,.gates>tbody>tr>td:nth-child(n+5):nth-child(-n+7),
.sentences>tbody>tr>td:nth-child(3){text-align:right;font-variant-numeric:tabular-nums}
.main td:first-child{white-space:nowrap}.main th{max-width:7rem}
.verdict,.status{padding:0 .4rem;border-radius:.3rem;font-weight:600;white-space:nowrap}
.failed{background:#ffebe9;color:#a40e26}.passed{background:#dafbe1;color:#116329}
.status.error{background:#fff8c5;color:#7d4e00}
.skipped{background:#eaeef2;color:#57606a}.muted,.note,figcaption{color:#57606a}
figure.plot{display:inline-block;vertical-align:top;margin:.4rem 1rem .4rem 0;max-width:100%}
figure.plot svg{max-width:100%;height:auto}figcaption{font-size:12px;max-width:40rem}
.controls{margin:.3rem 0}.controls label{margin-right:1rem}
table.rows{width:100%}table.rows tbody{border-top:2px solid #d0d7de}
table.rows th[data-sort=number]{text-align:right}
tr.line>td:first-child{white-space:nowrap}table.rows>tbody>tr.line>td:nth-child(2){text-align:left}
tbody.row-failed tr.line td:first-child{box-shadow:inset 4px 0 #cf222e}
tbody.row-error tr.line td:first-child{box-shadow:inset 4px 0 #bf8700}
tbody.row-passed tr.line td:first-child{box-shadow:inset 4px 0 #1a7f37}
tbody.row-failed tr.line{background:#fff8f7}tbody.row-error tr.line{background:#fffbeb}
tr.drill>td{padding:0 .45rem;text-align:left;border-top:none}
tr.drill details{position:sticky;left:.45rem;max-width:calc(100cqw - 1rem);font-size:14px}
tr.drill summary{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:#57606a}
tr.drill details[open] summary{white-space:normal;color:inherit}
th button.sort{font:inherit;font-weight:600;border:none;background:none;padding:0;cursor:pointer}
summary{cursor:pointer}details.row>:not(summary){margin:.3rem 0}
dt{font-weight:600}dd{margin-left:1rem}
.text{white-space:pre-wrap;background:#f6f8fa;padding:.3rem .5rem;border-radius:.3rem}
.sentences{width:100%}.context{color:#57606a}
.supported{color:#116329}.unsupported,.error{color:#a40e26}.not-claim{color:#57606a}
.regressed,.advice{color:#9a6700;font-weight:600}
"""


def _notes(entries: Sequence[Entry]) -> list[str]:
    """What the metrics' aggregations say of the eval (a judge metric's agreement with
    people, two judges compared), each block under its title, per system."""
    blocks = []
    for entry in entries:
        for title, said in entry.notes.items():
            heading = f"{entry.system}: {title}" if entry.system else title
            body = escape("\n".join(said))
            blocks.append(f'<h4>{escape(heading)}</h4><pre class="text">{body}</pre>')
    return ["<h3>Notes of the metrics</h3>", *blocks] if blocks else []


def _eval_section(
    index: int, name: str, entries: Sequence[Entry], records: str | None = None
) -> str:
    first = entries[0]
    shown = [shown_rows(entry.rows or ()) for entry in entries]  # one pass a system
    ids = [anchors(index, s, entry, shown[s]) for s, entry in enumerate(entries)]
    dataset_errors = [error for entry in entries for error in entry.dataset_errors]
    parts = [
        f'<section id="eval-{index}"><h2>{escape(name)} {verdict(entries)}</h2>',
        f'<p class="muted">dataset {escape(first.dataset)} · '
        f"{escape(first.dataset_rows)} rows · sha256 "
        f"{escape(str(first.dataset_sha256)[:12])}</p>",
        *(f'<p class="error">{escape(error)}</p>' for error in dataset_errors),
        *(
            f'<p class="error">Warning: {escape(warning)}</p>'
            for entry in entries
            for warning in entry.warnings
        ),
        "<h3>Systems</h3>",
        systems_table(entries),
        f'<p class="note">{NOT_COMPUTED} = not computed for this system; a metric no system '
        "has is not shown</p>",
        "<h3>Gates</h3>",
        gates_table(entries, ids),
        forest(index, entries),
        "<h3>Plots</h3>",
        distributions(index, entries),
        pareto(index, entries),
        bars(index, entries),
        embedding_section(index, entries),
        *breakdowns(entries),
        *transformations(entries, ids),
        *stored_baselines(entries, ids),
        aggregates(entries),
        *_notes(entries),
        *signatures(entries),
        "<h3>Rows</h3>",
        *(rows_list(index, s, entry, records, shown[s]) for s, entry in enumerate(entries)),
        "</section>",
    ]
    return "\n".join(part for part in parts if part)


def _all_entries(groups: Mapping[str, Sequence[Entry]]) -> list[Entry]:
    return [entry for entries in groups.values() for entry in entries]


def _header(model: ReportModel, groups: Mapping[str, Sequence[Entry]]) -> str:
    """Verdict of the whole run, version and settings, and a link to each eval."""
    settings = model.settings
    values = [
        [str(key), ", ".join(map(str, value)) if isinstance(value, list) else str(value)]
        for key, value in settings.items()
    ]
    line = [
        f"pytest-ragmetrics {escape(model.plugin_version)}",
        f"tau_sim {escape(settings.get('tau_sim'))}",
        f"citations: {escape(settings.get('citation_format'))}",
    ]
    if model.trust_judge is not None and (judge := model.trust_judge.description):
        line.append(f"Trust-Score judge: {escape(judge)}")
    nav = "".join(
        f'<li><a href="#eval-{i}">{escape(name)}</a> {verdict(entries)}</li>'
        for i, (name, entries) in enumerate(groups.items())
    )
    if model.history is not None:
        nav += '<li><a href="#trends">Trends</a> over the recorded runs</li>'
    return "\n".join(
        [
            f"<h1>pytest-ragmetrics: {verdict(_all_entries(groups))}</h1>",
            f'<p class="muted">{" · ".join(line)}</p>',
            f"<details><summary>Settings</summary>{table(['Setting', 'Value'], values, '')}",
            f"</details><nav><ul>{nav}</ul></nav>",
        ]
    )


def render_html(report: ReportModel | Mapping[str, Any], records: str | None = None) -> str:
    """The whole page for the report model (or a JSON report document read into it);
    entries of one eval (same ``name``) are its systems, in document order. ``records``:
    the run's JSON report, as a link from the page's folder, which a table of a large
    system points to for the rows it leaves out (``rows.shown_rows``)."""
    model = model_of(report)
    groups: dict[str, list[Entry]] = {}
    for entry in model.evals:
        groups.setdefault(str(entry.name), []).append(entry)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" '
            f'content="{content_security_policy(SCRIPT)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>pytest-ragmetrics: {escape(run_verdict(_all_entries(groups))[0])}</title>",
            f"<style>{STYLE}{projection_style()}</style></head><body>",
            _header(model, groups),
            *(
                _eval_section(i, name, entries, records)
                for i, (name, entries) in enumerate(groups.items())
            ),
            trends_section(model),
            f"<script>{SCRIPT}</script>",
            "</body></html>",
            "",
        ]
    )
