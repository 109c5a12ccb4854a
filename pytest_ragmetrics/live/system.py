"""A live system under test: the plugin calls it per row and scores what it returns.

A user hands the plugin their system as a ``LiveSystem`` (a name, a version, its
configuration and a callable ``question -> output fields``) from a ``ragmetrics_system``
fixture, and names the systems an eval runs in its marker
(``ragmetrics(dataset="questions.jsonl", systems=["topk", "mmr"])``). The dataset then
holds questions (id, question, gold, relevant, ...); the system adds the output fields
(``answer``, ``contexts``, ``retrieved``, ``tokens``, ``latency_ms``, ``telemetry``) and the
row is scored by the same metric fixtures as a recorded one.

The system's fingerprint hashes its name, version and configuration: the disk cache of
its outputs (``pytest_ragmetrics.live.cache``) is keyed by it, so changing any of them
calls the system again.

A system that cannot be reached is given up on once per process: when a call fails with a
connection-level error (``unreachable``), every later call to the same fingerprint in the
process errors at once with the first error, instead of waiting out the same timeout on
every row; cached outputs are still served, and other systems are still called. A call is
never retried: the plugin cannot know whether a call is safe to repeat, and the system's
own HTTP client is where retries belong.
"""

from __future__ import annotations

import errno
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_ragmetrics.data.dataset import validate_fields
from pytest_ragmetrics.files import canonical_json, json_digest, loads_finite

# The fields a live system produces; a question set must not carry them.
OUTPUT_FIELDS = ("answer", "contexts", "retrieved", "tokens", "latency_ms", "telemetry")


class LiveSystemError(Exception):
    """The system failed on a row or returned something that is not an output; the row
    errors with this message, and nothing is cached."""


class LiveSystemUnreachable(LiveSystemError):
    """The system could not be reached; it is not called again in this process."""

    def __init__(self, message: str, cause: str) -> None:
        super().__init__(message)
        self.cause = cause  # the first error, as "Type: message"


# OSError numbers that say the host or network cannot be reached; the ConnectionError
# subclasses (refused, reset, aborted, broken pipe) carry their own numbers.
_UNREACHABLE_ERRNOS = frozenset(
    {errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH, errno.EHOSTDOWN, errno.ETIMEDOUT}
)
_CHAIN_LIMIT = 16  # exceptions followed through __cause__ / __context__ / URLError.reason


def unreachable(error: BaseException) -> bool:
    """Whether ``error`` says the system cannot be reached at all, rather than that it
    failed on this one question.

    It does when it, or an exception it was raised from (``__cause__``, or
    ``__context__`` unless suppressed, or a ``urllib.error.URLError``'s ``reason``), is a
    ``ConnectionError`` (refused, reset, aborted, broken pipe; http.client's
    ``RemoteDisconnected`` is one), a ``TimeoutError`` (``socket.timeout`` is one), a
    ``socket.gaierror`` (the host name does not resolve) or an ``OSError`` whose number
    says the network or host is unreachable. Following the chain catches the wrappers of
    requests, httpx and urllib. Anything else (a ``ValueError`` from the system's code, an
    HTTP error status, a missing file) is a failure of that question only.
    """
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending and len(seen) < _CHAIN_LIMIT:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionError | TimeoutError | socket.gaierror):
            return True
        if isinstance(current, OSError) and current.errno in _UNREACHABLE_ERRNOS:
            return True
        reason = getattr(current, "reason", None)  # urllib.error.URLError wraps its cause
        if isinstance(reason, BaseException):
            pending.append(reason)
        if current.__cause__ is not None:
            pending.append(current.__cause__)
        elif current.__context__ is not None and not current.__suppress_context__:
            pending.append(current.__context__)
    return False


def describe_error(error: BaseException) -> str:
    """``Type: message``, or the type alone for an exception without a message."""
    detail = str(error)
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__


