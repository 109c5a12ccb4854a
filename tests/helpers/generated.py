"""3,000 generated rows that every engine and mode must score alike: bulk mode against
row mode (tests/integration/test_bulk_mode.py), the Ray engine against the local one
(tests/integration/test_ray_cluster.py)."""

from __future__ import annotations

from helpers.project import jsonl

GENERATED_ROWS = 3000
CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Lisbon"]
BROKEN = 1234  # the position of the one line that is not JSON (line 1235)


def generated_rows() -> str:
    """3,000 rows as JSONL, deterministic: every seventh answers the wrong city (f1 0, so
    an eval asserting f1 > 0 fails it), every eleventh says it does not know yet cites a
    document (idk_citation 1, f1 0), and line 1235 is not JSON (a bad row, its error
    naming the line). The texts repeat (five cities: 3,000 distinct contexts would be
    slow to encode)."""
    lines = []
    for i in range(GENERATED_ROWS):
        if i == BROKEN:
            lines.append('{"id": "g1234", "answer": \n')
            continue
        city = CITIES[i % 5]
        said = CITIES[(i + 1) % 5] if i % 7 == 0 else city
        row = {
            "id": f"g{i:04d}",
            "question": f"Which city is number {i % 5}?",
            "answer": (
                f"I don't know [CIT:d{i % 5}]."
                if i % 11 == 0
                else f"{said} is the city [CIT:d{i % 5}]."
            ),
            "gold": [city],
            "contexts": [{"doc_id": f"d{i % 5}", "text": f"{city} is city number {i % 5}."}],
            "tokens": 100 + i % 13,
        }
        lines.append(jsonl([row]))
    return "".join(lines)
