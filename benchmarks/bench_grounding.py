"""Benchmark of the embedding "prepare, then score" pipeline of pytest-ragmetrics.

Run it from the repository root with the project's virtualenv::

    .venv/bin/python benchmarks/bench_grounding.py [--rows 1000] [--repeats 1] [--out PATH]

What is measured
----------------
The script writes, in a temporary directory, a deterministic synthetic dataset of
``--rows`` rows (``random.Random(0)``): five contexts per row and a three-sentence answer
whose every sentence paraphrases a different context and cites it with one
``[CIT:<doc_id>]``. The overlap metric therefore embeds six texts per row (three answer
sentences, markers stripped, and the three cited contexts), all of them distinct. Next to
it goes an eval module ``test_grounded.py`` that records ``overlap`` and ``faithfulness``
for every row, and a second directory with ``--rows`` trivial parametrized tests.

Five commands are then timed as subprocesses, wall clock (``time.perf_counter`` around
``subprocess.run``), with ``HF_HUB_OFFLINE=1``; the pytest ones run with
``-p no:cacheprovider -q -p no:xdist``:

``direct``
    A bare Python process that imports sentence-transformers, loads the packaged
    all-MiniLM-L6-v2 and encodes the same unique texts with one
    ``model.encode(texts, batch_size=64)``: the floor any pipeline built on this model
    pays (interpreter start, import, model load and encoding included).
``cold``
    ``pytest <evaldir> --ragmetrics-cache-dir <empty dir>``: the plugin collects the
    texts, misses the cache, encodes everything once, stores it and scores every row.
``warm``
    The same command again: every vector comes from the cache, torch is never imported.
``bare``
    ``pytest <baredir>``: as many trivial tests as rows, the cost of pytest itself (with
    the plugin installed but unused).
``naive``
    A bare Python process that loads the model once and then, row by row, calls
    ``pytest_ragmetrics.metrics.overlap`` with one ``model.encode`` per row: the contrast
    of a per-row encoder, which pays the per-call overhead and small batches.

Before the first measurement one unmeasured ``import sentence_transformers`` fills the
operating system's file cache, so the first measured command does not pay for cold disks.

How to read the output
----------------------
* ``seconds``: the median wall clock of each command over ``--repeats`` runs.
* ``cold/direct`` (target <= 1.25): what the plugin costs on top of the floor when nothing
  is cached: collecting the texts, the cache, pytest and the metrics themselves.
* ``warm/bare`` (target <= 1.5): what a fully cached run costs on top of running the same
  number of trivial tests: it should be near 1, as nothing is encoded and torch is never
  imported.
* ``naive/direct``: how much batching the whole run into one encode is worth.
* ``breakdown``: ``direct`` reports its own import, load and encode times; ``cold`` is
  split with the plugin's terminal line ``embeddings (main): ... encoded in E s
  (+ import I s, model load L s)`` (one decimal), and ``rest`` is the wall clock minus
  those three: interpreter start, pytest, collecting texts, the cache, fingerprinting the
  model files and scoring.

* ``machine``: torch's intra-op threads default to the number of cores, so encoding is
  very sensitive to other busy processes: a "before" load average well above 0 means the
  numbers are not clean (on a 2-core machine with one core taken by another process, 2
  threads were seen 2.5x slower than 1 on large batches, 13x on the naive per-row calls).

The script exits with status 1 when a command fails (its output is printed), and after
printing the results when a plugin run does not report what it should (``problems``).
Targets that are missed are marked ``MISSED`` but do not change the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchinfo import load_average, machine_info

from pytest_ragmetrics.embeddings.model import packaged_model_dir
from pytest_ragmetrics.metrics.grounding import claims, overlap_texts

CONTEXTS_PER_ROW = 5
CITED_PER_ROW = 3
MIN_WORDS, MAX_WORDS = 25, 40
PYTEST_FLAGS = ("-p", "no:cacheprovider", "-q", "-p", "no:xdist")
TARGETS = {"cold/direct": 1.25, "warm/bare": 1.5}

# ---------------------------------------------------------------------------------------
# The synthetic dataset
# ---------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


SYLLABLES = _words(
    "ka lo ren vi tan mor sel du bri nav ost qua lem fi gar hul zen pra dor mek "
    "tis ul ber cor vas len ja ro pim sta"
)
ADJECTIVES = _words(
    "quiet busy remote ancient modest windy colourful prosperous hilly coastal "
    "sleepy famous rugged humid crowded"
)
REGIONS = _words("northern southern eastern western central upland lowland lakeside")
INDUSTRIES = (
    "salt mining", "wool weaving", "apple orchards", "glass blowing", "river trade",
    "timber", "cheese making", "copper smelting", "shipbuilding", "tea growing",
)  # fmt: skip
LANDMARKS = _words("harbour market bridge abbey lighthouse mill fortress station")
SEAS = ("Grey Sea", "Amber Gulf", "Northern Ocean", "Salt Lagoon", "Bay of Reeds")
FISH = _words("trout eels salmon perch pike carp sturgeon")
DEVICES = (
    "steam loom", "tide clock", "rope pump", "seed drill", "signal lamp", "paper press",
    "wind gauge", "ice saw",
)  # fmt: skip
MATERIALS = _words("brass oak iron bronze walnut copper")
PURPOSES = (
    "measure the depth of canals", "weave sail cloth", "lift water from deep wells",
    "sow grain in straight rows", "send messages between towers", "print cheap almanacs",
    "forecast storms for sailors", "cut ice from frozen lakes",
)  # fmt: skip
ANIMALS = _words("beetle frog owl lizard moth shrew finch salamander")
HABITATS = (
    "wetlands", "pine forests", "salt marshes", "high meadows", "river caves",
    "dry scrublands",
)  # fmt: skip
DIETS = ("seeds", "snails", "ants", "berries", "small fish", "worms", "mosses")
SEASONS = _words("spring summer autumn winter")
ACTIVITIES = ("boat races", "bread markets", "lantern parades", "dance contests", "horse fairs")
PROFESSIONS = _words("botanist mapmaker astronomer architect composer chemist historian")
WORKS = (
    "a survey of coastal tides", "a treatise on bridge arches",
    "an atlas of the inner valleys", "a catalogue of night skies",
    "a study of mineral springs", "a grammar of the hill dialects",
)  # fmt: skip
FIELDS = _words("geography engineering astronomy botany chemistry music")


class Names:
    """Made-up proper names from syllables, never the same twice in one dataset."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def __call__(self) -> str:
        while True:
            count = self.rng.choice((2, 3, 3))
            name = "".join(self.rng.choice(SYLLABLES) for _ in range(count)).capitalize()
            if name not in self.used:
                self.used.add(name)
                return name


