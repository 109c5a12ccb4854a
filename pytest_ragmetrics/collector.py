"""Python's cyclic garbage collector, paused for a burst of allocations that outlive it.

Building many objects that all stay (a dataset's rows, the ranks of 100,000 queries)
starts collection after collection, and each full one walks everything the process
holds again, to find nothing: none of those objects is in a reference cycle, and
reference counting frees the temporaries at once. ``collector_paused`` suspends the
collector for such a block and resumes it when the block ends, also on an error; it
leaves a collector that was already off alone.
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
