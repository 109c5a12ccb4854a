"""An LLM judge over any OpenAI-compatible chat-completions endpoint, standard library only
(or over a function called in process, ``pytest_ragmetrics.judge.function``: the same
prompts, cache, parser and counts, with another transport; the HTTP properties below are
the endpoint's).

``LlmJudge.judge(name, fields)`` fills one of the judge's prompts
(``pytest_ragmetrics.judge.prompts``), sends it at temperature 0 and reads back one JSON
verdict (``pytest_ragmetrics.judge.verdicts``). The properties a CI run relies on:

* **Reproducible.** Replies are kept in a content-addressed cache
  (``pytest_ragmetrics.judge.cache``), so a re-run sends nothing and reports the same
  scores, latencies and token counts.
* **Strict.** A verdict is one JSON object of the expected shape, or an
  ``UnparseableVerdict``; nothing is coerced, and such a reply is not retried (at
  temperature 0 the same question gets the same answer).
* **Polite and bounded.** ``timeout`` bounds each request as a whole (connecting,
  sending, the complete reply), not each read, so a server trickling its reply cannot
  hold a call open. Transient faults (429, 5xx, timeouts, dropped connections,
  garbled bodies) are retried with exponential backoff that honours ``Retry-After``; at most
  ``concurrency`` requests are in flight across every process sharing the cache directory.
  An endpoint that cannot be reached at all is given up on once, for the rest of the run,
  rather than making every test wait through its retries.
* **Counted.** ``counts`` says what this process's judge did so far (verdicts asked of
  the endpoint, read from the cache, failed, and the time spent waiting on the endpoint),
  for the plugin's progress lines.
* **Secret-safe.** The API key is read from the environment at call time and never appears
  in a message, a ``repr``, a cache key or a cache file; server text is scrubbed of it.
  Nor does ``api_key_env``: a key pasted there by mistake can pass for a variable's name,
  so messages speak of "the variable named by [judge] api_key_env" and never quote it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import re
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, NoReturn, Protocol

from filelock import FileLock, Timeout

from pytest_ragmetrics.judge.cache import VerdictCache
from pytest_ragmetrics.judge.config import JudgeConfig, looks_like_key
from pytest_ragmetrics.judge.function import FunctionTransport
from pytest_ragmetrics.judge.prompts import (
    PLACEHOLDERS,
    PROMPT_NAMES,
    SYSTEM_MESSAGE,
    load_prompt,
)
from pytest_ragmetrics.judge.verdicts import (
    Call,
    JudgeCallFailed,
    JudgeError,
    JudgeUnreachable,
    Reply,
    UnparseableVerdict,
    Verdict,
    parse_verdict,
    token_count,
)

MAX_DELAY = 30.0  # seconds: no backoff or Retry-After wait is longer
_SLOT_POLL = 0.02  # seconds between attempts to take a concurrency slot
_CLIP = 500  # characters of a reply quoted in an UnparseableVerdict message
_ERROR_CLIP = 300  # characters of a server's error message quoted in an exception
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what a bearer token can hold


class _AttemptFailed(Exception):
    """One request failed; whether another attempt may help, and how soon."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool = True,
        connect: bool = False,
        timeout: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.connect = connect
        self.timeout = timeout
        self.retry_after = retry_after


@dataclass
class VerdictCounts:
    """What one process's judge did, verdict by verdict (every ``LlmJudge.judge`` call).

    ``asked``: verdicts whose reply came from the endpoint. ``cached``: read from the cache.
    ``failed``: no verdict (the call failed through its retries, was refused, the endpoint
    was given up on, or the reply is not a verdict); an unparseable reply counts here, not
    in ``asked``. ``endpoint_s``: wall time spent getting replies that were not cached,
    retries, backoff and waiting for a concurrency slot included.
    """

    asked: int = 0
    cached: int = 0
    failed: int = 0
    endpoint_s: float = 0.0

    @property
    def verdicts(self) -> int:
        return self.asked + self.cached + self.failed


