"""The NLI cross-encoder judge on tiny models built here: no download, and the verdict
follows the model's entailment label, found by name in its id2label."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_ragmetrics.embeddings.model import packaged_model_dir
from pytest_ragmetrics.metrics.trust.judges import NliJudge, NliModelError

LABELS = {0: "contradiction", 1: "entailment", 2: "neutral"}


def tiny_nli(directory: Path, favoured: int, labels: dict[int, str] = LABELS) -> Path:
    """A one-layer BERT classifier whose output always favours label ``favoured``: its
    classifier weights are 0 and the bias is 10 for that label, 0 for the others."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=len(labels),
        id2label=labels,
        label2id={label: i for i, label in labels.items()},
    )
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        model.classifier.bias[favoured] = 10.0
    model.save_pretrained(directory)
    source = packaged_model_dir()
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(source / name, directory / name)
    return directory


def test_entailed_when_the_entailment_label_wins(tmp_path: Path) -> None:
    judge = NliJudge.load(tiny_nli(tmp_path / "yes", favoured=1))
    assert judge.entailment == 1
    assert judge("Title: A\nAlpha scored first.", "Alpha scored first.") is True


def test_not_entailed_when_another_label_wins(tmp_path: Path) -> None:
    judge = NliJudge.load(tiny_nli(tmp_path / "no", favoured=0))
    assert judge("Title: A\nAlpha scored first.", "Alpha scored first.") is False


def test_the_entailment_label_is_found_by_name_wherever_it_is(tmp_path: Path) -> None:
    labels = {0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}
    judge = NliJudge.load(tiny_nli(tmp_path / "upper", favoured=0, labels=labels))
    assert judge.entailment == 0
    assert judge("p", "h") is True


def test_a_model_without_an_entailment_label_is_refused(tmp_path: Path) -> None:
    directory = tiny_nli(tmp_path / "sentiment", favoured=0, labels={0: "negative", 1: "positive"})
    with pytest.raises(NliModelError, match="expected one entailment label"):
        NliJudge.load(directory)


def test_a_directory_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NliModelError, match="not a model directory"):
        NliJudge.load(tmp_path)
