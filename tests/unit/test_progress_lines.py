"""The progress lines of long work: rewritten in place on a terminal where nothing else
writes, whole lines per tenth on a terminal and per quarter off one, the totals at the end.
Expected lines by hand from the step rule ``steps * done // total``."""

from __future__ import annotations

from pytest_ragmetrics.progress import LineProgress, RateProgress, duration, per_second


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


# -- RateProgress: many small units, their rate and the time left ------------------------


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def rows(in_place: bool, total: int, share: int = 1) -> tuple[RateProgress, list[str], Clock]:
    written: list[str] = []
    clock = Clock()
    progress = RateProgress(
        written.append, in_place, total, name="bulk rows", share=share, clock=clock
    )
    return progress, written, clock


def test_durations_and_rates_for_people() -> None:
    assert [duration(s) for s in (0, 0.4, 44.6, 60, 185, 3599.6, 7620, -3)] == [
        "0 s", "0 s", "45 s", "1 min 00 s", "3 min 05 s", "1 h 00 min", "2 h 07 min", "0 s",
    ]  # fmt: skip
    assert [per_second(r) for r in (12345.4, 42.5, 10, 3.46, 2, 0.04)] == [
        "12345", "42", "10", "3.5", "2", "0.04",
    ]  # fmt: skip


def test_off_a_terminal_a_line_per_tenth_with_rate_and_time_left() -> None:
    # 20 rows, one every 0.5 s (2 rows/s); tenths at 2, 4, ..., 18; 20/20 is the last
    # line: 20 rows in 10 s. Time left at 2 done: 18 rows / 2 rows/s = 9 s.
    progress, written, clock = rows(False, 20)
    progress.start("20 row(s) in 1 bulk item(s)")
    progress.resume()
    for _ in range(20):
        clock.now += 0.5
        progress.count()
    assert written == [
        "ragmetrics: bulk rows: 20 row(s) in 1 bulk item(s)\n",
        *(
            f"ragmetrics: bulk rows: {d}/20 ({5 * d}%), 2 rows/s, {(20 - d) // 2} s left\n"
            for d in range(2, 20, 2)
        ),
        "ragmetrics: bulk rows: 20/20 (100%) in 10.0 s, 2 rows/s\n",
    ]
    assert progress.finished
    progress.finish()  # once only
    progress.pause(20)
    assert len(written) == 11


def test_counted_in_chunks_a_tenth_crossed_twice_is_one_line() -> None:
    # 1000 rows counted 256 at a time (a Ray task's rows): 256 (tenth 2), 512 (5),
    # 768 (7), then 1000, the last line; 4 s for 1000 rows: 250 rows/s.
    progress, written, clock = rows(False, 1000)
    progress.start("1000 row(s)")
    progress.resume()
    for chunk in (256, 256, 256, 232):
        clock.now += chunk / 250
        progress.count(chunk)
    assert written[1:] == [
        "ragmetrics: bulk rows: 256/1000 (25%), 250 rows/s, 3 s left\n",
        "ragmetrics: bulk rows: 512/1000 (51%), 250 rows/s, 2 s left\n",
        "ragmetrics: bulk rows: 768/1000 (76%), 250 rows/s, 1 s left\n",
        "ragmetrics: bulk rows: 1000/1000 (100%) in 4.0 s, 250 rows/s\n",
    ]


def test_the_rate_counts_only_the_time_spent_on_the_rows() -> None:
    # Two items of 5 rows, 1 s each, with 60 s of other tests in between: 10 rows in
    # 2 s, 5 rows/s. Pausing writes nothing off a terminal (no line is open).
    progress, written, clock = rows(False, 10)
    progress.start("10 row(s) in 2 bulk item(s)")
    for _ in range(2):
        progress.resume()
        clock.now += 1
        progress.count(5)
        progress.pause()
        clock.now += 60
    assert written[1:] == [
        "ragmetrics: bulk rows: 5/10 (50%), 5 rows/s, 1 s left\n",
        "ragmetrics: bulk rows: 10/10 (100%) in 2.0 s, 5 rows/s\n",
    ]