class Transport(Protocol):
    """Where replies come from: an endpoint (``_HttpTransport``) or a function called in
    process (``FunctionTransport``)."""

    # Names the judge in messages ("LLM judge <model> at <url>").
    label: str
    # What identifies the source in a verdict's cache key, beside the request.
    identity: Mapping[str, str]

    def ask(self, name: str, request: Mapping[str, Any]) -> Reply:
        """The reply to ``request`` (prompt ``name``), or a ``JudgeError``."""
        ...


class LlmJudge:
    """Verdicts from an OpenAI-compatible chat endpoint, or from a function called in
    process (``[judge] function``); safe to use from several threads.

    ``cache_dir`` (None: no cache) holds replies under ``judge/`` and the cross-process
    concurrency slots under ``judge/slots/``; ``refresh`` ignores cached replies but still
    stores new ones. ``environ`` and ``sleep`` are injectable so tests neither set real
    variables nor wait through backoff.
    """

    def __init__(
        self,
        config: JudgeConfig,
        cache_dir: Path | None,
        *,
        refresh: bool = False,
        run_id: str = "",
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        directory = None if cache_dir is None else cache_dir / "judge"
        self._cache = None if directory is None else VerdictCache(directory, run_id, refresh)
        self._prompts = {name: Template(load_prompt(name, config.prompts)) for name in PROMPT_NAMES}
        self._lock = threading.Lock()
        self.counts = VerdictCounts()
        # The judge this one replaces, asked the same questions when the run compares them
        # (``--ragmetrics-judge-compare``; None otherwise).
        self.previous: LlmJudge | None = None
        # Chosen once: everything above the transport (prompts, cache, parser, counts) is
        # the same whichever answers.
        self._transport: Transport
        if config.function is not None:
            self._transport = FunctionTransport(config.model, config.function)
        else:
            environ = os.environ if environ is None else environ
            self._transport = _HttpTransport(config, directory, environ, sleep)

    @property
    def label(self) -> str:
        return self._transport.label

    def __repr__(self) -> str:
        return f"LlmJudge({self.label!r})"

    def judge(
        self, name: str, fields: Mapping[str, str], *, repeat: int = 0, fresh: bool = False
    ) -> Verdict:
        """The verdict of prompt ``name`` with ``fields`` filling its placeholders (exactly
        those). ``repeat`` 0, 1, 2, ... are independent verdicts on the same question (the
        ``repeats`` of ``[judge]``), each cached under its own index, 0 under the key every
        single verdict has; ``fresh`` ones (the consistency judgments) bypass the cache,
        read and write.

        With a cache, a lock per entry makes concurrent processes that need the same
        verdict ask once; with ``refresh``, entries of earlier runs (another ``run_id``)
        are ignored, and those this run wrote are reused."""
        if repeat < 0:
            raise ValueError(f"repeat must be 0 or more, got {repeat}")
        request = {
            "model": self.config.model,
            "messages": self._messages(name, fields),
            # 0, not 0.0, at the default: the cache keys of earlier runs stay valid.
            "temperature": self.config.temperature or 0,
            "max_tokens": self.config.max_tokens,
        }
        keyed = {**request, **self._transport.identity, "repeat": repeat}
        started = time.perf_counter()
        try:
            if fresh or self._cache is None:
                reply = self._transport.ask(name, request)
            else:
                reply = self._cache.reply(keyed, lambda: self._transport.ask(name, request))
        except JudgeError:
            self._count(started, cached=False, failed=True)
            raise
        try:
            score, reason = parse_verdict(name, reply.content)
        except ValueError as error:
            self._count(started, reply.call.cached, failed=True)
            raise UnparseableVerdict(
                f"{self.label}: the {name} reply is not a verdict ({error}): "
                f"{_clip(reply.content, _CLIP)!r}",
                reply.content,
                reply.call,
            ) from None
        self._count(started, reply.call.cached, failed=False)
        return Verdict(score, reason, reply.call)

    def _count(self, started: float, cached: bool, failed: bool) -> None:
        """Count one verdict in ``counts``; a reply not read from the cache adds the time
        since ``started``."""
        elapsed = time.perf_counter() - started
        with self._lock:
            counts = self.counts
            if failed:
                counts.failed += 1
            elif cached:
                counts.cached += 1
            else:
                counts.asked += 1
            if not cached:
                counts.endpoint_s += elapsed

    def _messages(self, name: str, fields: Mapping[str, str]) -> list[dict[str, str]]:
        if name not in PROMPT_NAMES:
            raise ValueError(f"unknown prompt {name!r}; expected one of {', '.join(PROMPT_NAMES)}")
        if set(fields) != PLACEHOLDERS[name]:
            raise ValueError(
                f"{name} takes fields {sorted(PLACEHOLDERS[name])}, got {sorted(fields)}"
            )
        for field, value in fields.items():
            if not isinstance(value, str):
                raise TypeError(f"{name} field {field!r} must be a string, got {value!r}")
        prompt = self._prompts[name].substitute(fields)
        return [{"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": prompt}]


class _HttpTransport:
    """Replies from an OpenAI-compatible chat-completions endpoint: retries, backoff, the
    timeout, the concurrency slots and the API key live here, and nowhere else."""

    def __init__(
        self,
        config: JudgeConfig,
        directory: Path | None,
        environ: Mapping[str, str],
        sleep: Callable[[float], None],
    ) -> None:
        assert config.base_url is not None  # JudgeConfig holds exactly one source
        self.config = config
        self.base_url = config.base_url
        self.label = f"LLM judge {config.model} at {config.base_url}"
        self.identity: Mapping[str, str] = {"base_url": config.base_url}
        self._directory = directory
        self._environ = environ
        self._sleep = sleep
        self._semaphore = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._unreachable: str | None = None
        parts = urllib.parse.urlsplit(config.base_url)
        self._host, self._port = parts.hostname or "", parts.port
        self._path = f"{parts.path}/chat/completions"
        # Built once: loading the trust store per request would cost more than the request.
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None

    def ask(self, name: str, request: Mapping[str, Any]) -> Reply:
        """The endpoint's reply, unless it was given up on earlier in this run."""
        self._raise_if_unreachable(None)
        return self._call(name, request)

    def _raise_if_unreachable(self, call: Call | None) -> None:
        with self._lock:
            message = self._unreachable
        if message is not None:
            raise JudgeUnreachable(message, call)

    def _give_up(self, message: str, call: Call | None) -> NoReturn:
        """Remember that the endpoint is unusable, so every later call fails at once."""
        with self._lock:
            if self._unreachable is None:
                self._unreachable = message
            message = self._unreachable
        raise JudgeUnreachable(message, call)

    def _api_key(self) -> str | None:
        # The variable's name is never quoted: a key pasted in its place passes for a name.
        variable = self.config.api_key_env
        if variable is None:
            return None
        # Stripped: a secret pasted with its trailing newline is still the same key.
        key = _Secret(self._environ.get(variable, "").strip())
        if not key:
            hint = (
                "; the name looks like an API key rather than a variable name: put the key "
                "in an environment variable and give api_key_env that variable's name"
                if looks_like_key(variable)
                else ""
            )
            self._give_up(f"the variable named by [judge] api_key_env is not set{hint}", None)
        if not _HEADER_SAFE.fullmatch(key):
            # Checked here because http.client would reject the header with the key in its
            # message.
            self._give_up(
                "the variable named by [judge] api_key_env does not hold an API key "
                "(its value has spaces, control or non-ASCII characters)",
                None,
            )
        return key

    def _call(self, name: str, request: Mapping[str, Any]) -> Reply:
        """Send ``request`` until a chat completion comes back or the retries run out."""
        key = self._api_key()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key is not None:
            headers["Authorization"] = _Secret(f"Bearer {key}")
        body = json.dumps(request).encode("utf-8")
        spent_ms, attempts, connect_failures, timeouts = 0.0, 0, 0, 0
        failure: _AttemptFailed | None = None
        for attempt in range(self.config.retries + 1):
            if failure is not None:  # the slot is free while we wait
                self._sleep(self._delay(attempt, failure.retry_after))
                self._raise_if_unreachable(Call(False, spent_ms, attempts, 0, 0))
            with self._slot():
                started = time.perf_counter()
                try:
                    content, usage = self._attempt(body, headers, key)
                    failure = None
                except _AttemptFailed as error:
                    failure = error
                elapsed_ms = (time.perf_counter() - started) * 1000
            attempts += 1
            spent_ms += elapsed_ms
            if failure is None:
                return Reply(content, Call(False, elapsed_ms, attempts, *usage))
            connect_failures += failure.connect
            timeouts += failure.timeout
            if not failure.retryable:
                raise JudgeCallFailed(
                    f"{self.label}: the {name} call was refused: {failure.reason}",
                    Call(False, spent_ms, attempts, 0, 0),
                )
        assert failure is not None  # the loop runs at least once and returns on success
        spent = Call(False, spent_ms, attempts, 0, 0)
        # Never connected, or connected and never answered: the endpoint is not usable,
        # and every later row would wait out the same timeouts.
        if connect_failures + timeouts == attempts:
            self._give_up(
                f"LLM judge unreachable at {self.base_url}: {failure.reason}; "
                "no further judge calls are made in this run",
                spent,
            )
        raise JudgeCallFailed(
            f"{self.label}: the {name} call failed {attempts} times; last: {failure.reason}",
            spent,
        )

    def _delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds before retry number ``retry`` (1-based): backoff doubling per retry, or
        the server's Retry-After when longer, never more than ``MAX_DELAY``."""
        delay = min(MAX_DELAY, self.config.backoff * 2.0 ** min(retry - 1, 64))
        if retry_after is not None:
            delay = max(delay, min(MAX_DELAY, retry_after))
        return delay

    @contextlib.contextmanager
    def _slot(self) -> Iterator[None]:
        """One of ``concurrency`` places for a request in flight: lock files shared by every
        process using the cache directory, or a semaphore of this judge without one."""
        if self._directory is None:
            with self._semaphore:
                yield
            return
        slots = self._directory / "slots"
        slots.mkdir(parents=True, exist_ok=True)
        while True:
            for number in range(self.config.concurrency):
                lock = FileLock(slots / f"{number}.lock")
                try:
                    lock.acquire(timeout=0)
                except Timeout:
                    continue
                try:
                    yield
                finally:
                    lock.release()
                return
            time.sleep(_SLOT_POLL)  # real time, not the injected sleep: this is not backoff

    def _attempt(
        self, body: bytes, headers: Mapping[str, str], key: str | None
    ) -> tuple[str, tuple[int, int]]:
        """One request: the reply's content and (prompt, completion) token counts, or an
        ``_AttemptFailed`` saying whether to try again."""
        status, retry_after, raw = self._post(body, headers)
        text = raw.decode("utf-8", errors="replace")
        if 200 <= status < 300:
            content, usage = _completion(text)
            return _scrub(content, key), usage
        message = _clip(_scrub(_error_message(text), key), _ERROR_CLIP)
        reason = f"HTTP {status}: {message}" if message else f"HTTP {status}"
        if status == 429 or 500 <= status <= 599:
            raise _AttemptFailed(reason, retry_after=_seconds(retry_after))
        raise _AttemptFailed(reason, retryable=False)

    def _post(self, body: bytes, headers: Mapping[str, str]) -> tuple[int, str | None, bytes]:
        """POST ``body``: ``(status, Retry-After header, reply body)``, all of it within
        ``timeout``: connecting, sending, the headers and the body together, however
        slowly the server sends them (each socket read is bounded by ``timeout`` too)."""
        connection: http.client.HTTPConnection
        timeout = self.config.timeout
        if self._tls is not None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=timeout, context=self._tls
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        deadline = _Deadline(connection, timeout)
        try:
            try:
                connection.connect()
            except OSError as error:  # refused, unknown host, connect timeout, TLS failure
                slow = isinstance(error, TimeoutError) or deadline.passed()
                reason = f"no connection within {timeout:g} s" if slow else _describe(error)
                raise _AttemptFailed(f"cannot connect: {reason}", connect=True) from None
            try:
                deadline.check()  # connected as the time ran out: the socket was not cut
                connection.request("POST", self._path, body, dict(headers))
                response = connection.getresponse()
                reply = response.status, response.getheader("Retry-After"), response.read()
                deadline.check()  # a reply cut short by the deadline may look complete
                return reply
            except TimeoutError:
                raise _AttemptFailed(f"no reply within {timeout:g} s", timeout=True) from None
            except (OSError, http.client.HTTPException) as error:
                if deadline.passed():
                    raise _AttemptFailed(f"no reply within {timeout:g} s", timeout=True) from None
                # RemoteDisconnected, ConnectionResetError, BrokenPipeError, IncompleteRead...
                raise _AttemptFailed(f"connection lost: {_describe(error)}") from None
        finally:
            deadline.cancel()
            connection.close()


class _Deadline:
    """A timer that cuts ``connection``'s socket once ``seconds`` have passed, so a server
    trickling its reply cannot hold the call open: every read waiting on the socket then
    returns at once, and ``check`` raises ``TimeoutError``."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self._connection = connection
        self._passed = threading.Event()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def _cut(self) -> None:
        self._passed.set()  # before the socket is read: one connected later is checked
        sock = self._connection.sock
        if sock is not None:
            # The plain socket's shutdown, also under TLS: it wakes a blocked read in
            # another thread, where close() would not.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def passed(self) -> bool:
        return self._passed.is_set()

    def check(self) -> None:
        if self._passed.is_set():
            raise TimeoutError

    def cancel(self) -> None:
        self._timer.cancel()


def _completion(text: str) -> tuple[str, tuple[int, int]]:
    """Content and token usage of a chat-completion body; anything else is a server fault,
    retried like a 5xx."""
    try:
        document = json.loads(text)
        content = document["choices"][0]["message"]["content"]
    except (ValueError, LookupError, TypeError) as error:
        raise _AttemptFailed(f"the reply is not a chat completion ({_describe(error)})") from None
    if not isinstance(content, str):
        raise _AttemptFailed("the reply is not a chat completion (content is not a string)")
    usage = document.get("usage")
    if not isinstance(usage, dict):
        return content, (0, 0)
    return content, (
        token_count(usage.get("prompt_tokens")),
        token_count(usage.get("completion_tokens")),
    )


def _error_message(text: str) -> str:
    """The message of an error body: OpenAI's ``{"error": {"message": ...}}`` and its
    common variants, else the body itself."""
    try:
        document = json.loads(text)
    except ValueError:
        return text.strip()
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    if isinstance(document, dict) and isinstance(document.get("message"), str):
        return str(document["message"])
    return text.strip()


def _seconds(header: str | None) -> float | None:
    """A Retry-After given in seconds; None for none, or for the HTTP-date form."""
    if header is None:
        return None
    try:
        seconds = float(header.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class _Secret(str):
    """A string that is sent as it is but shown as ``***``: the API key and the header
    that carries it, so no traceback (``pytest -l`` shows locals) or log can print them."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "'***'"


def _scrub(text: str, key: str | None) -> str:
    """``text`` with every occurrence of the API key replaced by ``***``."""
    return text.replace(key, "***") if key else text


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _describe(error: BaseException) -> str:
    detail = str(error)
    return f"{type(error).__name__}: {detail}" if detail else type(error).__name__
