"""An LLM judge over any OpenAI-compatible chat-completions endpoint, standard library only.

``LlmJudge.judge(name, fields)`` fills one of the shipped prompts (``prompts/<name>.txt``,
replaceable per project), sends it at temperature 0 and reads back one JSON verdict. The
properties a CI run relies on:

* **Reproducible.** Replies are kept in a content-addressed cache keyed by everything that
  decides the reply (endpoint, model, messages, temperature, max_tokens, repeat), so a re-run
  sends nothing and reports the same scores, latencies and token counts. The cache holds the
  raw reply text, not the parsed verdict: an unparseable reply is replayed as the same error,
  and a parser change applies to old replies.
* **Strict.** A verdict is one JSON object of the expected shape, or an
  ``UnparseableVerdict``; nothing is coerced, and such a reply is not retried (at
  temperature 0 the same question gets the same answer).
* **Polite and bounded.** Transient faults (429, 5xx, timeouts, dropped connections,
  garbled bodies) are retried with exponential backoff that honours ``Retry-After``; at most
  ``concurrency`` requests are in flight across every process sharing the cache directory.
  An endpoint that cannot be reached at all is given up on once, for the rest of the run,
  rather than making every test wait through its retries.
* **Secret-safe.** The API key is read from the environment at call time and never appears
  in a message, a ``repr``, a cache key or a cache file; server text is scrubbed of it.
  Nor does ``api_key_env``: a key pasted there by mistake can pass for a variable's name,
  so messages speak of "the variable named by [judge] api_key_env" and never quote it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import http.client
import json
import math
import os
import re
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, NoReturn

from filelock import FileLock, Timeout

from pytest_ragmetrics.files import write_atomic

PROMPT_NAMES = (
    "faithfulness_judge",
    "answer_relevance",
    "answer_correctness",
    "e2e_score",
    "entailment",
)
# The inclusive range of each scored prompt's "score"; "entailment" answers true/false.
SCALES: dict[str, tuple[float, float]] = {
    "faithfulness_judge": (0.0, 1.0),
    "answer_relevance": (0.0, 1.0),
    "answer_correctness": (1.0, 5.0),
    "e2e_score": (0.0, 1.0),
}
# The ``string.Template`` placeholders of each prompt: an override must use all of them and
# no others, so a prompt can neither drop the answer it judges nor ask for a field no
# caller fills.
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "faithfulness_judge": frozenset({"question", "answer", "contexts"}),
    "answer_relevance": frozenset({"question", "answer"}),
    "answer_correctness": frozenset({"question", "answer", "gold"}),
    "e2e_score": frozenset({"question", "answer", "gold"}),
    "entailment": frozenset({"premise", "hypothesis"}),
}
SYSTEM_MESSAGE = "You are a careful, strict evaluator. Reply with one JSON object and nothing else."

MAX_DELAY = 30.0  # seconds: no backoff or Retry-After wait is longer
CACHE_FORMAT = 1  # bumped when the layout of a cache entry changes; old entries are misses
_SLOT_POLL = 0.02  # seconds between attempts to take a concurrency slot
_CLIP = 500  # characters of a reply quoted in an UnparseableVerdict message
_ERROR_CLIP = 300  # characters of a server's error message quoted in an exception
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what a bearer token can hold
_FENCED = re.compile(r"```(?:json\b)?(.*)```", re.DOTALL | re.IGNORECASE)


# How API keys that can pass for a variable name begin (Groq, Hugging Face, GitHub, Google,
# Replicate, Stripe-style secret, publishable and restricted keys); keys with a "-"
# (sk-..., xai-...) are refused as names already.
_KEY_PREFIXES = ("sk_", "gsk_", "hf_", "ghp_", "gho_", "github_pat_", "AIza", "r8_", "pk_", "rk_")
_KEY_MIN_LENGTH = 20  # a variable named hf_token or sk_live is no key
_RANDOM_MIN_LENGTH = 24


def looks_like_key(name: str) -> bool:
    """Whether an ``api_key_env`` value looks like an API key pasted in place of a
    variable's name: a known key prefix on a long value, or long text that reads as random
    (mixed case with digits, or no word separator at all), unlike ``UPPER_SNAKE_CASE``."""
    if name.startswith(_KEY_PREFIXES) and len(name) >= _KEY_MIN_LENGTH:
        return True
    if len(name) < _RANDOM_MIN_LENGTH:
        return False
    mixed = any(c.islower() for c in name) and any(c.isupper() for c in name)
    digits = any(c.isdigit() for c in name)
    return (mixed and digits) or ("_" not in name.strip("_") and digits)


class JudgeConfigError(ValueError):
    """A ``[judge]`` setting is wrong: ``args == (key, message)``, shown as ``key: message``."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(key, message)
        self.key = key
        self.message = message

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


