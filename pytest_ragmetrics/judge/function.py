"""An in-process judge: ``[judge] function = "module:attribute"`` in place of an endpoint.

The attribute is a callable ``(messages) -> str`` given the chat messages an endpoint
would get and returning the reply's content, the JSON verdict the strict parser reads.
It lets an eval run a judge where no server is (an offline CI job, a stand-in judge in an
example, a local model loaded in process), while everything above the transport stays
the same: prompts, the verdict cache, repeats, the parser and the accounting.

What does not apply, since no request is sent: ``timeout`` (a call runs until it
returns), ``retries`` and ``backoff`` (an exception is the row's error at once),
``concurrency``, and tokens (counted 0). The latency of a call is measured.

The module is imported on the first verdict, not when the configuration is read, so a run
that judges nothing never imports it; it is looked up on ``sys.path`` as pytest has set it
by then (the rootdir and the folders of conftest.py files and test modules, in pytest's
default ``prepend`` import mode). A module or attribute that cannot be found fails every
verdict of the run with the same message, as an unreachable endpoint does.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from pytest_ragmetrics.judge.verdicts import Call, JudgeCallFailed, JudgeUnreachable, Reply

# What the callable is given: the request's messages, [{"role": ..., "content": ...}, ...].
JudgeFunction = Callable[[list[dict[str, str]]], str]


class FunctionTransport:
    """Replies from ``module:attribute`` called in process, imported on first use."""

    def __init__(self, model: str, reference: str) -> None:
        self.reference = reference
        self.label = f"LLM judge {model} (function {reference})"
        # In the cache key where an endpoint's base_url is: another function is another
        # judge, even under the same model name.
        self.identity: Mapping[str, str] = {"function": reference}
        self._lock = threading.Lock()
        self._function: JudgeFunction | None = None
        self._missing: str | None = None

    def ask(self, name: str, request: Mapping[str, Any]) -> Reply:
        """The function's reply to ``request``'s messages; what it raises, or a reply that
        is not text, is a failed call (the row errors with the message)."""
        function = self._load()
        messages = [dict(message) for message in request["messages"]]
        started = time.perf_counter()
        try:
            content = function(messages)
        except Exception as error:  # the user's code: any failure is this verdict's
            elapsed_ms = (time.perf_counter() - started) * 1000
            raise JudgeCallFailed(
                f"{self.label}: the {name} call raised {type(error).__name__}: {error}",
                Call(False, elapsed_ms, 1, 0, 0),
            ) from error
        elapsed_ms = (time.perf_counter() - started) * 1000
        if not isinstance(content, str):
            raise JudgeCallFailed(
                f"{self.label}: the {name} call returned {type(content).__name__}, "
                "expected the reply's text (str)",
                Call(False, elapsed_ms, 1, 0, 0),
            )
        return Reply(content, Call(False, elapsed_ms, 1, 0, 0))

    def _load(self) -> JudgeFunction:
        """The callable, imported once; a reference that cannot be resolved is remembered,
        so every later verdict fails at once with the same message."""
        with self._lock:
            if self._function is None and self._missing is None:
                try:
                    self._function = resolve(self.reference)
                except LookupError as error:
                    self._missing = f"[judge] function: {error}"
            if self._missing is not None:
                raise JudgeUnreachable(self._missing)
            assert self._function is not None
            return self._function


def resolve(reference: str) -> JudgeFunction:
    """The callable ``reference`` ("package.module:attribute.path") names; a
    ``LookupError`` saying what was looked for when it cannot be found."""
    module_name, _, attributes = reference.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is not None and module_name.startswith(error.name):
            raise LookupError(
                f"no module {module_name!r} on sys.path (looked for {reference!r}; the module "
                "must be importable from the project's rootdir or a conftest.py folder)"
            ) from None
        raise LookupError(f"importing {module_name!r} failed: {error}") from error
    except Exception as error:  # the module's own code failed while importing
        raise LookupError(
            f"importing {module_name!r} failed: {type(error).__name__}: {error}"
        ) from error
    for attribute in attributes.split("."):
        if not hasattr(target, attribute):
            raise LookupError(f"module {module_name!r} has no attribute {attributes!r}")
        target = getattr(target, attribute)
    if not callable(target):
        raise LookupError(f"{reference!r} is a {type(target).__name__}, not a callable")
    return target  # type: ignore[no-any-return]
