"""The test item this process is running, for the ``row`` and metric fixtures.

The ``row`` fixture needs the item it sets up (its row parameter, its stash, its other
fixtures), and so do the metric fixtures. pytest hands a fixture its item through
``request``; but once any fixture of a test asks for ``request``, pytest sets ``request``
up for every one of the test's items, building a fixture definition for it each time,
with a signature inspection: in a row test that was a good share of what the plugin
added to a row. So the hooks record the item whose run protocol is under way
(``running``), and these fixtures read it (``running_item``) instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import pytest

_RUNNING: ContextVar[pytest.Item | None] = ContextVar("ragmetrics_running_item", default=None)


@contextmanager
def running(item: pytest.Item) -> Iterator[None]:
    """``item`` is the running item for the block (its run protocol); the one before it
    (a run of pytest inside a test, as pytester's) is again after it."""
    token = _RUNNING.set(item)
    try:
        yield
    finally:
        _RUNNING.reset(token)


def running_item() -> pytest.Item:
    """The item whose run protocol is under way in this process."""
    item = _RUNNING.get()
    if item is None:
        raise RuntimeError("a pytest-ragmetrics fixture was set up outside a test's run protocol")
    return item
