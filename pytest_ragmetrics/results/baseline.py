"""Stored baselines: one committed, reviewable JSON file per eval.

The file sits beside the eval module, in ``__baselines__/<eval>.json`` (one file per
system, ``<eval>[<system>].json``, for a dataset of several systems). It holds

* ``metrics``: the accepted aggregates (``{metric: {stat: value}}``);
* ``rows``: each row's recorded values keyed by row id, with a hash of the row's *inputs*
  (``INPUT_FIELDS``: the question and its labels) and its transformation state, one row a
  line, so a review sees which rows moved;
* ``signature``: the metric settings that produced the numbers. It never covers the
  system's outputs (answers, contexts, tokens, latency, telemetry): those are exactly what
  changes between the baseline and a candidate, so a changed log is compared, and only
  changed settings refuse the comparison: a setting every metric shares refuses the
  whole file, a metric's own version (``<metric>.version``) that metric's numbers only
  (``check_signature``).

Files are written with sorted keys and a stable layout, through a temporary file and an
atomic rename, by the controller only. Schema 1 files (aggregates only, with a signature
that also hashed the dataset file) still load: their aggregates are compared, their rows
cannot be paired.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragmetrics.files import finite_decoder, json_digest, loads_finite
from pytest_ragmetrics.results.baseline_rows import BaselineRows, RepeatedIds, StoredRow

SCHEMA_VERSION = 2
BASELINE_DIR = "__baselines__"
# A row's inputs: what was asked and what is known to be right. Everything else in a row is
# the system's output, which a baseline is compared with, never keyed on.
INPUT_FIELDS = ("question", "gold", "relevant", "answerable", "show_gold", "session_id", "turn")
STATES = ("idk", "supported", "other")
# Keys of a schema 1 signature that identified the system's outputs, not the settings.
_OUTPUT_IDENTITY = ("dataset", "dataset_sha256", "rerun", "rerun_sha256")


class BaselineError(Exception):
    """A baseline file exists but cannot be used as one."""


def input_digest(data: Mapping[str, Any]) -> str:
    """16 hex digits identifying a row's inputs (``INPUT_FIELDS``), whatever it answered."""
    inputs = {name: data[name] for name in INPUT_FIELDS if name in data}
    return json_digest(inputs, ascii_only=True, hex_digits=16)


@dataclass(frozen=True)
class Baseline:
    """A stored baseline: where it is, what produced it, its aggregates and rows.

    ``rows`` is ``None`` for a schema 1 file, which stored aggregates only.
    """

    path: Path
    signature: Mapping[str, Any]
    n: int
    metrics: Mapping[str, Mapping[str, float]]
    rows: Mapping[str, StoredRow] | None = None  # read from a file: ``BaselineRows``
    schema_version: int = SCHEMA_VERSION

    def value(self, metric: str, stat: str) -> float | None:
        return self.metrics.get(metric, {}).get(stat)

    def settings_signature(self) -> dict[str, Any]:
        """The signature without a schema 1 file's hashes of the outputs."""
        return {k: v for k, v in self.signature.items() if k not in _OUTPUT_IDENTITY}


def baseline_path(root: Path, module: str, eval_name: str, system: str | None = None) -> Path:
    """``<module dir>/__baselines__/<eval>.json``, or ``<eval>[<system>].json`` for one
    system of several; names made safe as file names."""
    module_path = Path(module)
    stem = module_path.stem if eval_name == module else _safe(eval_name)
    if system is not None:
        stem += f"[{_safe(system)}]"
    return root / module_path.parent / BASELINE_DIR / f"{stem}.json"


def _safe(name: str) -> str:
    """``name`` as a file name; one that had to change gets a hash of the original, so two
    names never share a file ("a b" and "a/b")."""
    safe = re.sub(r"[^\w.-]+", "_", name)
    if safe == name:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe}-{digest}"


# -- reading ------------------------------------------------------------------------------


class _Invalid(Exception):
    """A value of the document is not what the schema says; the message names it."""


_NOT_A_NUMBER = "is not a number a baseline may hold"


def _settings_read_once(value: Any, where: str) -> None:
    """The signature's settings, nested objects included, each key held once."""
    if isinstance(value, dict):
        for key, item in _object(value, where).items():
            _settings_read_once(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _settings_read_once(item, f"{where}[{index}]")


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"{where}: expected a number, got {json.dumps(value)[:40]}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise _Invalid(f"{where}: expected a finite number, got {value}")
    return number


class _Pairs(dict[str, Any]):
    """A JSON object as read, with the keys it held more than once (``json`` keeps the
    last of them silently) and how many times."""

    repeated: dict[str, int]


def _pairs(pairs: list[tuple[str, Any]]) -> _Pairs:
    read = _Pairs(pairs)
    counts = Counter(key for key, _ in pairs)
    read.repeated = {key: count for key, count in counts.items() if count > 1}
    return read


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"{where}: expected an object")
    repeated = getattr(value, "repeated", None)
    if repeated:
        what = "row ids" if where == "rows" else "keys"
        raise _Invalid(f"{where}: {_repeated(what, repeated)}")
    return value