@dataclass(frozen=True)
class LiveSystem:
    """A system under test.

    ``call(question)`` returns the output fields as a mapping; ``answer`` is required, the
    others as the eval's metrics need them. ``latency_ms`` is measured around the call when
    the output does not give it. ``version`` and ``config`` (JSON-able) are what the
    fingerprint hashes: bump the version, or change the configuration, whenever the
    system's outputs may change, or the cache serves the old ones.
    """

    name: str
    call: Callable[[str], Mapping[str, Any]] = field(repr=False)
    version: str = "1"
    config: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError("LiveSystem name must be a non-empty string")
        if not callable(self.call):
            raise TypeError(f"LiveSystem {self.name!r}: call must be callable(question)")
        try:
            canonical_json({"version": self.version, "config": self.config}, ascii_only=False)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"LiveSystem {self.name!r}: version and config must be JSON-able ({error})"
            ) from None

    @property
    def fingerprint(self) -> str:
        """16 hex digits identifying the system's name, version and configuration."""
        identity = {"name": self.name, "version": self.version, "config": self.config}
        return json_digest(identity, ascii_only=False, hex_digits=16)


def systems_by_name(provided: Any, where: str) -> dict[str, LiveSystem]:
    """The systems a ``ragmetrics_system`` fixture returned: one ``LiveSystem``, several,
    or a mapping of names to them."""
    if isinstance(provided, LiveSystem):
        found: Iterable[Any] = [provided]
    elif isinstance(provided, Mapping):
        found = provided.values()
    elif isinstance(provided, Iterable) and not isinstance(provided, str | bytes):
        found = list(provided)
    else:
        found = [provided]
    systems: dict[str, LiveSystem] = {}
    for system in found:
        if not isinstance(system, LiveSystem):
            raise TypeError(
                f"{where}: the ragmetrics_system fixture must return a LiveSystem, several, "
                f"or a mapping of names to them; got {type(system).__name__}"
            )
        systems[system.name] = system
    return systems


@dataclass(frozen=True)
class LiveOutput:
    """What a system returned for one question, and how it was obtained."""

    fields: Mapping[str, Any]
    system: str
    fingerprint: str
    cached: bool

    def describe(self) -> dict[str, Any]:
        """The row's ``live`` detail in the reports."""
        return {"system": self.system, "fingerprint": self.fingerprint, "cached": self.cached}


def check_output(output: Any, system: str) -> dict[str, Any]:
    """The output as plain fields, or ``LiveSystemError`` saying what is wrong."""
    if not isinstance(output, Mapping):
        raise LiveSystemError(
            f"system {system!r} returned {type(output).__name__}; expected a mapping of "
            f"output fields ({', '.join(OUTPUT_FIELDS)})"
        )
    fields = dict(output)
    unknown = sorted(set(fields) - set(OUTPUT_FIELDS))
    if unknown:
        raise LiveSystemError(
            f"system {system!r} returned unknown field(s) {', '.join(unknown)}; a system "
            f"returns {', '.join(OUTPUT_FIELDS)} (free-form data goes in telemetry)"
        )
    if "answer" not in fields:
        raise LiveSystemError(f"system {system!r} returned no answer")
    problems = validate_fields(fields)
    if problems:
        detail = "; ".join(f"{p.field}: {p.message}" for p in problems)
        raise LiveSystemError(f"system {system!r} returned a bad output: {detail}")
    try:
        # The cache and the saved outputs store JSON: check now, once, not at write time.
        loads_finite(
            canonical_json(fields, ascii_only=False), refusal="is not a number an output may hold"
        )
    except (TypeError, ValueError) as error:
        raise LiveSystemError(
            f"system {system!r} returned an output that is not JSON-able: {error}"
        ) from None
    return fields


def call_system(system: LiveSystem, question: str) -> dict[str, Any]:
    """Call the system once; its output, with ``latency_ms`` measured if it gave none.
    ``LiveSystemUnreachable`` when the error it raised says it cannot be reached."""
    started = time.perf_counter()
    try:
        output = system.call(question)
    except Exception as error:
        raised = f"system {system.name!r} raised {describe_error(error)}"
        if unreachable(error):
            raise LiveSystemUnreachable(
                f"{raised}; it cannot be reached, so it is not called again in this run",
                describe_error(error),
            ) from error
        raise LiveSystemError(raised) from error
    elapsed = (time.perf_counter() - started) * 1000.0
    fields = check_output(output, system.name)
    fields.setdefault("latency_ms", round(elapsed, 3))
    return fields
