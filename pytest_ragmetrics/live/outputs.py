"""A live system's outputs as rows: scored in place of recorded ones, and saved with
``--ragmetrics-save-outputs`` as a dataset another run can load."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_ragmetrics.data.dataset import Row
from pytest_ragmetrics.files import write_atomic
from pytest_ragmetrics.live.system import LiveOutput


def live_row(row: Row, output: LiveOutput) -> Row:
    """The question row with the system's output fields added."""
    return Row(row.id, row.source, row.line, row.index, {**row.data, **output.fields})


def saved_row(row: Row, output: LiveOutput) -> dict[str, Any]:
    """One line of ``--ragmetrics-save-outputs``: a recorded row another run can load."""
    return {
        "id": row.id,
        "system": output.system,
        "system_fingerprint": output.fingerprint,
        **{k: v for k, v in row.data.items() if k not in ("id", "system")},
        **output.fields,
    }


def write_outputs(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows as JSON Lines, atomically; the number written."""
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    write_atomic(path, "".join(line + "\n" for line in lines))
    return len(lines)