@dataclass(frozen=True)
class Fact:
    """One context's text and the answer sentence (without marker) that paraphrases it."""

    subject: str
    text: str
    claim: str


def _town(rng: random.Random, names: Names) -> Fact:
    name, founder = names(), f"{names()} {names()}"
    year, pop = rng.randint(1100, 1890), rng.randint(2, 90) * 1000
    industry = rng.choice(INDUSTRIES)
    text = (
        f"{name} is a {rng.choice(ADJECTIVES)} town in the {rng.choice(REGIONS)} region, "
        f"founded in {year} by {founder}. Its economy rests on {industry}, and about {pop} "
        f"people live there today, most of them near the old {rng.choice(LANDMARKS)}."
    )
    claim = f"{name} was founded by {founder} in {year} and lives mainly from {industry}"
    return Fact(name, text, claim)


def _river(rng: random.Random, names: Names) -> Fact:
    name, mountains = names(), f"{names()} Mountains"
    length, sea, fish = rng.randint(40, 900), rng.choice(SEAS), rng.choice(FISH)
    text = (
        f"The {name} river rises in the {mountains} and runs for {length} kilometres "
        f"before it reaches the {sea}. Its {rng.choice(ADJECTIVES)} waters are known for "
        f"{fish}, which local fishers have caught since {rng.randint(1200, 1900)}."
    )
    claim = f"The {name} river flows {length} kilometres from the {mountains} to the {sea}"
    return Fact(name, text, claim)


