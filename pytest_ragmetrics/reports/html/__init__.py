"""The HTML report (``--ragmetrics-html``): one self-contained page, a pure function of
the JSON report document (``--ragmetrics-json``); docs/reports.md#html.

Per eval: the verdict, the per-system table (every number to its metric's precision,
columns no system has left out), the gates with their evidence (the change and its
interval, p-value, pairs, MDE and verdict, or why a gate has none; for a passing gate,
the rows that break its rule on their own), the forest plot of the comparisons that
moved, the distribution of the main per-row metrics for every eval (with the stored
baseline's rows beside this run's when one pairs), for several systems the Pareto view
and per-metric bars (with the confidence interval of each mean when the document has the
eval's ``intervals``, as every aggregate does), the token and stop-reason breakdowns,
the IDK → supported transformations, and every row: its status, its per-row metrics, and
a drill-down with each sentence's verdict beside the context it was measured against.

The page fetches nothing and works from a file. Its one script (``script.SCRIPT``) sorts
and filters the rows; the Content-Security-Policy allows that script by its hash and
nothing else, every text taken from the document is HTML-escaped, and without the
script the page still shows everything. The same document always renders to the same
string.

With ``--ragmetrics-history``, a Trends section closes the page: each gate of the run
over the recorded runs, with its bound.

The modules: ``page`` (the page and each eval's section), ``tables``, ``rows``,
``plots`` (matplotlib, imported only to draw), ``forest`` (the comparisons' forest
plot), ``trends`` (the run history's plots), ``numbers`` (formatting by metric kind),
``markup`` (escaping, tables) and ``script``.
"""

from __future__ import annotations

from pytest_ragmetrics.reports.html.page import render_html
from pytest_ragmetrics.reports.html.plots import pareto_optimal
from pytest_ragmetrics.reports.html.script import SCRIPT, content_security_policy

__all__ = ["SCRIPT", "content_security_policy", "pareto_optimal", "render_html"]
