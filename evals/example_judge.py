"""A stand-in faithfulness judge for the bundled evals: an EXAMPLE, not a real judge.

``[judge] function = "example_judge:judge"`` in the root thresholds.toml makes the plugin
call ``judge`` in process instead of an LLM endpoint, so ``pytest evals/`` runs the
``faithfulness_judge`` metric and its agreement with people offline, in CI, with no
server (docs/judge.md#an-in-process-judge). It reads the prompt the plugin sends (the
shipped ``faithfulness_judge.txt``, filled in) and scores by word overlap, which no real
judge should: it cannot see a negation, a wrong number between right words, or a
paraphrase. Those misses are on purpose in ``data/judged.jsonl``: they are what the
agreement statistics are there to catch. Point ``[judge]`` at a real endpoint
(``base_url``, ``model``) to judge for real.

The rule: the share of the answer's content words (lower-cased words of three letters or
more, stop words and citation markers left out) found among the contexts' words gives
1.0 from ``SUPPORTED`` (0.8) up, 0.5 from ``PARTLY`` (0.5) up, else 0.0; an answer with no
content words, or one that says it does not know, makes no claim and scores 1.0, as the
prompt asks. Any prompt other than faithfulness_judge's gets a reply that is no verdict,
so using this judge for another metric errors its rows instead of scoring them.
"""

from __future__ import annotations

import json
import re
from string import Template

from pytest_ragmetrics.judge.prompts import load_prompt

SUPPORTED = 0.8  # share of content words found from which every claim counts as supported
PARTLY = 0.5  # from here up, some claims are supported
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CITATION = re.compile(r"\[(?:CIT:[^\]]*|\d+)\]")
_ABSTAIN = re.compile(r"\b(i don't know|i do not know|cannot answer|no information)\b")
_STOP_WORDS = (
    "the and for are was were with that this from its has have had but not his her their "
    "they them than then there which who whom what when where why how into onto also been "
    "being about over under more most such can could would should will may might one two "
    "all any each other some only very our out off per via yes"
)
_STOP = frozenset(_STOP_WORDS.split())


def _prompt_pattern() -> re.Pattern[str]:
    """The shipped faithfulness_judge prompt as a pattern: its text literally, each
    ``$placeholder`` a named group, so the fields are read back whatever they contain."""
    template = load_prompt("faithfulness_judge", None)
    pattern, end = "", 0
    for match in Template.pattern.finditer(template):
        name = match.group("named") or match.group("braced")
        literal = template[end : match.start()] + ("$" if match.group("escaped") else "")
        pattern += re.escape(literal) + (f"(?P<{name}>.*?)" if name else "")
        end = match.end()
    return re.compile(pattern + re.escape(template[end:]), re.DOTALL)


_PROMPT = _prompt_pattern()


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry a claim: lower-cased, three letters or more, stop
    words and citation markers left out."""
    words = _WORD.findall(_CITATION.sub(" ", text).lower())
    return [word for word in words if len(word) >= 3 and word not in _STOP]


def faithfulness(answer: str, contexts: str) -> tuple[float, str]:
    """The stand-in verdict: (score, reason) by the share of content words found."""
    if _ABSTAIN.search(answer.lower()):
        return 1.0, "The answer says it does not know: no claim to check."
    words = content_words(answer)
    if not words:
        return 1.0, "The answer makes no claim."
    available = set(content_words(contexts))
    found = sum(word in available for word in words)
    share = found / len(words)
    score = 1.0 if share >= SUPPORTED else 0.5 if share >= PARTLY else 0.0
    return score, f"{found} of {len(words)} content words of the answer are in the contexts."


def judge(messages: list[dict[str, str]]) -> str:
    """The reply to the plugin's messages: a faithfulness verdict as JSON, or, for any
    other prompt, text that is no verdict (the row then errors, loudly)."""
    match = _PROMPT.fullmatch(messages[-1]["content"]) if messages else None
    if match is None:
        return "example_judge answers faithfulness_judge prompts only"
    score, reason = faithfulness(match["answer"], match["contexts"])
    return json.dumps({"score": score, "reason": reason})