def _invention(rng: random.Random, names: Names) -> Fact:
    inventor, city = f"{names()} {names()}", names()
    device, purpose = rng.choice(DEVICES), rng.choice(PURPOSES)
    year = rng.randint(1600, 1899)
    text = (
        f"In {year}, the engineer {inventor} built the first {device}, a "
        f"{rng.choice(ADJECTIVES)} machine of {rng.choice(MATERIALS)} that was used to "
        f"{purpose}. Workshops in {city} copied the design within a decade."
    )
    claim = f"{inventor} invented the {device} in {year} to {purpose}"
    return Fact(inventor, text, claim)


def _species(rng: random.Random, names: Names) -> Fact:
    name, person = f"{names()} {rng.choice(ANIMALS)}", f"{names()} {names()}"
    habitat, diet = rng.choice(HABITATS), rng.choice(DIETS)
    text = (
        f"The {name} is a {rng.choice(ADJECTIVES)} animal found in the {habitat} of "
        f"{names()}. It feeds mostly on {diet}, grows to about {rng.randint(2, 60)} "
        f"centimetres, and was first described by {person} in {rng.randint(1700, 1950)}."
    )
    claim = f"The {name} lives in the {habitat} and eats mostly {diet}"
    return Fact(name, text, claim)


def _festival(rng: random.Random, names: Names) -> Fact:
    name, town, figure = names(), names(), f"{names()} the {rng.choice(PROFESSIONS)}"
    season, year = rng.choice(SEASONS), rng.randint(1300, 1980)
    text = (
        f"Every {season}, the people of {town} hold the {name} festival to honour {figure}. "
        f"The celebration began in {year} and now draws about {rng.randint(2, 80)} thousand "
        f"visitors for {rng.choice(ACTIVITIES)} and music."
    )
    claim = f"Since {year}, {town} has honoured {figure} each {season} with the {name} festival"
    return Fact(name, text, claim)


def _scholar(rng: random.Random, names: Names) -> Fact:
    person, town = f"{names()} {names()}", names()
    profession, work = rng.choice(PROFESSIONS), rng.choice(WORKS)
    year = rng.randint(1650, 1920)
    text = (
        f"{person} was a {rng.choice(ADJECTIVES)} {profession} born in {town} in {year}. "
        f"She is best remembered for {work}, which changed how {rng.choice(FIELDS)} was "
        f"taught for the next {rng.randint(20, 90)} years."
    )
    claim = f"The {profession} {person}, born in {town} in {year}, is best known for {work}"
    return Fact(person, text, claim)


FACT_MAKERS = (_town, _river, _invention, _species, _festival, _scholar)


def make_row(index: int, rng: random.Random, names: Names) -> dict[str, Any]:
    """One row: five contexts, and an answer citing three of them, one per sentence."""
    row_id = f"r{index}"
    facts = [rng.choice(FACT_MAKERS)(rng, names) for _ in range(CONTEXTS_PER_ROW)]
    contexts = [
        {"doc_id": f"{row_id}-d{number}", "text": fact.text}
        for number, fact in enumerate(facts, start=1)
    ]
    cited = sorted(rng.sample(range(CONTEXTS_PER_ROW), CITED_PER_ROW))
    sentences = [f"{facts[i].claim} [CIT:{contexts[i]['doc_id']}]." for i in cited]
    subjects = [facts[i].subject for i in cited]
    return {
        "id": row_id,
        "question": f"What do the sources say about {subjects[0]}, {subjects[1]} and "
        f"{subjects[2]}?",
        "contexts": contexts,
        "answer": " ".join(sentences),
        "gold": " ".join(f"{facts[i].claim}." for i in cited),
        "answerable": True,
    }


