"""The packaged all-MiniLM-L6-v2, for real: support decisions far from tau_sim.

The pairs were chosen so that the decision cannot flip on floating-point noise: each
cosine is asserted to lie at least 0.15 from tau_sim 0.65 before the decision is.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_ragmetrics.embeddings.model import (
    PACKAGED_MODEL,
    EmbeddingModelError,
    SentenceTransformerEmbedder,
    embedder_for,
    packaged_model_dir,
    resolve_model_dir,
)
from pytest_ragmetrics.metrics import cosine, overlap

TAU = 0.65
EIFFEL = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France."
NILE = "The Nile is the longest river in Africa, flowing north into the Mediterranean Sea."


@pytest.fixture(scope="module")
def model() -> SentenceTransformerEmbedder:
    return embedder_for(PACKAGED_MODEL)


@pytest.mark.parametrize(
    ("sentence", "context", "supported"),
    [
        ("The Eiffel Tower is in Paris.", EIFFEL, True),
        (
            "Canberra is the capital of Australia.",
            "Canberra is the capital city of Australia.",
            True,
        ),
        ("The Nile is the longest river in Africa.", NILE, True),
        ("Bananas are rich in potassium.", EIFFEL, False),
        ("Mount Everest is the highest mountain on Earth.", NILE, False),
    ],
)
def test_support_decisions_with_the_packaged_model(
    model: SentenceTransformerEmbedder, sentence: str, context: str, supported: bool
) -> None:
    a, b = model.encode([sentence, context])
    assert abs(cosine(a, b) - TAU) >= 0.15  # far from the threshold
    answer = f"{sentence[:-1]} [CIT:d1]."
    result = overlap(answer, [{"doc_id": "d1", "text": context}], model.encode, TAU)
    assert result.score == float(supported)


def test_vectors_are_normalised_384_floats(model: SentenceTransformerEmbedder) -> None:
    vectors = model.encode(["Paris", "Berlin is the capital of Germany."])
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)


def test_packaged_model_is_found_without_importing_its_package() -> None:
    directory = packaged_model_dir()
    assert (directory / "model.safetensors").is_file()
    assert resolve_model_dir(PACKAGED_MODEL) == directory.resolve()


def test_identity_is_the_content_of_the_model_directory(tmp_path: Path) -> None:
    for name in ("config.json", "modules.json"):
        (tmp_path / name).write_text("{}")
    first = embedder_for(str(tmp_path)).identity
    assert first == embedder_for(str(tmp_path)).identity
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    assert embedder_for(str(tmp_path)).identity != first


def test_a_gpus_vectors_are_cached_apart_from_a_cpus(tmp_path: Path) -> None:
    """The same weights on another device give vectors that differ in the last bits: a
    cache entry never serves both. The CPU's identity is the one caches always had."""
    for name in ("config.json", "modules.json"):
        (tmp_path / name).write_text("{}")
    cpu = embedder_for(str(tmp_path)).identity
    assert embedder_for(str(tmp_path), device="cpu").identity == cpu
    assert embedder_for(str(tmp_path), device="cuda").identity == f"{cpu}@cuda"
    assert cpu.startswith("sentence-transformers:")
    assert "@" not in cpu


def test_relative_model_directories_resolve_from_the_thresholds_file(tmp_path: Path) -> None:
    (tmp_path / "models" / "mine").mkdir(parents=True)
    (tmp_path / "models" / "mine" / "modules.json").write_text("[]")
    assert resolve_model_dir("models/mine", tmp_path) == (tmp_path / "models" / "mine").resolve()


@pytest.mark.parametrize("setting", ["sentence-transformers/all-mpnet-base-v2", "no/such/dir"])
def test_hub_names_are_refused_not_downloaded(setting: str, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError, match="never downloaded"):
        resolve_model_dir(setting, tmp_path)