@dataclass(frozen=True)
class JudgeConfig:
    """Where the judge is and how to talk to it: the ``[judge]`` table of thresholds.toml.

    The values are checked on construction, so a config built in code is held to the same
    rules as one read from TOML (which ``judge_config`` additionally type-checks).
    """

    base_url: str
    model: str
    # The NAME of the variable holding the key, never the key; kept out of the repr, since
    # a key pasted here by mistake would otherwise be printed with the config.
    api_key_env: str | None = dataclasses.field(default=None, repr=False)
    timeout: float = 30.0
    retries: int = 3
    concurrency: int = 4
    backoff: float = 0.5
    max_tokens: int = 256
    prompts: Path | None = None

    def __post_init__(self) -> None:
        # A trailing "/" would make equal endpoints differ in the cache key and double the
        # slash in the request path.
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        _check_base_url(self.base_url)
        if not self.model.strip():
            raise JudgeConfigError("model", "must not be empty")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            # Not echoed: a value that is no variable name may well be the key itself.
            raise JudgeConfigError(
                "api_key_env",
                "expected the name of an environment variable (letters, digits and _), "
                "not the key itself",
            )
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise JudgeConfigError("timeout", f"expected seconds > 0, got {self.timeout!r}")
        if self.retries < 0:
            raise JudgeConfigError("retries", f"expected 0 or more, got {self.retries!r}")
        if self.concurrency < 1:
            raise JudgeConfigError("concurrency", f"expected 1 or more, got {self.concurrency!r}")
        if not (math.isfinite(self.backoff) and self.backoff >= 0):
            raise JudgeConfigError("backoff", f"expected seconds >= 0, got {self.backoff!r}")
        if self.max_tokens < 1:
            raise JudgeConfigError("max_tokens", f"expected 1 or more, got {self.max_tokens!r}")
        if self.prompts is not None:
            check_prompt_overrides(self.prompts)


def _check_base_url(base_url: str) -> None:
    parts = urllib.parse.urlsplit(base_url)
    if "@" in parts.netloc:
        # Not echoed: the user part may hold a password or key.
        raise JudgeConfigError("base_url", "must not contain credentials; use api_key_env")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JudgeConfigError("base_url", f"expected an http(s)://host/... URL, got {base_url!r}")
    if parts.query or parts.fragment:
        # Not quoted: a query is where a key pasted by mistake would sit.
        raise JudgeConfigError("base_url", "must have no query (?...) or fragment (#...)")
    try:
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise JudgeConfigError("base_url", f"bad port in {base_url!r}") from None


# The type each [judge] key takes in TOML; floats accept integers too.
_KEY_TYPES: dict[str, type] = {
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "timeout": float,
    "retries": int,
    "concurrency": int,
    "backoff": float,
    "max_tokens": int,
    "prompts": str,
}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number"}


def judge_config(table: Mapping[str, Any], base_dir: Path) -> JudgeConfig:
    """The ``JudgeConfig`` of a ``[judge]`` table; ``prompts`` is relative to ``base_dir``
    (thresholds.toml's directory). Any mistake is a ``JudgeConfigError`` naming the key."""
    for key in table:
        if key not in _KEY_TYPES:
            raise JudgeConfigError(key, f"unknown key; expected one of {', '.join(_KEY_TYPES)}")
    for key in ("base_url", "model"):
        if key not in table:
            raise JudgeConfigError(key, "required")
    values = {key: _typed(key, value) for key, value in table.items()}
    if "prompts" in values:
        values["prompts"] = (base_dir / values["prompts"]).resolve()
    return JudgeConfig(**values)