def _repeated(what: str, repeated: Mapping[str, int]) -> str:
    listed = ", ".join(f"{key!r} ({count} times)" for key, count in sorted(repeated.items()))
    return f"{what} stored more than once: {listed}; which of them is the reference cannot be told"


def _numbers(value: Any, where: str) -> dict[str, float]:
    return {key: _number(item, f"{where}.{key}") for key, item in _object(value, where).items()}


def _tables(value: Any, where: str) -> dict[str, dict[str, float]]:
    return {key: _numbers(item, f"{where}.{key}") for key, item in _object(value, where).items()}


def _row(value: Any, where: str) -> StoredRow:
    entry = _object(value, where)
    inputs = entry.get("inputs")
    if not isinstance(inputs, str):
        raise _Invalid(f"{where}.inputs: expected the digest of the row's inputs")
    state = entry.get("state")
    if state is not None and state not in STATES:
        raise _Invalid(f"{where}.state: expected one of {', '.join(STATES)}")
    values = _numbers(entry.get("values"), f"{where}.values")
    breakdowns = _tables(entry.get("breakdowns", {}), f"{where}.breakdowns")
    return StoredRow(inputs, values, breakdowns, state)


@dataclass(frozen=True)
class _RowsRead:
    """The ``rows`` object of a file, read entry by entry into ``BaselineRows``; the first
    problem found in it is raised only after the document's other keys were checked, as
    reading it whole did."""

    rows: BaselineRows
    problem: str | None


# What JSON calls whitespace, between the tokens of a document.
_SPACE = re.compile(r"[ \t\n\r]*")


def _document(text: str) -> Any:
    """The baseline file's document, as ``loads_finite`` with ``_pairs`` gives it, except
    the value of its ``rows`` key: read an entry at a time into packed rows
    (``_RowsRead``), never as one dict of every row. A document that is not a JSON
    object is read whole (``_parse`` refuses it)."""
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    at = _space(text, 0)
    if not text.startswith("{", at):
        return loads_finite(text, refusal=_NOT_A_NUMBER, object_pairs_hook=_pairs)
    decoder = finite_decoder(_NOT_A_NUMBER, _pairs)
    pairs: list[tuple[str, Any]] = []

    def member(key: str, at: int) -> int:
        if key == "rows" and text.startswith("{", at):
            value, end = _read_rows(text, at, decoder)
        else:
            value, end = decoder.raw_decode(text, at)
        pairs.append((key, value))
        return end

    end = _space(text, _walk_object(text, at, decoder, member))
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return _pairs(pairs)


def _read_rows(text: str, at: int, decoder: json.JSONDecoder) -> tuple[_RowsRead, int]:
    """The ``rows`` object starting at ``text[at]``, each entry checked (``_row``) and
    packed as it is read; the first problem is kept, and the rest only parsed."""
    rows = BaselineRows()
    problem: str | None = None

    def entry(row_id: str, at: int) -> int:
        nonlocal problem
        value, end = decoder.raw_decode(text, at)
        if problem is None:
            try:
                rows.add(row_id, _row(value, f"rows[{row_id!r}]"))
            except _Invalid as error:
                problem = str(error)
        return end

    end = _walk_object(text, at, decoder, entry)
    try:
        rows.finish()
    except RepeatedIds as repeated:  # which of them is the reference cannot be told
        problem = f"rows: {_repeated('row ids', repeated.repeated)}"
    return _RowsRead(rows, problem), end


def _walk_object(
    text: str, at: int, decoder: json.JSONDecoder, member: Callable[[str, int], int]
) -> int:
    """Walk the JSON object starting at ``text[at]`` (``{``): for each member, in order,
    ``member(key, where its value starts)`` reads the value and gives where it ends.
    Where the object ends; ``json.JSONDecodeError`` as ``json`` words it for a document
    that is not JSON."""
    at = _space(text, at + 1)
    if text.startswith("}", at):
        return at + 1
    while True:
        if not text.startswith('"', at):
            raise json.JSONDecodeError(
                "Expecting property name enclosed in double quotes", text, at
            )
        key, at = decoder.raw_decode(text, at)  # a string: it starts with a quote
        at = _space(text, at)
        if not text.startswith(":", at):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
        at = _space(text, member(key, _space(text, at + 1)))
        if text.startswith("}", at):
            return at + 1
        if not text.startswith(",", at):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
        at = _space(text, at + 1)


def _space(text: str, at: int) -> int:
    """Where the whitespace from ``at`` ends."""
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches "" at least


def _parse(path: Path, document: Any) -> Baseline:
    document = _object(document, "the document")
    version = document.get("schema_version")
    if version not in (1, SCHEMA_VERSION):
        raise _Invalid(f"schema_version {version!r} is not 1 or {SCHEMA_VERSION}")
    signature = _object(document.get("signature"), "signature")
    _settings_read_once(signature, "signature")
    n = document.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise _Invalid("n: expected a count of rows")
    metrics = _tables(document.get("metrics"), "metrics")
    rows = None
    if version == SCHEMA_VERSION:
        read = document.get("rows")
        if not isinstance(read, _RowsRead):
            _object(read, "rows")  # not an object: refused
            raise AssertionError("an object of rows is read as _RowsRead")
        if read.problem is not None:
            raise _Invalid(read.problem)
        rows = read.rows
    return Baseline(path, signature, n, metrics, rows, version)


