"""The HTML report in a real headless browser: Debian's /usr/bin/chromium driven by
playwright (never a downloaded browser). Planted script and event-handler payloads must
not run, must show as text, and the page must fetch nothing but itself.

Without chromium or playwright these tests skip, except under CI (``CI`` set), where they
fail: CI installs chromium, so a skip there would hide a broken setup.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from test_html_projection import projection_document

from pytest_ragmetrics.reports.html import render_html
from pytest_ragmetrics.reports.html.projection import point_title

from test_html import plant, rename_system, study_document

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Locator, Page, Route

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PWN = "window.__ragmetrics_pwned = 1; document.title = 'pwned'"
PAYLOAD = f'<script>{PWN}</script><img src=x onerror="{PWN}"><svg onload="{PWN}"></svg>'
EVIL_SYSTEM = f"</svg><script>{PWN}</script>"
TITLE = "pytest-ragmetrics: "  # then the run's headline
WIDTH, HEIGHT = 1000, 700


def unavailable(reason: str) -> NoReturn:
    """Skip for want of a browser; fail instead under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI must run the browser tests")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        unavailable(f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    document = rename_system(plant(study_document(), PAYLOAD), "config_b", EVIL_SYSTEM)
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(document), encoding="utf-8")
    return path


@dataclass
class Visit:
    """An open page of the report and what happened while it was open."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def visiting(browser: Browser, report: Path, width: int, height: int) -> Iterator[Visit]:
    """``report`` open in a fresh context of ``width`` x ``height``; every request but the
    file itself is recorded and refused, every console error and page error recorded."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(10_000)
    seen = Visit(context.new_page())

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            seen.errors.append(f"console: {message.text}")

    def on_route(route: Route) -> None:
        seen.requests.append(route.request.url)
        if route.request.url == report.as_uri():
            route.continue_()
        else:  # never let the test reach out, whatever the page asks for
            route.abort()

    seen.page.on("console", on_console)
    seen.page.on("pageerror", lambda error: seen.errors.append(f"page: {error}"))
    seen.page.route("**/*", on_route)
    seen.page.goto(report.as_uri())
    try:
        yield seen
    finally:
        context.close()


@pytest.fixture
def visit(browser: Browser, report: Path) -> Iterator[Visit]:
    with visiting(browser, report, WIDTH, HEIGHT) as seen:
        yield seen


def _open_every_row(page: Page) -> None:
    page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")


def test_nothing_planted_runs(visit: Visit) -> None:
    page = visit.page
    _open_every_row(page)
    page.wait_for_timeout(200)  # give an event handler, had one slipped in, time to fire
    assert visit.errors == []
    assert page.evaluate("() => window.__ragmetrics_pwned") is None
    assert page.title().startswith(TITLE)


def test_planted_text_shows_as_text(visit: Visit) -> None:
    page = visit.page
    row = page.locator("details.row").first  # baseline's st-01 carries the payloads
    answer = row.locator("div.text").nth(1)
    assert not answer.is_visible()
    row.locator("summary").click()
    assert answer.is_visible()
    assert answer.inner_text() == f"Answer Answer {PAYLOAD}"  # the label, then the answer
    assert f"Sentence {PAYLOAD}" in row.locator("table.sentences").inner_text()
    assert page.get_by_text(f"Error {PAYLOAD}").is_visible()
    assert f"st-03{PAYLOAD}" in page.locator("#eval-0 ul").first.inner_text()
    assert EVIL_SYSTEM in page.locator("#eval-0 table.main").inner_text()


def test_plots_are_drawn(visit: Visit) -> None:
    # the study's distributions, Pareto view and bars; the one-system eval's distributions
    figures = ("#dist-0", "#pareto-0", "#bars-0", "#dist-1")
    for figure in figures:
        box = visit.page.locator(f"{figure} > svg").bounding_box()
        assert box is not None, figure
        assert box["width"] > 100
        assert box["height"] > 100
    assert visit.page.locator("figure.plot svg").count() == len(figures)