def _typed(key: str, value: Any) -> Any:
    wanted = _KEY_TYPES[key]
    if wanted is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, wanted) and not isinstance(value, bool):
        return value
    shown = "" if key == "api_key_env" else f", got {value!r}"  # it may be the key itself
    raise JudgeConfigError(key, f"expected {_TYPE_NAMES[wanted]}{shown}")


def check_prompt_overrides(directory: Path) -> None:
    """Refuse a prompts directory that is missing, holds a ``.txt`` file named after no
    prompt (a typo would otherwise silently leave the shipped prompt in use), or holds a
    prompt whose placeholders are not exactly its prompt's."""
    if not directory.is_dir():
        raise JudgeConfigError("prompts", f"{directory} is not a directory")
    for path in sorted(directory.glob("*.txt")):
        if path.stem not in PROMPT_NAMES:
            raise JudgeConfigError(
                "prompts", f"{path}: not a prompt name; expected one of {', '.join(PROMPT_NAMES)}"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise JudgeConfigError("prompts", f"{path}: not UTF-8 text ({error.reason})") from None
        problem = placeholder_problem(path.stem, text)
        if problem is not None:
            raise JudgeConfigError("prompts", f"{path}: {problem}")


def placeholder_problem(name: str, text: str) -> str | None:
    """Why ``text`` cannot serve as prompt ``name``, or None when its placeholders are
    exactly ``PLACEHOLDERS[name]``."""
    template = Template(text)
    if not template.is_valid():
        return "a '$' that starts no placeholder (write $$ for a literal $)"
    allowed = PLACEHOLDERS[name]
    used = set(template.get_identifiers())
    if unknown := used - allowed:
        return f"unknown placeholder {_dollars(unknown)}; {name} takes {_dollars(allowed)}"
    if missing := allowed - used:
        return f"missing placeholder {_dollars(missing)}; {name} takes {_dollars(allowed)}"
    return None


def _dollars(names: frozenset[str] | set[str]) -> str:
    return ", ".join(f"${name}" for name in sorted(names))


def load_prompt(name: str, override_dir: Path | None) -> str:
    """The text of prompt ``name``: ``override_dir/<name>.txt`` when that file exists, else
    the one shipped in the package."""
    if name not in PROMPT_NAMES:
        raise ValueError(f"unknown prompt {name!r}; expected one of {', '.join(PROMPT_NAMES)}")
    if override_dir is not None:
        override = override_dir / f"{name}.txt"
        if override.is_file():
            return override.read_text(encoding="utf-8")
    shipped = resources.files("pytest_ragmetrics.judge").joinpath("prompts", f"{name}.txt")
    return shipped.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Call:
    """What one verdict cost: the accounting behind latency and token metrics.

    ``latency_ms`` is the wall time of the request that produced the reply (replayed from
    the cache when ``cached``); for a failure, the time spent in all its requests.
    ``attempts`` counts requests sent now, so 0 when cached.
    """

    cached: bool
    latency_ms: float
    attempts: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Verdict:
    """One judgment: the score on the prompt's scale (entailment: 1.0 or 0.0) and why."""

    score: float
    reason: str
    call: Call


class JudgeError(Exception):
    """A judge call produced no verdict; ``call`` is what it spent (None: nothing sent)."""

    def __init__(self, message: str, call: Call | None = None) -> None:
        super().__init__(message)
        self.call = call


class JudgeUnreachable(JudgeError):
    """The endpoint cannot be used at all; the judge sends nothing more this run."""


class JudgeCallFailed(JudgeError):
    """The call kept failing through its retries, or the server refused it outright."""


class UnparseableVerdict(JudgeError):
    """The reply is not a verdict of the expected shape; ``content`` is the reply text."""

    def __init__(self, message: str, content: str, call: Call | None = None) -> None:
        super().__init__(message, call)
        self.content = content


def parse_verdict(name: str, content: str) -> tuple[float, str]:
    """``(score, reason)`` from a reply: one JSON object, optionally in a single ```json
    fence and nothing else; ``ValueError`` says what is wrong. Never coerces: a score is a
    JSON number within ``SCALES[name]``, ``entailed`` a JSON boolean, ``reason`` (optional)
    a string. Extra keys are ignored."""
    document = _json_object(_unfenced(content.strip()))
    reason = document.get("reason", "")
    if not isinstance(reason, str):
        raise ValueError('"reason" is not a string')
    if name == "entailment":
        entailed = document.get("entailed")
        if not isinstance(entailed, bool):
            raise ValueError('"entailed" is not true or false')
        return (1.0 if entailed else 0.0), reason
    low, high = SCALES[name]
    score = document.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError('"score" is not a number')
    # A huge integer is fine for the range check but would overflow math.isfinite.
    if (isinstance(score, float) and not math.isfinite(score)) or not low <= score <= high:
        raise ValueError(f'"score" {score!r} is outside {low:g}..{high:g}')
    return float(score), reason


def _unfenced(text: str) -> str:
    match = _FENCED.fullmatch(text)
    if match is None:
        return text
    inner = match.group(1)
    if "```" in inner:
        raise ValueError("more than one ``` fence")
    return inner.strip()


def _json_object(text: str) -> dict[str, Any]:
    try:
        document = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg} at character {error.pos})") from None
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def _no_constant(constant: str) -> NoReturn:
    raise ValueError(f"{constant} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        raise ValueError("a key appears twice")
    return document


def cache_key(request: Mapping[str, Any]) -> str:
    """The content address of a reply: sha256 of the canonical JSON of the key fields."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Reply:
    content: str
    call: Call


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


class LlmJudge:
    """Verdicts from an OpenAI-compatible chat endpoint; safe to use from several threads.

    ``cache_dir`` (None: no cache) holds replies under ``judge/`` and the cross-process
    concurrency slots under ``judge/slots/``; ``refresh`` ignores cached replies but still
    stores new ones. ``environ`` and ``sleep`` are injectable so tests neither set real
    variables nor wait through backoff.
    """

    approximate = False  # as the judges of judges.py: verdicts are not an approximation
    name = "llm"

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
        self._directory = None if cache_dir is None else cache_dir / "judge"
        self._refresh = refresh
        self._run_id = run_id
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._sleep = sleep
        self._prompts = {name: Template(load_prompt(name, config.prompts)) for name in PROMPT_NAMES}
        self._semaphore = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self._unreachable: str | None = None
        parts = urllib.parse.urlsplit(config.base_url)
        self._host, self._port = parts.hostname or "", parts.port
        self._path = f"{parts.path}/chat/completions"
        # Built once: loading the trust store per request would cost more than the request.
        self._tls = ssl.create_default_context() if parts.scheme == "https" else None

    @property
    def label(self) -> str:
        return f"LLM judge {self.config.model} at {self.config.base_url}"

    def __repr__(self) -> str:
        return f"LlmJudge({self.label!r})"

    def entails(self, premise: str, hypothesis: str) -> bool:
        """Whether the judge finds that ``premise`` entails ``hypothesis``."""
        verdict = self.judge("entailment", {"premise": premise, "hypothesis": hypothesis})
        return verdict.score == 1.0

    def __call__(self, premise: str, hypothesis: str) -> bool:
        """The ``(premise, hypothesis) -> bool`` protocol of judges.py's entailment judges."""
        return self.entails(premise, hypothesis)

    def judge(self, name: str, fields: Mapping[str, str], *, repeat: int = 0) -> Verdict:
        """The verdict of prompt ``name`` with ``fields`` filling its placeholders (exactly
        those). ``repeat`` 1, 2, ... are independent re-judgments of the same question for
        measuring the judge's consistency: they bypass the cache, read and write.

        With a cache, a lock per entry makes concurrent processes that need the same
        verdict ask once; with ``refresh``, entries of earlier runs (another ``run_id``)
        are ignored, and those this run wrote are reused."""
        if repeat < 0:
            raise ValueError(f"repeat must be 0 or more, got {repeat}")
        request = {
            "model": self.config.model,
            "messages": self._messages(name, fields),
            "temperature": 0,
            "max_tokens": self.config.max_tokens,
        }
        keyed = {**request, "base_url": self.config.base_url, "repeat": repeat}
        entry = None if repeat else self._entry_path(cache_key(keyed))
        reply = self._cached(entry, keyed)
        if reply is None and entry is not None:
            entry.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(f"{entry}.lock"):
                reply = self._cached(entry, keyed)  # another process may have asked
                if reply is None:
                    self._raise_if_unreachable(None)
                    reply = self._call(name, request)
                    _write_entry(entry, keyed, reply, self._run_id)
        elif reply is None:
            self._raise_if_unreachable(None)
            reply = self._call(name, request)
        try:
            score, reason = parse_verdict(name, reply.content)
        except ValueError as error:
            raise UnparseableVerdict(
                f"{self.label}: the {name} reply is not a verdict ({error}): "
                f"{_clip(reply.content, _CLIP)!r}",
                reply.content,
                reply.call,
            ) from None
        return Verdict(score, reason, reply.call)

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

    def _cached(self, entry: Path | None, keyed: Mapping[str, Any]) -> _Reply | None:
        if entry is None:
            return None
        return _read_entry(entry, keyed, self._run_id if self._refresh else None)

    def _entry_path(self, key: str) -> Path | None:
        return None if self._directory is None else self._directory / key[:2] / f"{key}.json"

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

    def _call(self, name: str, request: Mapping[str, Any]) -> _Reply:
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
                return _Reply(content, Call(False, elapsed_ms, attempts, *usage))
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
                f"LLM judge unreachable at {self.config.base_url}: {failure.reason}; "
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
        """POST ``body``: ``(status, Retry-After header, reply body)``."""
        connection: http.client.HTTPConnection
        if self._tls is not None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.config.timeout, context=self._tls
            )
        else:
            connection = http.client.HTTPConnection(
                self._host, self._port, timeout=self.config.timeout
            )
        try:
            try:
                connection.connect()
            except OSError as error:  # refused, unknown host, connect timeout, TLS failure
                raise _AttemptFailed(f"cannot connect: {_describe(error)}", connect=True) from None
            try:
                connection.request("POST", self._path, body, dict(headers))
                response = connection.getresponse()
                return response.status, response.getheader("Retry-After"), response.read()
            except TimeoutError:
                raise _AttemptFailed(
                    f"no reply within {self.config.timeout:g} s", timeout=True
                ) from None
            except (OSError, http.client.HTTPException) as error:
                # RemoteDisconnected, ConnectionResetError, BrokenPipeError, IncompleteRead...
                raise _AttemptFailed(f"connection lost: {_describe(error)}") from None
        finally:
            connection.close()


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
    return content, (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _count(value: Any) -> int:
    """A token count the server gave, or 0 when it gave none (or something else)."""
    return int(value) if _is_count(value) else 0


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


def _read_entry(path: Path, keyed: Mapping[str, Any], run_id: str | None) -> _Reply | None:
    """The cached reply at ``path``, or None when there is none or it is damaged (a miss,
    overwritten by the fresh reply), or, given a ``run_id``, written by another run."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError:  # not UTF-8, or not JSON: a torn or tampered file
        return None
    if not (isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT):
        return None
    content, latency = entry.get("content"), entry.get("latency_ms")
    tokens = (entry.get("prompt_tokens"), entry.get("completion_tokens"))
    if entry.get("request") != keyed or not isinstance(content, str):
        return None
    if run_id is not None and entry.get("run") != run_id:
        return None
    if isinstance(latency, bool) or not isinstance(latency, int | float):
        return None
    if not (math.isfinite(latency) and latency >= 0 and all(_is_count(n) for n in tokens)):
        return None
    return _Reply(content, Call(True, float(latency), 0, _count(tokens[0]), _count(tokens[1])))


def _write_entry(path: Path, keyed: Mapping[str, Any], reply: _Reply, run_id: str) -> None:
    entry = {
        "format": CACHE_FORMAT,
        "run": run_id,
        "request": keyed,
        "content": reply.content,
        "latency_ms": reply.call.latency_ms,
        "prompt_tokens": reply.call.prompt_tokens,
        "completion_tokens": reply.call.completion_tokens,
    }
    write_atomic(path, json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
