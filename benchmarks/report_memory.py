"""Peak memory of writing the ``--ragmetrics-json`` report alone, held whole or streamed.

Builds the summary of one eval of N synthetic rows, each with four metric values
(``em``, ``f1``, ``idk_citation``, ``tokens``), the evidence of each and its shown fields
(question, answer, two gold answers), as a run that writes the JSON report keeps them;
then, for each way, measures with ``tracemalloc`` the peak of what is allocated while the
report model is built and the file written (what the summary already holds is not
counted):

``whole``
    as before issue 39's streaming: every row's view in a tuple (``EvalView.rows``), the
    whole document as dicts (``ReportModel.as_dict``), encoded piece by piece
    (``json_chunks``).
``streamed``
    the run's model as it is now: views made when read (``RowViews``), the file written a
    row at a time (``report_chunks``).

It checks that both files are the same bytes, and prints one JSON line a size and way:
the peak in MB and, between the two sizes given, the bytes a further row costs. Nothing
is asserted: the figures are for reading (docs/performance.md, "Bulk mode")::

    .venv/bin/python benchmarks/report_memory.py 20000 100000
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pytest_ragmetrics.config.thresholds import Settings
from pytest_ragmetrics.files import write_atomic
from pytest_ragmetrics.reports.model import ReportModel
from pytest_ragmetrics.reports.write import json_chunks, write_reports
from pytest_ragmetrics.results.summary import EvalInfo, EvalSummary, RowPayload, summarize

CITIES = ["Paris", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Oslo", "Prague"]


def summaries(rows: int) -> list[EvalSummary]:
    """One eval of ``rows`` rows, each with values, evidence and shown fields."""
    info = EvalInfo("evals/test_big.py", "evals/test_big.py", "rows.jsonl", "0" * 64, rows)
    payloads = []
    for i in range(rows):
        city = CITIES[i % len(CITIES)]
        payloads.append(
            RowPayload(
                info,
                f"q{i}",
                i,
                {"em": 1.0, "f1": 0.75, "idk_citation": 0.0, "tokens": float(100 + i % 50)},
                {},
                None,
                evidence={
                    "em": f"normalised answer '{city.lower()}' equals gold '{city.lower()}'",
                    "f1": f"3 common token(s) of 4 answer and 4 gold tokens ({city})",
                    "idk_citation": "no I-don't-know phrase: nothing to cite",
                    "tokens": f"{100 + i % 50} tokens (prompt 80, completion {20 + i % 50})",
                },
                fields={
                    "question": f"Which city is the capital of the country number {i}?",
                    "answer": f"The capital is {city} [CIT:doc{i % 97}]. It is a large city.",
                    "gold": [city, f"{city} city"],
                },
            )
        )
    return summarize(payloads, Settings())


def whole(found: list[EvalSummary], path: Path) -> None:
    model = ReportModel.build(found, [], Settings(), "0.0")
    held = replace(model, evals=tuple(replace(v, rows=tuple(v.rows or ())) for v in model.evals))
    write_atomic(path, json_chunks(held.as_dict()))


def streamed(found: list[EvalSummary], path: Path) -> None:
    model = ReportModel.build(found, [], Settings(), "0.0")
    assert write_reports(model, path, None, None) == []


def peak_mb(
    step: Callable[[list[EvalSummary], Path], None], found: list[EvalSummary], path: Path
) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        step(found, path)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="+", help="eval sizes to measure")
    args = parser.parse_args()
    peaks: dict[str, list[tuple[int, float]]] = {"whole": [], "streamed": []}
    for rows in args.rows:
        found = summaries(rows)
        with tempfile.TemporaryDirectory() as tmp:
            files = {way: Path(tmp) / f"{way}.json" for way in peaks}
            for way, step in (("whole", whole), ("streamed", streamed)):
                peak = peak_mb(step, found, files[way])
                peaks[way].append((rows, peak))
                size = files[way].stat().st_size
                print(
                    json.dumps(
                        {
                            "rows": rows,
                            "way": way,
                            "peak_mb": round(peak, 1),
                            "file_mb": round(size / 2**20, 1),
                        }
                    ),
                    flush=True,
                )
            same = files["whole"].read_bytes() == files["streamed"].read_bytes()
            print(json.dumps({"rows": rows, "same_bytes": same}), flush=True)
    for way, found_peaks in peaks.items():
        if len(found_peaks) > 1:
            (small, low), (large, high) = found_peaks[0], found_peaks[-1]
            per_row = (high - low) * 2**20 / (large - small)
            print(f"{way}: {per_row:,.0f} bytes of traced peak per further row")


if __name__ == "__main__":
    main()
