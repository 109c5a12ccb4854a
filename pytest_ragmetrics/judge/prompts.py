"""The judge's prompts: their names, the placeholders each takes, and their text.

Each prompt ships in ``prompts/<name>.txt``; a project may replace any of them with a file
of the same name in the directory ``[judge] prompts`` names. An override must use exactly
its prompt's placeholders (``string.Template`` ``$names``), so it can neither drop the
answer it judges nor ask for a field no caller fills.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template

PROMPT_NAMES = (
    "faithfulness_judge",
    "answer_relevance",
    "answer_correctness",
    "e2e_score",
    "entailment",
)
# The ``string.Template`` placeholders of each prompt: an override must use all of them and
# no others, so a prompt can neither drop the answer it judges nor ask for a field no
# caller fills.
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "faithfulness_judge": frozenset({"question", "answer", "contexts"}),
    "answer_relevance": frozenset({"question", "answer"}),
    "answer_correctness": frozenset({"question", "answer", "gold"}),
    "e2e_score": frozenset({"question", "answer", "gold"}),
    "entailment": frozenset({"premise", "hypothesis"}),
}
SYSTEM_MESSAGE = "You are a careful, strict evaluator. Reply with one JSON object and nothing else."


def placeholder_problem(name: str, text: str) -> str | None:
    """Why ``text`` cannot serve as prompt ``name``, or None when its placeholders are
    exactly ``PLACEHOLDERS[name]``."""
    template = Template(text)
    if not template.is_valid():
        return "a '$' that starts no placeholder (write $$ for a literal $)"
    allowed = PLACEHOLDERS[name]
    used = set(template.get_identifiers())
    if unknown := used - allowed:
        return f"unknown placeholder {_dollars(unknown)}; {name} takes {_dollars(allowed)}"
    if missing := allowed - used:
        return f"missing placeholder {_dollars(missing)}; {name} takes {_dollars(allowed)}"
    return None


def _dollars(names: frozenset[str] | set[str]) -> str:
    return ", ".join(f"${name}" for name in sorted(names))


def load_prompt(name: str, override_dir: Path | None) -> str:
    """The text of prompt ``name``: ``override_dir/<name>.txt`` when that file exists, else
    the one shipped in the package."""
    if name not in PROMPT_NAMES:
        raise ValueError(f"unknown prompt {name!r}; expected one of {', '.join(PROMPT_NAMES)}")
    if override_dir is not None:
        override = override_dir / f"{name}.txt"
        if override.is_file():
            return override.read_text(encoding="utf-8")
    shipped = resources.files("pytest_ragmetrics.judge").joinpath("prompts", f"{name}.txt")
    return shipped.read_text(encoding="utf-8")
