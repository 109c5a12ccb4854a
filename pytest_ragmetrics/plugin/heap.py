"""Keeping Python's cyclic garbage collector off what a run holds to its end.

pytest holds every collected item to the end of the run, and a row test's item holds its
row. The cyclic collector traverses every container it tracks at each full collection,
and full collections come more often the more a process allocates: in a run of 50,000
row tests, going over the same items and rows again and again was a third of what the
plugin added to the run (docs/performance.md, "Per-row cost"). So each time a dataset's
rows are parametrized, and again when the rows are about to run, the plugin moves what
the process holds into the collector's permanent generation (``gc.freeze``): later
collections pass over it, and what the rows create is collected as usual. Reference
counting is untouched: an object no longer referenced is freed at once, frozen or not;
only a reference cycle among frozen objects waits for the end of the run. At the very end
(the config's last cleanup, after pytest's own final collection) the plugin moves them
back (``gc.unfreeze``), so a process that runs pytest in-process, as ``pytester`` does,
gets its collector back as it was.

The plugin stands aside when the collector is disabled, or when something else in the
process froze objects before the run: it never undoes a freeze it did not make.
"""

from __future__ import annotations

import gc

import pytest

# Whether this run freezes (decided by its first ``hold``), and so thaws at its end.
FREEZES_KEY = pytest.StashKey[bool]()


def hold(config: pytest.Config) -> None:
    """Move what the process holds now into the collector's permanent generation, unless
    the collector is off or the process froze objects before this run did."""
    freezes = config.stash.get(FREEZES_KEY, None)
    if freezes is None:
        freezes = config.stash[FREEZES_KEY] = gc.isenabled() and gc.get_freeze_count() == 0
    if freezes:
        gc.freeze()


def holds(config: pytest.Config) -> bool:
    """Whether this run has frozen what it holds (``hold``)."""
    return config.stash.get(FREEZES_KEY, False)


def release(config: pytest.Config) -> None:
    """Give the collector back everything frozen, if this run froze anything."""
    if holds(config):
        gc.unfreeze()
        del config.stash[FREEZES_KEY]