def test_only_the_file_itself_is_requested(visit: Visit, report: Path) -> None:
    page = visit.page
    _open_every_row(page)
    link = page.locator("#eval-0 ul a").first  # config_a's st-03: IDK -> supported
    target = link.get_attribute("href")
    link.click()
    assert page.url == f"{report.as_uri()}{target}"
    assert visit.requests == [report.as_uri()]
    assert visit.errors == []


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png[12:16] == b"IHDR"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_screenshot_of_the_first_viewport(visit: Visit) -> None:
    page = visit.page
    shot = page.screenshot()
    assert _png_size(shot) == (WIDTH, HEIGHT)
    # The headline is painted in the first viewport: its box lies inside it, and the
    # picture differs from one of the same page with the headline hidden.
    box = page.locator("h1").bounding_box()
    assert box is not None
    assert box["y"] >= 0
    assert box["y"] + box["height"] <= HEIGHT
    assert box["width"] > 100
    page.add_style_tag(content="h1 { visibility: hidden; }")
    assert page.screenshot() != shot


@pytest.mark.parametrize(
    ("ci", "outcome"), [("1", pytest.fail.Exception), (None, pytest.skip.Exception)]
)
def test_a_missing_browser_fails_only_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, outcome: Any
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="chromium"):
        unavailable("/usr/bin/chromium is not installed")


# -- reading the rows: sorting, filtering, the drill-down, at a laptop's 1366 x 768 ---------

LAPTOP = (1366, 768)
# Set to a folder to keep the screenshots of the overflow check (they go to tmp_path
# anyway): RAGMETRICS_SCREENSHOTS=/tmp/html16 pytest tests/unit/reports/test_html_browser.py
SCREENSHOTS_ENV = "RAGMETRICS_SCREENSHOTS"


def one_system_document() -> dict[str, Any]:
    """The study's baseline alone, as an eval without systems (with its stored baseline)."""
    document = study_document()
    entry = document["evals"][0]
    entry.update(name="evals/test_one.py", label="evals/test_one.py", system=None)
    for row in entry["rows"]:
        row["system"] = None
    document["evals"] = [entry]
    return document


def _written(tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any]) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def study_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _written(tmp_path_factory, study_document())


@pytest.fixture
def laptop(browser: Browser, study_report: Path) -> Iterator[Visit]:
    with visiting(browser, study_report, *LAPTOP) as seen:
        yield seen
    assert seen.errors == []
    assert seen.requests == [study_report.as_uri()]