def make_rows(count: int) -> list[dict[str, Any]]:
    """The dataset, identical on every call; checks the properties the benchmark needs."""
    rng = random.Random(0)
    names = Names(rng)
    rows = [make_row(index, rng, names) for index in range(count)]
    seen: set[str] = set()
    for row in rows:
        for context in row["contexts"]:
            words = len(context["text"].split())
            if not MIN_WORDS <= words <= MAX_WORDS:
                raise AssertionError(f"{context['doc_id']}: {words} words: {context['text']}")
            if context["text"] in seen:
                raise AssertionError(f"{context['doc_id']}: duplicate text {context['text']!r}")
            seen.add(context["text"])
        texts = row_texts(row)
        if len(texts) != 2 * CITED_PER_ROW:
            raise AssertionError(f"{row['id']}: overlap embeds {len(texts)} texts: {texts}")
    return rows


def row_texts(row: Mapping[str, Any]) -> list[str]:
    """The texts the overlap metric embeds for ``row``, exactly as the plugin lists them."""
    return overlap_texts(claims(row["answer"], row["contexts"]))


def unique_texts(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The union of every row's texts, first occurrence first."""
    return list(dict.fromkeys(text for row in rows for text in row_texts(row)))


EVAL_MODULE = """\
import pytest

pytestmark = pytest.mark.ragmetrics(dataset="rows.jsonl")


def test_grounded(row, overlap, faithfulness):
    overlap(row)
    faithfulness(row)
"""

BARE_MODULE = """\
import pytest


@pytest.mark.parametrize("i", range({rows}))
def test_bare(i):
    assert i >= 0
"""


def write_workspace(root: Path, rows: Sequence[Mapping[str, Any]]) -> tuple[Path, Path]:
    """Write the eval directory and the bare-tests directory under ``root``."""
    eval_dir, bare_dir = root / "evals", root / "bare"
    for directory in (eval_dir, bare_dir):
        directory.mkdir()
        (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    lines = (json.dumps(row, ensure_ascii=False) for row in rows)
    (eval_dir / "rows.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (eval_dir / "test_grounded.py").write_text(EVAL_MODULE, encoding="utf-8")
    (eval_dir / "conftest.py").write_text("", encoding="utf-8")
    (bare_dir / "test_bare.py").write_text(BARE_MODULE.format(rows=len(rows)), encoding="utf-8")
    return eval_dir, bare_dir


# ---------------------------------------------------------------------------------------
# The commands
# ---------------------------------------------------------------------------------------

# argv: model directory, JSON file with the list of texts. Prints one JSON line.
DIRECT_SCRIPT = """\
import json, sys, time
started = time.perf_counter()
import torch
from sentence_transformers import SentenceTransformer
imported = time.perf_counter()
model = SentenceTransformer(sys.argv[1], device="cpu", local_files_only=True)
loaded = time.perf_counter()
with open(sys.argv[2], encoding="utf-8") as handle:
    texts = json.load(handle)
read = time.perf_counter()
vectors = model.encode(texts, batch_size=64)
encoded = time.perf_counter()
assert vectors.shape[0] == len(texts), vectors.shape
print(json.dumps({
    "import_s": imported - started,
    "load_s": loaded - imported,
    "encode_s": encoded - read,
    "texts": len(texts),
    "torch_threads": torch.get_num_threads(),
}))
"""

# argv: model directory, rows.jsonl. Prints one JSON line.
NAIVE_SCRIPT = """\
import json, sys, time
started = time.perf_counter()
from sentence_transformers import SentenceTransformer
from pytest_ragmetrics.metrics import faithfulness, overlap
imported = time.perf_counter()
model = SentenceTransformer(sys.argv[1], device="cpu", local_files_only=True)
loaded = time.perf_counter()
calls, encode_s = 0, 0.0
def embed(texts):
    global calls, encode_s
    calls += 1
    begun = time.perf_counter()
    vectors = model.encode(list(texts), batch_size=64)
    encode_s += time.perf_counter() - begun
    return vectors
scores = []
with open(sys.argv[2], encoding="utf-8") as handle:
    for line in handle:
        row = json.loads(line)
        result = overlap(row["answer"], row["contexts"], embed, tau_sim=0.65)
        faithfulness(result.score, result.abstains, row.get("answerable"))
        scores.append(result.score)
scored = time.perf_counter()
print(json.dumps({
    "import_s": imported - started,
    "load_s": loaded - imported,
    "encode_s": encode_s,
    "rows_s": scored - loaded,
    "rows": len(scores),
    "encode_calls": calls,
    "mean_overlap": sum(scores) / len(scores),
}))
"""

EMBEDDINGS_LINE = re.compile(
    r"embeddings \((?P<process>[^)]+)\): (?P<texts>\d+) unique text\(s\), "
    r"(?P<cached>\d+) from cache, (?P<encoded>\d+) encoded"
    r"(?: in (?P<encode_s>[\d.]+) s \(\+ import (?P<import_s>[\d.]+) s, "
    r"model load (?P<load_s>[\d.]+) s\))?"
)
PASSED = re.compile(r"\b(\d+) passed\b")


@dataclass
class Run:
    """One timed subprocess: its wall clock and what it printed."""

    seconds: float
    stdout: str
    stderr: str


def benchmark_env() -> dict[str, str]:
    """The environment of every command: offline hub; no inherited pytest options."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def timed(name: str, argv: Sequence[str], cwd: Path) -> Run:
    """Run ``argv``, timing it; exit with its output if it fails."""
    started = time.perf_counter()
    done = subprocess.run(
        list(argv), cwd=cwd, env=benchmark_env(), capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(
            f"\n{name} failed with exit status {done.returncode}: {' '.join(argv)}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}\n"
        )
        raise SystemExit(1)
    print(f"  {name:<7} {seconds:8.2f} s", flush=True)
    return Run(seconds, done.stdout, done.stderr)


def last_json_line(run: Run) -> dict[str, Any]:
    """The JSON object a helper script printed as its last line of output."""
    lines = run.stdout.strip().splitlines()
    if not lines:
        raise SystemExit(f"no output from a helper script; stderr:\n{run.stderr}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def embeddings_line(run: Run) -> dict[str, Any] | None:
    """The plugin's ``embeddings (main): ...`` summary, parsed; ``None`` if it is missing."""
    found = EMBEDDINGS_LINE.search(run.stdout)
    if found is None:
        return None
    parsed: dict[str, Any] = {"line": found.group(0).strip(), "process": found["process"]}
    for key in ("texts", "cached", "encoded"):
        parsed[key] = int(found[key])
    for key in ("encode_s", "import_s", "load_s"):
        parsed[key] = float(found[key]) if found[key] is not None else 0.0
    return parsed


def passed_count(run: Run) -> int:
    """The number of passed tests in pytest's last summary line (0 if none is found)."""
    counts = PASSED.findall(run.stdout)
    return int(counts[-1]) if counts else 0


@dataclass
class Results:
    """Every repeat of every command, and what was checked along the way."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    breakdown: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, command: str, seconds: float, parts: Mapping[str, float] | None) -> None:
        self.seconds.setdefault(command, []).append(seconds)
        if parts is not None:
            self.breakdown.setdefault(command, []).append(dict(parts))

    def median(self, command: str) -> float:
        return statistics.median(self.seconds[command])

    def median_parts(self, command: str) -> dict[str, float]:
        runs = self.breakdown.get(command, [])
        if not runs:
            return {}
        return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def pick(mapping: Mapping[str, Any], *keys: str) -> dict[str, float]:
    """The timings ``keys`` of a parsed breakdown, as floats."""
    return {key: float(mapping[key]) for key in keys}


def check_pytest_run(
    results: Results, name: str, run: Run, rows: int, texts: int, cached: int
) -> dict[str, Any] | None:
    """Check a plugin run's pass count and embeddings line; record what is off."""
    passed = passed_count(run)
    if passed != rows:
        results.problems.append(f"{name}: {passed} passed, expected {rows}")
    line = embeddings_line(run)
    if line is None:
        results.problems.append(f"{name}: no 'embeddings (...)' line in the pytest output")
        return None
    expected = {"process": "main", "texts": texts, "cached": cached, "encoded": texts - cached}
    for key, value in expected.items():
        if line[key] != value:
            results.problems.append(f"{name}: {key} {line[key]!r}, expected {value!r}")
    results.details.setdefault(f"{name}_lines", []).append(line["line"])
    return line


def run_benchmark(args: argparse.Namespace, root: Path) -> Results:
    """Write the workspace, warm the file cache, then time every command ``repeats`` times."""
    rows = make_rows(args.rows)
    texts = unique_texts(rows)
    eval_dir, bare_dir = write_workspace(root, rows)
    texts_file = root / "texts.json"
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    model_dir = str(packaged_model_dir())
    python = sys.executable
    pytest = [python, "-m", "pytest", *PYTEST_FLAGS]
    results = Results()
    results.details.update(rows=len(rows), unique_texts=len(texts), model_dir=model_dir)
    print(f"dataset: {len(rows)} rows, {len(texts)} unique texts to embed, in {root}")
    print("warming the file cache (import sentence_transformers, not measured) ...", flush=True)
    results.details["load_before"] = load_average()
    timed("warm-up", [python, "-c", "import sentence_transformers"], root)

    for repeat in range(1, args.repeats + 1):
        print(f"repeat {repeat}/{args.repeats}", flush=True)
        run = timed("bare", [*pytest, str(bare_dir)], root)
        if passed_count(run) != len(rows):
            results.problems.append(f"bare: {passed_count(run)} passed, expected {len(rows)}")
        results.add("bare", run.seconds, None)

        run = timed("direct", [python, "-c", DIRECT_SCRIPT, model_dir, str(texts_file)], root)
        direct = last_json_line(run)
        results.details["torch_threads"] = direct["torch_threads"]
        results.add("direct", run.seconds, pick(direct, "import_s", "load_s", "encode_s"))

        cache_dir = root / f"cache-{repeat}"
        cache_dir.mkdir()
        command = [*pytest, str(eval_dir), "--ragmetrics-cache-dir", str(cache_dir)]
        run = timed("cold", command, root)
        line = check_pytest_run(results, "cold", run, len(rows), len(texts), cached=0)
        parts = pick(line, "import_s", "load_s", "encode_s") if line else None
        results.add("cold", run.seconds, parts)

        run = timed("warm", command, root)
        check_pytest_run(results, "warm", run, len(rows), len(texts), cached=len(texts))
        results.add("warm", run.seconds, None)

        run = timed(
            "naive", [python, "-c", NAIVE_SCRIPT, model_dir, str(eval_dir / "rows.jsonl")], root
        )
        naive = last_json_line(run)
        if naive["encode_calls"] != len(rows):
            results.problems.append(
                f"naive: {naive['encode_calls']} encode calls, expected {len(rows)}"
            )
        results.details["naive_mean_overlap"] = naive["mean_overlap"]
        results.add("naive", run.seconds, pick(naive, "import_s", "load_s", "encode_s"))
    results.details["load_after"] = load_average()
    return results


# ---------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------


def machine(details: Mapping[str, Any]) -> dict[str, Any]:
    """Where the numbers come from, and how busy the machine was around them."""
    packages = ("pytest-ragmetrics", "pytest", "sentence-transformers", "torch", "numpy")
    return machine_info(details, packages, torch_threads=details.get("torch_threads"))


def ratios(results: Results) -> dict[str, float]:
    median = results.median
    return {
        "cold/direct": median("cold") / median("direct"),
        "warm/bare": median("warm") / median("bare"),
        "naive/direct": median("naive") / median("direct"),
    }


def report(results: Results, args: argparse.Namespace) -> dict[str, Any]:
    """Print the tables; return the same results as a JSON-ready document."""
    info = machine(results.details)
    print()
    print(
        f"machine: {info['platform']}, {info['processor']}, Python {info['python']}, "
        f"{info['cpu_count']} CPUs ({info['cpus_usable']} usable), "
        f"torch threads {info['torch_threads']}"
    )
    load = info["load_average"]
    if load["before"] is not None:
        print(
            f"load average (1 min): {load['before']:.2f} before the benchmark, "
            f"{load['after']:.2f} after it (its own commands included)"
        )
    print(
        f"workload: {results.details['rows']} rows, {results.details['unique_texts']} unique "
        f"texts; median of {args.repeats} run(s)"
    )
    print()
    print(f"{'command':<8} {'seconds':>9}   runs")
    for command in ("direct", "cold", "warm", "bare", "naive"):
        runs = ", ".join(f"{s:.2f}" for s in results.seconds[command])
        print(f"{command:<8} {results.median(command):>9.2f}   {runs}")

    print()
    print(f"{'ratio':<13} {'value':>6}   target")
    values = ratios(results)
    verdicts: dict[str, bool] = {}
    for name, value in values.items():
        target = TARGETS.get(name)
        if target is None:
            print(f"{name:<13} {value:>6.2f}   (contrast: a per-row encoder)")
            continue
        verdicts[name] = value <= target
        verdict = "ok" if verdicts[name] else "MISSED"
        print(f"{name:<13} {value:>6.2f}   <= {target:<5g} {verdict}")

    print()
    print(f"{'breakdown (s)':<16} {'import':>7} {'load':>7} {'encode':>7} {'rest':>7}   wall")
    breakdown: dict[str, dict[str, float]] = {}
    for command in ("direct", "cold", "naive"):
        parts = results.median_parts(command)
        if not parts:
            print(f"{command:<16} (no breakdown: the plugin's embeddings line is missing)")
            continue
        wall = results.median(command)
        rest = wall - parts["import_s"] - parts["load_s"] - parts["encode_s"]
        breakdown[command] = {**parts, "rest_s": rest, "wall_s": wall}
        label = {"cold": "cold (plugin)"}.get(command, command)
        print(
            f"{label:<16} {parts['import_s']:>7.2f} {parts['load_s']:>7.2f} "
            f"{parts['encode_s']:>7.2f} {rest:>7.2f}   {wall:.2f}"
        )
    print(
        "rest = wall - import - load - encode: interpreter start, reading input, and for cold\n"
        "  pytest, collecting texts, cache, model fingerprint and scoring; for naive scoring\n"
        "  (its encode is the sum of its per-row encode calls)"
    )
    for key in ("cold_lines", "warm_lines"):
        for line in dict.fromkeys(results.details.get(key, [])):
            print(f"plugin ({key.split('_')[0]}): {line}")
    if results.problems:
        print()
        print("PROBLEMS:")
        for problem in results.problems:
            print(f"  - {problem}")
    return {
        "machine": info,
        "rows": results.details["rows"],
        "unique_texts": results.details["unique_texts"],
        "repeats": args.repeats,
        "seconds": {c: results.median(c) for c in results.seconds},
        "runs": results.seconds,
        "ratios": values,
        "targets": TARGETS,
        "targets_met": verdicts,
        "breakdown": breakdown,
        "plugin_lines": {key: results.details.get(key, []) for key in ("cold_lines", "warm_lines")},
        "naive_mean_overlap": results.details.get("naive_mean_overlap"),
        "problems": results.problems,
    }


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1000, help="dataset rows (default: 1000)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="runs of each command; the median is reported"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.repeats < 1:
        parser.error("--rows and --repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-grounding-") as tmp:
        results = run_benchmark(args, Path(tmp))
    document = report(results, args)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        print(f"\nresults written to {args.out}")
    return 1 if results.problems else 0


if __name__ == "__main__":
    sys.exit(main())
