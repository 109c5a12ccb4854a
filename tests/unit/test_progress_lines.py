"""The progress lines of long work: rewritten in place on a terminal where nothing else
writes, whole lines per tenth on a terminal and per quarter off one, the totals at the end.
Expected lines by hand from the step rule ``steps * done // total``."""

from __future__ import annotations

from pytest_ragmetrics.progress import LineProgress


def run(progress: LineProgress, total: int) -> list[str]:
    written: list[str] = []
    progress.write = written.append
    progress.start(f"{total} thing(s) to do")
    for done in range(1, total):
        progress.advance(done, total, f"{done}/{total} done")
    progress.finish(f"{total}/{total} done, 0 error(s), 1.5 s")
    return written


def test_off_a_terminal_a_line_per_quarter() -> None:
    # 4 * done // 10 steps up at done 3 (1), 5 (2) and 8 (3); 10/10 is the last line.
    lines = run(LineProgress(print, tty=False), 10)
    assert lines == [
        "ragmetrics: 10 thing(s) to do\n",
        "ragmetrics: 3/10 done\n",
        "ragmetrics: 5/10 done\n",
        "ragmetrics: 8/10 done\n",
        "ragmetrics: 10/10 done, 0 error(s), 1.5 s\n",
    ]


def test_on_a_terminal_while_tests_run_a_line_per_tenth() -> None:
    # 10 * done // 20 steps up at every even done.
    lines = run(LineProgress(print, tty=True, prefix="[gw1] ragmetrics"), 20)
    assert lines[0] == "[gw1] ragmetrics: 20 thing(s) to do\n"
    assert lines[1:-1] == [f"[gw1] ragmetrics: {done}/20 done\n" for done in range(2, 20, 2)]
    assert lines[-1] == "[gw1] ragmetrics: 20/20 done, 0 error(s), 1.5 s\n"
    assert all(not line.startswith("\r") for line in lines)


def test_in_place_on_a_terminal_one_line_is_rewritten() -> None:
    text = "".join(run(LineProgress(print, tty=True, in_place=True), 4))
    assert text == (
        "ragmetrics: 4 thing(s) to do\n"
        "\rragmetrics: [######..................] 1/4 done"
        "\rragmetrics: [############............] 2/4 done"
        "\rragmetrics: [##################......] 3/4 done"
        "\nragmetrics: 4/4 done, 0 error(s), 1.5 s\n"
    )


def test_in_place_is_whole_lines_off_a_terminal() -> None:
    lines = run(LineProgress(print, tty=False, in_place=True), 4)
    assert lines[1:3] == ["ragmetrics: 1/4 done\n", "ragmetrics: 2/4 done\n"]


def test_crossing_several_steps_at_once_writes_one_line() -> None:
    written: list[str] = []
    progress = LineProgress(written.append, tty=False)
    progress.advance(3, 4, "3/4")  # quarters 1, 2 and 3 at once
    progress.advance(3, 4, "3/4 again")
    assert written == ["ragmetrics: 3/4\n"]


def test_beyond_the_total_counts_as_the_total_and_an_empty_total_writes_nothing() -> None:
    written: list[str] = []
    progress = LineProgress(written.append, tty=False)
    progress.advance(5, 0, "nothing to do")
    progress.advance(7, 4, "7 of an estimated 4")
    progress.advance(9, 4, "9 of an estimated 4")
    assert written == ["ragmetrics: 7 of an estimated 4\n"]