def _rows(system: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = study_document()["evals"][system]["rows"]
    return rows


def _shown_ids(rows_list: Locator) -> list[str]:
    """The ids of the rows the list shows, top to bottom."""
    ids: list[str] = rows_list.locator("table.rows > tbody").evaluate_all(
        "(bodies) => bodies.filter((b) => !b.hidden).map((b) => b.rows[0].cells[0].textContent)"
    )
    return ids


def test_the_controls_show_with_the_script(laptop: Visit) -> None:
    entries = study_document()["evals"]
    lists = laptop.page.locator(".rows-list").all()
    assert len(lists) == len(entries)  # one per system of the study, and the single eval's
    for rows_list, entry in zip(lists, entries, strict=True):
        assert rows_list.locator(".controls").is_visible()
        n = len(entry["rows"])
        assert rows_list.locator(".shown").inner_text() == f"{n} of {n} rows shown"


@pytest.mark.parametrize(("system", "metric"), [(1, "overlap"), (2, "tokens"), (0, "f1")])
def test_sorting_by_a_metric_column_reorders_the_rows(
    laptop: Visit, system: int, metric: str
) -> None:
    rows_list = laptop.page.locator(".rows-list").nth(system)
    rows = _rows(system)
    # ascending, then descending; equal values keep the dataset order either way
    ascending = sorted(range(len(rows)), key=lambda i: (rows[i]["metrics"][metric], i))
    descending = sorted(range(len(rows)), key=lambda i: (-rows[i]["metrics"][metric], i))
    button = rows_list.get_by_role("button", name=metric, exact=True)
    button.click()
    assert _shown_ids(rows_list) == [rows[i]["id"] for i in ascending]
    sorted_by = "(button) => button.parentElement.getAttribute('aria-sort')"
    assert button.evaluate(sorted_by) == "ascending"
    button.click()
    assert _shown_ids(rows_list) == [rows[i]["id"] for i in descending]
    assert button.evaluate(sorted_by) == "descending"
    rows_list.get_by_role("button", name="ID", exact=True).click()  # back to dataset order
    assert _shown_ids(rows_list) == [row["id"] for row in rows]


def test_a_sorted_row_keeps_its_drill_down(laptop: Visit) -> None:
    rows_list = laptop.page.locator(".rows-list").nth(1)
    rows_list.get_by_role("button", name="overlap", exact=True).click()
    first = rows_list.locator("table.rows > tbody").first
    row = next(row for row in _rows(1) if row["id"] == first.locator("td").first.inner_text())
    first.locator("summary").first.click()
    assert first.locator("details.row div.text").first.inner_text() == f"Question {row['question']}"


@pytest.mark.parametrize(("system", "status"), [(0, "failed"), (2, "error"), (1, "passed")])
def test_filtering_by_status_hides_the_other_rows(laptop: Visit, system: int, status: str) -> None:
    rows_list = laptop.page.locator(".rows-list").nth(system)
    expected = [row["id"] for row in _rows(system) if row["status"] == status]
    rows_list.locator("select.status-filter").select_option(status)
    assert _shown_ids(rows_list) == expected
    shown = rows_list.locator(".shown").inner_text()
    assert shown == f"{len(expected)} of 4 rows shown"
    line = rows_list.locator("tr.line").filter(has_text=status)
    assert line.count() == len(expected)
    rows_list.locator("select.status-filter").select_option("")
    assert _shown_ids(rows_list) == [row["id"] for row in _rows(system)]


@pytest.mark.parametrize("text", ["EIFFEL", "first document", "know", "no such words"])
def test_filtering_by_text_matches_question_or_answer(laptop: Visit, text: str) -> None:
    rows_list = laptop.page.locator(".rows-list").first  # the baseline system
    needle = text.lower()
    expected = [
        row["id"]
        for row in _rows(0)
        if needle in row["question"].lower() or needle in row["answer"].lower()
    ]
    rows_list.locator("input.text-filter").fill(text)
    assert _shown_ids(rows_list) == expected
    hidden = rows_list.locator("table.rows > tbody[hidden]")
    assert hidden.count() == 4 - len(expected)
    assert all(not body.is_visible() for body in hidden.all())


def test_status_and_text_filters_combine(laptop: Visit) -> None:
    rows_list = laptop.page.locator(".rows-list").first
    rows_list.locator("input.text-filter").fill("know")  # only st-03 abstains: it failed
    assert _shown_ids(rows_list) == ["st-03"]
    rows_list.locator("select.status-filter").select_option("passed")
    assert _shown_ids(rows_list) == []
    assert rows_list.locator(".shown").inner_text() == "0 of 4 rows shown"


def test_the_drill_down_shows_the_cited_context_beside_each_sentence(laptop: Visit) -> None:
    rows_list = laptop.page.locator(".rows-list").first
    body = rows_list.locator("table.rows > tbody").nth(1)  # baseline's st-02: two sentences
    sentences = body.locator("table.sentences")
    assert not sentences.is_visible()
    body.locator("summary").first.click()
    assert sentences.is_visible()
    expected = study_document()["evals"][0]["rows"][1]["sentences"]
    for n, sentence in enumerate(expected, start=1):
        line = sentences.locator("tr").nth(n)
        said, context = line.locator("td").nth(1), line.locator("td").nth(3)
        assert said.inner_text() == sentence["sentence"]
        measured = sentence["context"]
        assert context.inner_text() == f"{measured['doc_id']} {measured['text']}"
        said_box, context_box = said.bounding_box(), context.bounding_box()
        assert said_box is not None
        assert context_box is not None
        assert said_box["y"] == context_box["y"]  # on the same line
        assert context_box["x"] > said_box["x"] + said_box["width"] - 1  # beside, after it


@pytest.mark.parametrize("systems", ["one system", "three systems"])
def test_no_horizontal_overflow_at_a_laptop_width(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, systems: str
) -> None:
    document = one_system_document() if systems == "one system" else study_document()
    report = _written(tmp_path_factory, document)
    width, height = LAPTOP
    with visiting(browser, report, width, height) as seen:
        page = seen.page
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # the first row of each system opened, as a reader would, for the screenshot
        page.locator(".rows-list summary").evaluate_all(
            "(found) => found.forEach((s) => { s.parentElement.open = false; })"
        )
        for rows_list in page.locator(".rows-list").all():
            rows_list.locator("summary").first.click()
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        shot = page.screenshot(full_page=True)
        assert _png_size(shot)[0] == width
        _open_every_row(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert seen.errors == []
    assert seen.requests == [report.as_uri()]
    name = f"report-{systems.replace(' ', '-')}.png"
    (report.parent / name).write_bytes(shot)
    if folder := os.environ.get(SCREENSHOTS_ENV):
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / name).write_bytes(shot)


# -- the picture of an embedding space: hover, click, the lists, the colouring ---------------


@pytest.fixture(scope="module")
def space_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _written(tmp_path_factory, projection_document())


@pytest.fixture
def space_page(browser: Browser, space_report: Path) -> Iterator[Visit]:
    """The picture's page at a laptop's size; no script error and no request, whatever the
    test did."""
    with visiting(browser, space_report, *LAPTOP) as seen:
        yield seen
    assert seen.errors == []
    assert seen.requests == [space_report.as_uri()]


def _title(p: int) -> str:
    return point_title(projection_document()["evals"][0]["projection"]["points"][p])


def _marked(page: Page) -> list[str]:
    found: list[str] = page.locator("svg.scatter .pt.hl").evaluate_all(
        "(all) => all.map((p) => p.getAttribute('data-p'))"
    )
    return found


def test_hovering_a_point_shows_its_text(space_page: Visit) -> None:
    page = space_page.page
    info = page.locator(".pmap .point-info")
    assert info.is_visible()  # the script shows it; without it, hidden
    resting = info.inner_text()
    page.locator('svg.scatter [data-p="1"]').hover()
    assert info.inner_text() == _title(1)
    assert _marked(page) == ["1"]
    page.locator('svg.scatter [data-p="4"]').hover()  # a chunk, drawn as a square
    assert info.inner_text() == _title(4)
    assert _marked(page) == ["4"]
    page.mouse.move(5, 5)  # off the plot: back to what it said
    assert info.inner_text() == resting
    assert _marked(page) == []


def test_clicking_a_point_keeps_its_text_and_marks_it(space_page: Visit) -> None:
    page = space_page.page
    info = page.locator(".pmap .point-info")
    page.locator('svg.scatter [data-p="0"]').click()
    assert _marked(page) == ["0"]
    page.locator('svg.scatter [data-p="3"]').hover()
    assert info.inner_text() == _title(3)
    page.mouse.move(5, 5)
    assert info.inner_text() == _title(0)  # the kept point again
    page.locator("#map-0-0-pca svg").click(position={"x": 150, "y": 150})  # empty space
    assert _marked(page) == []


def test_a_listed_row_marks_its_point(space_page: Visit) -> None:
    page = space_page.page
    page.locator('.pmap tr[data-p="1"]').hover()  # the far question q2
    assert _marked(page) == ["1"]
    page.locator('.pmap tr[data-p="4"]').hover()  # the outlier chunk d1
    assert _marked(page) == ["4"]
    page.mouse.move(5, 5)
    assert _marked(page) == []


def test_the_colour_menu_recolours_the_points(space_page: Visit) -> None:
    page = space_page.page
    q2 = page.locator('svg.scatter [data-p="1"]')  # question, topic 1, row failed

    def fill() -> str:
        colour: str = q2.evaluate("(p) => getComputedStyle(p).fill")
        return colour

    def legend(kind: str) -> bool:
        return page.locator(f".pmap .legend.{kind}").is_visible()

    assert fill() == "rgb(31, 119, 180)"  # a question's blue
    assert (legend("kind"), legend("topic"), legend("status")) == (True, False, False)
    menu = page.locator(".pmap label.colour-by select")
    menu.select_option("topic")
    assert fill() == "rgb(255, 127, 14)"  # topic 1's orange
    assert (legend("kind"), legend("topic"), legend("status")) == (False, True, False)
    menu.select_option("status")
    assert fill() == "rgb(207, 34, 46)"  # failed
    menu.select_option("kind")
    assert fill() == "rgb(31, 119, 180)"


def test_the_picture_fits_a_laptop_screen(space_page: Visit) -> None:
    page = space_page.page
    assert page.evaluate("document.documentElement.scrollWidth") <= LAPTOP[0]
    box = page.locator("#map-0-0-pca svg").bounding_box()
    side = page.locator(".pmap .side").bounding_box()
    assert box is not None
    assert side is not None
    assert box["width"] > 400
    assert side["x"] >= box["x"] + box["width"]  # the lists beside the plot, not under it


def test_hovering_a_point_marks_it_in_both_projections(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    document = projection_document()
    picture = document["evals"][0]["projection"]
    picture["methods"]["umap"] = {"seed": 0, "version": "0.5", "note": None}
    for point in picture["points"]:
        point["umap"] = [point["pca"][1], point["pca"][0]]
    report = _written(tmp_path_factory, document)
    with visiting(browser, report, *LAPTOP) as seen:
        seen.page.locator('#map-0-0-umap [data-p="2"]').hover()
        assert _marked(seen.page) == ["2", "2"]  # PCA's q3 and UMAP's
        assert seen.page.locator(".pmap .point-info").inner_text() == _title(2)
    assert seen.errors == []
