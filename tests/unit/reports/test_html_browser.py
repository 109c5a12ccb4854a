"""The HTML report in a real headless browser: Debian's /usr/bin/chromium driven by
playwright (never a downloaded browser). Planted script and event-handler payloads must
not run, must show as text, and the page must fetch nothing but itself.

Without chromium or playwright these tests skip, except under CI (``CI`` set), where they
fail: CI installs chromium, so a skip there would hide a broken setup.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from pytest_ragmetrics.reports.html import render_html

from test_html import plant, rename_system, study_document

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Route

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
TITLE = "pytest-ragmetrics report"
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


@pytest.fixture
def visit(browser: Browser, report: Path) -> Iterator[Visit]:
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
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
    yield seen
    context.close()


def _open_every_row(page: Page) -> None:
    page.locator("details").evaluate_all("(all) => all.forEach((d) => { d.open = true; })")


def test_nothing_planted_runs(visit: Visit) -> None:
    page = visit.page
    _open_every_row(page)
    page.wait_for_timeout(200)  # give an event handler, had one slipped in, time to fire
    assert visit.errors == []
    assert page.evaluate("() => window.__ragmetrics_pwned") is None
    assert page.title() == TITLE


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