def read_baseline(path: Path) -> Baseline | None:
    """The baseline stored at ``path``; ``None`` if there is none, ``BaselineError`` naming
    the file and the faulty key if it cannot be used."""
    try:
        # The bytes are let go once decoded: a million stored rows are 135 MB of each.
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as error:
        problem = f"not UTF-8 text ({error})"
    except OSError as error:
        raise BaselineError(f"{path}: cannot read: {error.strerror}") from None
    else:
        try:
            return _parse(path, _document(text))
        except RecursionError:
            problem = "not JSON: nested too deeply"
        except ValueError as error:
            problem = f"not JSON: {error}"
        except _Invalid as error:
            problem = str(error)
    raise BaselineError(f"{path}: not a pytest-ragmetrics baseline: {problem}")


# -- writing ------------------------------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def render_baseline(
    eval_name: str,
    signature: Mapping[str, Any],
    n: int,
    metrics: Mapping[str, Mapping[str, float]],
    rows: Mapping[str, StoredRow],
    dataset: str,
) -> str:
    """The file content: sorted keys, two-space indent, one row a line, final newline.
    ``n`` is the rows the aggregates are over (a dataset-level eval stores no rows)."""
    placeholder = "\x00rows\x00"
    document = {
        "dataset": dataset,  # where the rows came from, for the reader; not compared
        "eval": eval_name,
        "metrics": metrics,
        "n": n,
        "rows": placeholder,
        "schema_version": SCHEMA_VERSION,
        "signature": signature,
    }
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
    lines = [
        f"    {_compact(row_id)}: {_compact(rows[row_id].as_dict())}" for row_id in sorted(rows)
    ]
    block = "{\n" + ",\n".join(lines) + "\n  }" if lines else "{}"
    return text.replace(_compact(placeholder), block, 1) + "\n"


def signature_differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """One line per signature key whose value differs, e.g. ``tau_sim: stored 0.65, now 0.7``.
    A key one side lacks is a setting at its default there (settings enter a signature only
    when changed): ``retrieval: stored default, now {"relevance_level": 2}``."""
    differences = []
    for key in sorted(set(stored) | set(current)):
        before, after = stored.get(key, _DEFAULT), current.get(key, _DEFAULT)
        if before != after:
            differences.append(f"{key}: stored {_short(before)}, now {_short(after)}")
    return differences


VERSION_KEY = ".version"  # ``<metric>.version``: the version of a metric of the user's
# ``<metric>.price[<model>]``: the price a metric's numbers were computed with for one
# model (``cost_usd.price[gpt-4o-mini]``, ``metrics.cost.price_signature``).
PRICE_KEY = ".price["


def metric_of(key: str) -> str | None:
    """The metric a signature key is of (``words`` for ``words.version``, the version a
    metric declared in user code was given; ``cost_usd`` for one of its prices), ``None``
    for a setting that every metric shares (``tau_sim``, the embedding model, the system,
    the judge)."""
    metric, dot, rest = key.partition(".")
    if not dot:
        return None
    if f".{rest}" == VERSION_KEY or (f".{rest}".startswith(PRICE_KEY) and rest.endswith("]")):
        return metric
    return None


def _one_sided(key: str, stored: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """A model's price that only one side holds: that side alone priced rows with the
    model, which says nothing of the other's numbers (a run that moved from one model to
    another compares its cost with the baseline's). Only a model both priced, at
    different prices, makes the metric's numbers unlike."""
    return PRICE_KEY in key and (key in stored) != (key in current)


@dataclass(frozen=True)
class SignatureCheck:
    """How a stored signature differs from this run's, as lines of
    ``signature_differences``: ``settings``, the settings every metric shares (none of the
    file's numbers is comparable), and ``metrics``, per metric, what differs of that metric
    alone (only its numbers are not comparable; a metric newly given a version reads
    ``words.version: stored default, now "1"``)."""

    settings: tuple[str, ...] = ()
    metrics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def check_signature(stored: Mapping[str, Any], current: Mapping[str, Any]) -> SignatureCheck:
    """``stored`` against ``current``, split by what each difference makes incomparable."""
    settings: list[str] = []
    metrics: dict[str, tuple[str, ...]] = {}
    for key in sorted(set(stored) | set(current)):
        if _one_sided(key, stored, current):
            continue
        lines = signature_differences(
            {key: stored[key]} if key in stored else {},
            {key: current[key]} if key in current else {},
        )
        metric = metric_of(key)
        if metric is None:
            settings += lines
        elif lines:
            metrics[metric] = (*metrics.get(metric, ()), *lines)
    return SignatureCheck(tuple(settings), metrics)


_DEFAULT = object()


def _short(value: Any) -> str:
    if value is _DEFAULT:
        return "default"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
