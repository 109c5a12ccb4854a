"""Benchmark of the embedding "prepare, then score" pipeline of pytest-ragmetrics against a
direct MiniLM encode, and of a cached run's per-row cost against bare pytest.

Run it from the repository root with the project's virtualenv::

    .venv/bin/pytest benchmarks/bench_grounding.py --benchmark-only [--bench-size large]

What is measured
----------------
A deterministic synthetic dataset of 40 rows (1,000 with ``--bench-size large``;
``random.Random(0)``): five contexts per row and a three-sentence answer whose every
sentence paraphrases a different context and cites it with one ``[CIT:<doc_id>]``. The
overlap metric therefore embeds six texts per row (three answer sentences, markers
stripped, and the three cited contexts), all of them distinct.

Two cases:

``grounding encode``
    reference: the packaged all-MiniLM-L6-v2 loaded with sentence-transformers from its
    directory (``SentenceTransformer(dir, device="cpu")``), then one
    ``model.encode(texts, batch_size=64)`` of the run's unique texts: the floor any
    pipeline built on this model pays. ours: the plugin's ``EmbeddingStore`` with an empty
    on-disk cache (a fresh directory each round) preparing the same texts (lookup, encode
    in length-sorted chunks, store), then ``overlap`` and ``faithfulness`` of every row
    from the prepared vectors. Both use the same loaded model, so loading is in neither.
``per-row overhead``
    reference: ``pytest <bare>``, as many trivial parametrized tests as rows (the cost of
    pytest itself, with the plugin installed but unused). ours: ``pytest <evals>``, an
    eval recording ``overlap`` and ``faithfulness`` for every row, with everything
    already in the cache (one unmeasured run fills it): the answers' sentence analyses and
    the similarity of every sentence to its cited context, so no vector is read and
    neither numpy nor torch is imported. Both are subprocesses with ``-p no:cacheprovider
    -q -p no:xdist``, ``HF_HUB_OFFLINE=1`` and bytecode written, timed wall clock, three
    rounds each; near 1 means a cached run costs what running as many tests costs.

Torch's intra-op threads default to the number of cores, so encoding is very sensitive to
other busy processes (on a 2-core machine with one core taken by another process, 2
threads were seen 2.5x slower than 1 on large batches): read the load average the summary
prints.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_ragmetrics.embeddings.cache import EmbeddingCache
from pytest_ragmetrics.embeddings.model import PACKAGED_MODEL, embedder_for, packaged_model_dir
from pytest_ragmetrics.embeddings.prepare import EmbeddingStore
from pytest_ragmetrics.metrics import faithfulness, overlap
from pytest_ragmetrics.metrics.grounding import claims, overlap_texts

from conftest import SIDES, Side, Timer

CONTEXTS_PER_ROW = 5
CITED_PER_ROW = 3
MIN_WORDS, MAX_WORDS = 25, 40
PYTEST_FLAGS = ("-p", "no:cacheprovider", "-q", "-p", "no:xdist")
ROWS = {"small": 40, "large": 1_000}

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
# The two sides of each case
# ---------------------------------------------------------------------------------------


def benchmark_env() -> dict[str, str]:
    """The environment of every subprocess: offline hub; no inherited pytest options;
    bytecode written and read, as in a user's runs."""
    unset = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["HF_HUB_OFFLINE"] = "1"
    return env


def run_pytest(directory: Path, *args: str) -> str:
    """``pytest`` in ``directory``; its output. A failed run fails the benchmark."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST_FLAGS, *args],
        cwd=directory,
        env=benchmark_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"pytest in {directory} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Workspace:
    rows: list[dict[str, Any]]
    texts: list[str]
    eval_dir: Path
    bare_dir: Path


@pytest.fixture(scope="module")
def workspace(size: str, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    rows = make_rows(ROWS[size])
    eval_dir, bare_dir = write_workspace(tmp_path_factory.mktemp("grounding"), rows)
    return Workspace(rows, unique_texts(rows), eval_dir, bare_dir)


@pytest.fixture(scope="module")
def model() -> Any:
    """The packaged MiniLM, loaded once with sentence-transformers."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)


def score_rows(store: EmbeddingStore, rows: Sequence[Mapping[str, Any]]) -> list[float]:
    """Prepare every row's texts in bulk, then score each row from the prepared vectors."""
    store.prepare(text for row in rows for text in row_texts(row))
    scores = []
    for row in rows:
        result = overlap(row["answer"], row["contexts"], store.embed, tau_sim=0.65)
        faithfulness(result.score, result.abstains, row.get("answerable"))
        scores.append(result.score)
    return scores


@pytest.mark.parametrize("side", SIDES)
def test_grounding_encode(
    compare: Timer,
    workspace: Workspace,
    model: Any,
    tmp_path_factory: pytest.TempPathFactory,
    side: Side,
) -> None:
    if side == "reference":
        vectors = compare(
            "grounding encode",
            side,
            lambda: model.encode(workspace.texts, batch_size=64),
            rounds=3,
        )
        assert np.asarray(vectors).shape == (len(workspace.texts), 384)
        return
    embedder = embedder_for(PACKAGED_MODEL)
    embedder.encode(["load the model before timing"])  # loading is in neither side

    def fresh_store() -> tuple[tuple[Any, ...], dict[str, Any]]:
        cache = EmbeddingCache(tmp_path_factory.mktemp("cache"))
        return (EmbeddingStore(lambda _cache: embedder, cache),), {}

    def prepare_and_score(store: EmbeddingStore) -> list[float]:
        try:
            return score_rows(store, workspace.rows)
        finally:
            store.close()

    scores = compare("grounding encode", side, prepare_and_score, rounds=3, setup=fresh_store)
    assert len(scores) == len(workspace.rows)


@pytest.fixture(scope="module")
def warm_cache(workspace: Workspace) -> None:
    """One unmeasured run of the eval fills its cache."""
    output = run_pytest(workspace.eval_dir)
    assert f"{len(workspace.rows)} passed" in output, output


@pytest.mark.parametrize("side", SIDES)
def test_per_row_overhead(
    compare: Timer, workspace: Workspace, warm_cache: None, side: Side
) -> None:
    directory = workspace.eval_dir if side == "ours" else workspace.bare_dir
    output = compare("per-row overhead", side, lambda: run_pytest(directory), rounds=3)
    assert f"{len(workspace.rows)} passed" in output, output
    if side == "ours":  # every similarity came from the cache: no text looked up
        assert "sentence similarities from cache" in output, output
        assert "unique text(s)" not in output, output
