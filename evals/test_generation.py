"""Text quality of generated answers against reference answers (Tier 2), in English,
Russian, French and German: ROUGE with a Unicode-aware tokenizer, sacrebleu's BLEU, and
how stable the answer is when the same question is asked again (`repeats`)."""

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/generation.jsonl")


def test_overlap_with_reference(row, rouge1, rouge2, rougeL, bleu, f1):
    rouge1(row)
    rouge2(row)
    rougeL(row)
    bleu(row)  # per row: sentence BLEU; bleu.corpus in thresholds.toml: corpus BLEU
    f1(row)


def test_repeatable(row, response_exact_match_rate, response_semantic_consistency):
    response_exact_match_rate(row)
    # A rerun may be worded differently but must mean the same.
    assert response_semantic_consistency(row) >= 0.6