def test_pause_corrects_the_count_to_the_rows_that_ended() -> None:
    # An item of 4 rows that counted 1 before it stopped (a task lost on Ray): its 4 rows
    # are done when it ends; the second item's rows reach the total.
    progress, written, clock = rows(False, 8)
    progress.start("8 row(s) in 2 bulk item(s)")
    progress.resume()
    clock.now += 1
    progress.count(1)
    progress.pause(4)
    assert (progress.done, written[-1]) == (
        4,
        "ragmetrics: bulk rows: 4/8 (50%), 4 rows/s, 1 s left\n",
    )
    progress.resume()
    clock.now += 1
    progress.pause(8)
    assert written[-1] == "ragmetrics: bulk rows: 8/8 (100%) in 2.0 s, 4 rows/s\n"


def test_a_run_stopped_short_ends_with_what_was_done() -> None:
    progress, written, clock = rows(False, 100)
    progress.finish()  # never started: nothing to end
    assert written == []
    progress.start("100 row(s)")
    progress.resume()
    clock.now += 2
    progress.count(3)
    progress.finish()
    assert written[-1] == "ragmetrics: bulk rows: 3/100 (3%) in 2.0 s, 1.5 rows/s\n"


def test_an_xdist_workers_time_left_assumes_the_workers_go_equally_fast() -> None:
    # 2 workers share 40 rows; this one did 8 in 4 s (2 rows/s): 40 - 2 * 8 = 24 rows
    # left at 2 * 2 rows/s: 6 s. Past half the total, the time left is not known.
    progress, written, clock = rows(False, 40, share=2)
    progress.resume()
    clock.now += 4
    progress.count(8)
    assert written == ["ragmetrics: bulk rows: 8/40 (20%), 2 rows/s, 6 s left\n"]
    clock.now += 8
    progress.count(16)
    assert written[-1] == "ragmetrics: bulk rows: 24/40 (60%), 2 rows/s\n"


def test_in_place_redrawn_about_every_fifth_of_a_second_and_ended_before_others_write() -> None:
    # 64 rows/s (a row each 1/64 s, exact in binary): the first row draws the line (a new
    # line: no carriage return), then a redraw each 0.2 s, int(0.2 * 64) = 12 rows later;
    # pause draws once more and ends the line. Time left at 1 done: 999 / 64 = 15.6 s.
    progress, written, clock = rows(True, 1000)
    progress.start("1000 row(s) in 2 bulk item(s)")
    progress.resume()
    for _ in range(50):
        clock.now += 1 / 64
        progress.count()
    progress.pause()
    assert written == [
        "ragmetrics: bulk rows: 1000 row(s) in 2 bulk item(s)\n",
        "ragmetrics: bulk rows: 1/1000 (0%), 64 rows/s, 16 s left",
        "\rragmetrics: bulk rows: 13/1000 (1%), 64 rows/s, 15 s left",
        "\rragmetrics: bulk rows: 25/1000 (2%), 64 rows/s, 15 s left",
        "\rragmetrics: bulk rows: 37/1000 (3%), 64 rows/s, 15 s left",
        "\rragmetrics: bulk rows: 49/1000 (4%), 64 rows/s, 15 s left",
        "\rragmetrics: bulk rows: 50/1000 (5%), 64 rows/s, 15 s left",
        "\n",
    ]
    written.clear()
    clock.now += 60  # other tests: not the rows' time
    progress.resume()  # the next item: a line of its own
    clock.now += 1 / 64
    progress.count()
    assert written == ["ragmetrics: bulk rows: 51/1000 (5%), 64 rows/s, 15 s left"]


def test_in_place_a_shorter_line_covers_the_longer_one_and_the_total_ends_it() -> None:
    # 10 rows: 1 row in 100 s (0.01 rows/s: 9 rows left take 900 s), then 9 rows at
    # once: the last line (10 rows in 200 s), padded over the longer one.
    progress, written, clock = rows(True, 10)
    progress.start("10 row(s)")
    progress.resume()
    clock.now += 100
    progress.count()
    first = "ragmetrics: bulk rows: 1/10 (10%), 0.01 rows/s, 15 min 00 s left"
    assert written[1:] == [first]
    clock.now += 100
    progress.count(9)
    last = "ragmetrics: bulk rows: 10/10 (100%) in 200.0 s, 0.05 rows/s"
    assert written[2:] == [f"\r{last.ljust(len(first))}\n"]
