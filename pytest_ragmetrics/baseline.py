"""Stored baselines: one committed, reviewable JSON file per eval.

The file sits beside the eval module, in ``__baselines__/<eval>.json`` (one file per
system, ``<eval>[<system>].json``, for a dataset of several systems). It holds the
accepted aggregates (``{metric: {stat: value}}``) and a signature: the dataset path and
hash and the metric settings that produced them. A baseline whose signature differs from
the current run's is refused, never compared. Files are written with sorted keys and a
stable layout, through a temporary file and an atomic rename, by the controller only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
BASELINE_DIR = "__baselines__"


class BaselineError(Exception):
    """A baseline file exists but cannot be used as one."""


@dataclass(frozen=True)
class Baseline:
    """A stored baseline: where it is, what produced it, and its aggregates."""

    path: Path
    signature: Mapping[str, Any]
    n: int
    metrics: Mapping[str, Mapping[str, float]]

    def value(self, metric: str, stat: str) -> float | None:
        return self.metrics.get(metric, {}).get(stat)


def baseline_path(rootpath: Path, module: str, eval_name: str, system: str | None = None) -> Path:
    """``<module dir>/__baselines__/<eval>.json``, or ``<eval>[<system>].json`` for one
    system of several; names made safe as file names."""
    module_path = Path(module)
    stem = module_path.stem if eval_name == module else _safe(eval_name)
    if system is not None:
        stem += f"[{_safe(system)}]"
    return rootpath / module_path.parent / BASELINE_DIR / f"{stem}.json"


def _safe(name: str) -> str:
    """``name`` as a file name; one that had to change gets a hash of the original, so two
    names never share a file ("a b" and "a/b")."""
    safe = re.sub(r"[^\w.-]+", "_", name)
    if safe == name:
        return name
    return f"{safe}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"


def read_baseline(path: Path) -> Baseline | None:
    """The baseline stored at ``path``; ``None`` if there is none, ``BaselineError`` if bad."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise BaselineError(f"{path}: cannot read: {error.strerror}") from error
    try:
        document = json.loads(text)
        if document["schema_version"] != SCHEMA_VERSION:
            raise BaselineError(
                f"{path}: schema_version {document['schema_version']!r} is not {SCHEMA_VERSION}"
            )
        return Baseline(path, document["signature"], int(document["n"]), document["metrics"])
    except (ValueError, KeyError, TypeError) as error:
        raise BaselineError(f"{path}: not a pytest-ragmetrics baseline ({error!r})") from error


def render_baseline(
    eval_name: str,
    signature: Mapping[str, Any],
    n: int,
    metrics: Mapping[str, Mapping[str, float]],
) -> str:
    """The file content: sorted keys, two-space indent, final newline."""
    document = {
        "eval": eval_name,
        "metrics": metrics,
        "n": n,
        "schema_version": SCHEMA_VERSION,
        "signature": signature,
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def signature_differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """One line per signature key whose value differs, e.g. ``dataset_sha256: 1a2b… → 9f8e…``."""
    differences = []
    for key in sorted(set(stored) | set(current)):
        before, after = stored.get(key), current.get(key)
        if before != after:
            differences.append(f"{key}: stored {_short(before)}, now {_short(after)}")
    return differences


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
