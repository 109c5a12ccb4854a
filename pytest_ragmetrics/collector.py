"""Keeping Python's cyclic garbage collector off objects that outlive the code making them.

The cyclic collector traverses every container it tracks at each full collection, and full
collections come more often the more a process allocates. Objects that are built in great
numbers and then stay (a dataset's rows, the ranks of 100,000 queries, the items of a
50,000-row run) are walked again and again, to find nothing: none of them is in a
reference cycle, and reference counting frees the temporaries at once. Two ways out:

- ``collector_paused``: the collector suspended for a burst of such allocations, resumed
  when the block ends (also on an error); a collector that was off stays off.
- ``Freezer``: what a pytest run holds to its end moved into the collector's permanent
  generation (``gc.freeze``). pytest holds every collected item to the end of the run,
  and a row test's item holds its row: going over them again and again was a third of
  what the plugin added to a run of 50,000 row tests (docs/performance.md, "Per-row
  cost"). So the plugin freezes what the process holds each time a dataset's rows are
  parametrized, again when the rows are about to run, and on the controller each time a
  bulk item's records have been gathered (they too live to the end: walking them was half
  the CPU of a run of 200,000 bulk rows): later collections pass over it, and what the
  rows create is collected as usual. Reference counting is untouched: an
  object no longer referenced is freed at once, frozen or not; only a reference cycle
  among frozen objects waits for the end of the run. At the very end (the config's last
  cleanup, after pytest's own final collection) the plugin moves them back
  (``gc.unfreeze``), so a process that runs pytest in-process, as ``pytester`` does, gets
  its collector back as it was. It stands aside when the collector is disabled, or when
  something else in the process froze objects before the run: it never undoes a freeze
  it did not make.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block, if it was running."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


class Freezer:
    """One run's freezes: whether it freezes is decided by its first ``hold``."""

    def __init__(self) -> None:
        self._freezes: bool | None = None

    def hold(self, *, young_garbage: bool = False) -> None:
        """Move what the process holds now into the collector's permanent generation,
        unless the collector is off or the process froze objects before this run did.
        ``young_garbage``: collect the young generations first, so that reference cycles
        the last stretch of work left (a failed row's traceback and its frames) are freed
        now rather than frozen with what lives on (a cheap collection: it walks only what
        was made since the last one)."""
        if self._freezes is None:
            self._freezes = gc.isenabled() and gc.get_freeze_count() == 0
        if self._freezes:
            if young_garbage:
                gc.collect(1)
            gc.freeze()

    @property
    def holds(self) -> bool:
        """Whether this run has frozen what it holds (``hold``)."""
        return bool(self._freezes)

    def release(self) -> None:
        """Give the collector back everything frozen, if this run froze anything."""
        if self._freezes:
            gc.unfreeze()
        self._freezes = None
