"""The ``[judge]`` table of thresholds.toml: where the judge is and how to talk to it.

Every value is checked where it is read, and again when a ``JudgeConfig`` is built in
code; a mistake is a ``JudgeConfigError`` naming the key. The API key itself is never
configured: ``api_key_env`` names the environment variable holding it, and no message
quotes that name, since a key pasted there by mistake can pass for one.
"""

from __future__ import annotations

import dataclasses
import math
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import resolve_setting
from pytest_ragmetrics.judge import MAX_REPEATS
from pytest_ragmetrics.judge.prompts import PROMPT_NAMES, placeholder_problem

# The top-level table of thresholds.toml this module reads (also the key of the judge's
# part of a baseline's signature).
JUDGE_TABLE = "judge"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# How API keys that can pass for a variable name begin (Groq, Hugging Face, GitHub, Google,
# Replicate, Stripe-style secret, publishable and restricted keys); keys with a "-"
# (sk-..., xai-...) are refused as names already.
_KEY_PREFIXES = ("sk_", "gsk_", "hf_", "ghp_", "gho_", "github_pat_", "AIza", "r8_", "pk_", "rk_")
_KEY_MIN_LENGTH = 20  # a variable named hf_token or sk_live is no key
_RANDOM_MIN_LENGTH = 24
MAX_TEMPERATURE = 2.0  # the OpenAI API's upper bound


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

    # Where verdicts come from: exactly one of an endpoint's URL or an in-process
    # callable's "module:attribute" (docs/judge.md#an-in-process-judge).
    base_url: str | None = None
    # Names the judge (signed in baselines), whichever of the two answers.
    model: str = ""
    function: str | None = None
    # The NAME of the variable holding the key, never the key; kept out of the repr, since
    # a key pasted here by mistake would otherwise be printed with the config.
    api_key_env: str | None = dataclasses.field(default=None, repr=False)
    timeout: float = 30.0
    retries: int = 3
    concurrency: int = 4
    backoff: float = 0.5
    max_tokens: int = 256
    prompts: Path | None = None
    # Verdicts asked per judged row, each cached under its own index; the row's value is
    # their mean (docs/judge.md#repeated-verdicts).
    repeats: int = 1
    # Sampling temperature of every request: 0, the default, asks for the most likely
    # verdict; repeated verdicts measure the judge's noise at the temperature it is run at.
    temperature: float = 0.0
    # ``[judge.previous]``: the judge this one replaces, for ``--ragmetrics-judge-compare``
    # (its keys override this table's; docs/judge.md#comparing-two-judges).
    previous: JudgeConfig | None = dataclasses.field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check_source(self.base_url, self.function, self.api_key_env)
        if self.base_url is not None:
            # A trailing "/" would make equal endpoints differ in the cache key and double
            # the slash in the request path.
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
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise JudgeConfigError(
                "repeats", f"expected 1 to {MAX_REPEATS} verdicts a row, got {self.repeats!r}"
            )
        if not (math.isfinite(self.temperature) and 0 <= self.temperature <= MAX_TEMPERATURE):
            raise JudgeConfigError(
                "temperature", f"expected 0 to {MAX_TEMPERATURE:g}, got {self.temperature!r}"
            )
        if self.prompts is not None:
            check_prompt_overrides(self.prompts)


NO_SOURCE = "required (or function, for a judge called in process)"
# "package.module:attribute", the form of an entry point's object reference.
_FUNCTION = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _check_source(base_url: str | None, function: str | None, api_key_env: str | None) -> None:
    """Exactly one place verdicts come from: an endpoint or an in-process function."""
    if base_url is None and function is None:
        raise JudgeConfigError("base_url", NO_SOURCE)
    if base_url is not None and function is not None:
        raise JudgeConfigError(
            "function", "give base_url (an endpoint) or function (in process), not both"
        )
    if function is None:
        return
    if not _FUNCTION.fullmatch(function):
        raise JudgeConfigError(
            "function", f'expected "module:attribute" (e.g. "my_judge:judge"), got {function!r}'
        )
    if api_key_env is not None:
        raise JudgeConfigError("api_key_env", "applies to base_url only; function has no key")


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
    "function": str,
    "model": str,
    "api_key_env": str,
    "timeout": float,
    "retries": int,
    "concurrency": int,
    "backoff": float,
    "max_tokens": int,
    "prompts": str,
    "repeats": int,
    "temperature": float,
}
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number"}


def judge_config(table: Mapping[str, Any], base_dir: Path) -> JudgeConfig:
    """The ``JudgeConfig`` of a ``[judge]`` table; ``prompts`` is relative to ``base_dir``
    (thresholds.toml's directory). A ``[judge.previous]`` table is the judge it replaces:
    ``[judge]`` with the keys it gives changed. Any mistake is a ``JudgeConfigError``
    naming the key (``previous.model``)."""
    own = {key: value for key, value in table.items() if key != PREVIOUS}
    if PREVIOUS not in table:
        return _judge_config(own, base_dir)
    changes = table[PREVIOUS]
    if not isinstance(changes, Mapping):
        raise JudgeConfigError(PREVIOUS, "expected a table: [judge.previous]")
    if PREVIOUS in changes:
        raise JudgeConfigError(f"{PREVIOUS}.{PREVIOUS}", "one previous judge only")
    inherited = own
    if SOURCES & changes.keys():
        # The previous judge names its own place: [judge]'s other one is not inherited.
        inherited = {key: value for key, value in own.items() if key not in SOURCES}
    try:
        previous = _judge_config({**inherited, **changes}, base_dir)
    except JudgeConfigError as error:
        raise JudgeConfigError(f"{PREVIOUS}.{error.key}", error.message) from None
    return dataclasses.replace(_judge_config(own, base_dir), previous=previous)


# The sub-table of [judge] naming the judge a new one replaces.
PREVIOUS = "previous"
# The keys naming where verdicts come from; a table gives exactly one.
SOURCES = frozenset({"base_url", "function"})


def _judge_config(table: Mapping[str, Any], base_dir: Path) -> JudgeConfig:
    for key in table:
        if key not in _KEY_TYPES:
            known = ", ".join([*_KEY_TYPES, PREVIOUS])
            raise JudgeConfigError(key, f"unknown key; expected one of {known}")
    if not SOURCES & table.keys():
        raise JudgeConfigError("base_url", NO_SOURCE)
    if "model" not in table:
        raise JudgeConfigError("model", "required")
    values = {key: _typed(key, value) for key, value in table.items()}
    if "prompts" in values:
        values["prompts"] = resolve_setting(
            base_dir / values["prompts"], lambda problem: JudgeConfigError("prompts", problem)
        )
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
