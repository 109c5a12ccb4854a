"""The encoding progress line: rewritten in place on a tty, a line per quarter off it."""

from __future__ import annotations

from pytest_ragmetrics.embeddings.prepare import PrepareStats
from pytest_ragmetrics.embeddings.progress import EncodingProgress
from pytest_ragmetrics.progress import LineProgress


def run(tty: bool) -> str:
    written: list[str] = []
    progress = EncodingProgress(LineProgress(written.append, tty, in_place=True))
    progress.start(8, "model")
    for done in range(2, 9, 2):
        progress.advance(done, 8)
    progress.finish(PrepareStats(texts=8, encoded=8, encode_s=1.0))
    return "".join(written)


def test_on_a_tty_one_line_is_rewritten() -> None:
    output = run(tty=True)
    assert output.startswith("ragmetrics: encoding 8 new text(s) with model\n")
    assert "\rragmetrics: [######..................] encoded 2/8" in output
    assert "\rragmetrics: [########################] encoded 8/8\n" in output
    assert output.endswith(
        "ragmetrics: 8 unique text(s), 0 from cache, 8 encoded in 1.0 s "
        "(+ import 0.0 s, model load 0.0 s)\n"
    )


def test_off_a_tty_a_line_per_quarter() -> None:
    lines = run(tty=False).splitlines()
    assert lines == [
        "ragmetrics: encoding 8 new text(s) with model",
        "ragmetrics: encoded 2/8",
        "ragmetrics: encoded 4/8",
        "ragmetrics: encoded 6/8",
        "ragmetrics: encoded 8/8",
        "ragmetrics: 8 unique text(s), 0 from cache, 8 encoded in 1.0 s "
        "(+ import 0.0 s, model load 0.0 s)",
    ]
