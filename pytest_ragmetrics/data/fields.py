"""The fields of a row that the plugin knows (docs/datasets.md#fields), and their checks.

``validate_fields`` gives a ``Problem`` per known field of the wrong type or shape, each
saying what was expected and what was found; unknown fields are kept unchecked. Every
format's rows go through it (``data.checks``), and so do a live system's outputs
(``live.system``). A number no float holds (a finite number must be one) and a count or
integer beyond ``EXACT_INT`` are refused: aggregates are floats.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pytest_ragmetrics.data.streams import Problem

EXACT_INT = 2**53  # the largest count or integer a float (an aggregate) holds exactly


Validator = Callable[[Any], str | None]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for any float
        return False


def _is_exact_int(value: Any) -> bool:
    return is_int(value) and -EXACT_INT <= value <= EXACT_INT


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut short when long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"


def _str(value: Any) -> str | None:
    return None if isinstance(value, str) else f"expected a string, got {kind_of(value)}"


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"expected true or false, got {kind_of(value)}"


def _str_list(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return f"expected a list of strings, got {kind_of(value)}"


def _ranked_lists(value: Any) -> str | None:
    if isinstance(value, list) and all(_str_list(v) is None for v in value):
        return None
    return f"expected a list of ranked doc-id lists, got {kind_of(value)}"


def _count(value: Any) -> str | None:
    if _is_exact_int(value) and value >= 0:
        return None
    return f"expected a count >= 0 and at most 2**53 (aggregates are floats), got {shown(value)}"


def _gold(value: Any) -> str | None:
    if isinstance(value, str) or (_str_list(value) is None and value):
        return None
    if isinstance(value, list) and value and all(_str_list(g) is None and g for g in value):
        return None  # answer groups, each a list of aliases (ASQA, Trust-Score)
    return (
        "expected a string, a non-empty list of strings, or a non-empty list of "
        f"non-empty alias lists, got {shown(value)}"
    )


def _contexts(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of {{doc_id, text}} objects, got {kind_of(value)}"
    for i, ctx in enumerate(value):
        if not isinstance(ctx, dict):
            return f"item {i}: expected an object, got {kind_of(ctx)}"
        for key in ("doc_id", "text"):
            if not isinstance(ctx.get(key), str):
                return f"item {i}: {key!r} must be a string, got {kind_of(ctx.get(key))}"
        for key in ("title", "domain", "url"):
            if key in ctx and not isinstance(ctx[key], str):
                return f"item {i}: {key!r} must be a string, got {kind_of(ctx[key])}"
        if "rank" in ctx and not _is_exact_int(ctx["rank"]):
            return f"item {i}: 'rank' must be an integer within ±2**53, got {shown(ctx['rank'])}"
        if "score" in ctx and not _is_number(ctx["score"]):
            return f"item {i}: 'score' must be a finite number, got {_not_a_float(ctx['score'])}"
    return None


def _relevant(value: Any) -> str | None:
    if _str_list(value) is None:
        return None
    expected = "expected a list of doc ids or a {doc_id: grade} object"
    if not isinstance(value, dict):
        return f"{expected}, got {shown(value)}"
    for doc_id, grade in value.items():
        if not _is_number(grade):
            grade_of = f"the grade of {shown(doc_id)}"
            return f"{expected}: {grade_of} must be a finite number, got {_not_a_float(grade)}"
    return None


def _tokens(value: Any) -> str | None:
    if is_int(value):
        return _count(value)
    if isinstance(value, dict):
        if set(value) != {"prompt", "completion"}:
            return (
                f"an object must have exactly 'prompt' and 'completion', got {shown(sorted(value))}"
            )
        return _count(value["prompt"]) or _count(value["completion"])
    if isinstance(value, list):
        for i, call in enumerate(value):
            if not isinstance(call, dict):
                return f"call {i}: expected an object, got {kind_of(call)}"
            for key in ("prompt_tokens", "completion_tokens"):
                if key not in call:
                    return f"call {i}: {key!r} is missing"
                problem = _count(call[key])
                if problem:
                    return f"call {i}: {key!r}: {problem}"
            if "stage" in call and not isinstance(call["stage"], str):
                return f"call {i}: 'stage' must be a string, got {kind_of(call['stage'])}"
            if "model" in call and _model(call["model"]):
                return f"call {i}: 'model': {_model(call['model'])}"
        return None
    return f"expected an int, {{prompt, completion}} or a list of calls, got {kind_of(value)}"


def _model(value: Any) -> str | None:
    """The model that spent a row's (or a call's) tokens, as ``[settings.prices]`` names it."""
    if isinstance(value, str) and value.strip():
        return None
    return f"expected the model's name, a non-empty string, got {shown(value)}"


def _not_a_float(value: Any) -> str:
    """Why a number is refused: an integer too large for any float says so."""
    if is_int(value) and not _is_number(value):
        return f"an integer of {len(str(abs(value)))} digits, too large for a float"
    return shown(value)


def _latency(value: Any) -> str | None:
    if _is_number(value) and value >= 0:
        return None
    return f"expected a finite number of milliseconds >= 0, got {_not_a_float(value)}"


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else f"expected an object, got {kind_of(value)}"


def _human(value: Any) -> str | None:
    """People's labels for the judge metrics: ``{metric: label}``, each a finite number
    (which metrics, and the labels' scale, are checked by the metric that reads them)."""
    if not isinstance(value, dict) or not value:
        return f"expected an object of judge metric -> label, got {shown(value)}"
    for metric, label in value.items():
        if not _is_number(label):
            return (
                f"the label of {shown(metric)} must be a finite number, got {_not_a_float(label)}"
            )
    return None


def _int(value: Any) -> str | None:
    if _is_exact_int(value):
        return None
    return f"expected an integer within ±2**53 (aggregates are floats), got {shown(value)}"


VALIDATORS: dict[str, Validator] = {
    "question": _str,
    "answer": _str,
    "gold": _gold,
    "contexts": _contexts,
    "retrieved": _str_list,
    "relevant": _relevant,
    "answerable": _bool,
    "tokens": _tokens,
    "latency_ms": _latency,
    "system": _str,
    "model": _model,
    "telemetry": _object,
    "repeats": _str_list,
    "retrieved_repeats": _ranked_lists,
    "session_id": _str,
    "turn": _int,
    "show": _bool,
    "show_gold": _bool,
    "human": _human,
}


_ORDER = {name: place for place, name in enumerate(VALIDATORS)}


def kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def validate_fields(data: Mapping[str, Any]) -> list[Problem]:
    """Problems with the known fields of ``data``; unknown fields are kept unchecked."""
    problems = []
    for name, value in data.items():  # a row has a few of the known fields: look them up
        validator = VALIDATORS.get(name)
        if validator is not None:
            message = validator(value)
            if message:
                problems.append(Problem(name, message))
    if len(problems) > 1:  # in the order of VALIDATORS, whatever the row's order
        problems.sort(key=lambda problem: _ORDER[problem.field])
    return problems
