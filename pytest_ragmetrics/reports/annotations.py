"""GitHub annotations: a failed gate at its line of thresholds.toml, an errored or
failing row at its line of the dataset, shown in the pull request's diff and on the run's
page. Each is a workflow command printed on the step's output
(``::error file=evals/rows.jsonl,line=7,title=...::message``), escaped as GitHub documents
it (https://docs.github.com/actions/reference/workflow-commands-for-github-actions): in
the message ``%``, ``\\r`` and ``\\n``; in a property also ``:`` and ``,``. Text from the
data is made printable first (``printable``), so it can neither hold a control character
nor start a command of its own.

GitHub shows at most 10 error annotations of a step (and 50 of a job), so at most
``ANNOTATIONS_SHOWN`` errors are printed, gates first, and one notice says how many
were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragmetrics.printable import printable_text

# Error annotations printed per run: what GitHub shows of one step.
ANNOTATIONS_SHOWN = 10
# Characters of one annotation's message: GitHub cuts a long one anyway.
MESSAGE_SHOWN = 2_000


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    """One annotation: its level (``error``, ``notice``), where (a file relative to the
    repository's root, and its 1-based line when there is one), its title and message."""

    level: str
    title: str
    message: str
    file: str | None = None
    line: int | None = None

    def command(self) -> str:
        """The workflow command that makes it, escaped; its text made printable."""
        properties = []
        if self.file is not None:
            properties.append(f"file={_escape_property(self.file)}")
            if self.line is not None:
                properties.append(f"line={self.line}")
        properties.append(f"title={_escape_property(printable_text(self.title))}")
        message = printable_text(self.message)
        if len(message) > MESSAGE_SHOWN:
            message = message[: MESSAGE_SHOWN - 1] + "…"
        return f"::{self.level} {','.join(properties)}::{_escape_data(message)}"


def annotation_commands(
    gates: Sequence[Annotation], rows: Sequence[Annotation], rows_left: int = 0
) -> list[str]:
    """The workflow commands of the failed ``gates``, then of the ``rows``, at most
    ``ANNOTATIONS_SHOWN`` in all, and a notice counting those left out (``rows_left``:
    rows not even offered, beyond ``rows``)."""
    shown = [*gates, *rows][:ANNOTATIONS_SHOWN]
    left_gates = max(0, len(gates) - ANNOTATIONS_SHOWN)
    left_rows = len(rows) - (len(shown) - min(len(gates), ANNOTATIONS_SHOWN)) + rows_left
    commands = [annotation.command() for annotation in shown]
    if left_gates or left_rows:
        parts = [
            f"{count:,} {what}"
            for count, what in ((left_gates, "failed gate(s)"), (left_rows, "row(s)"))
            if count
        ]
        notice = Annotation(
            "notice",
            "pytest-ragmetrics: more annotations left out",
            f"{' and '.join(parts)} not annotated (GitHub shows {ANNOTATIONS_SHOWN} errors "
            "of a step): see the job's log and the reports",
        )
        commands.append(notice.command())
    return commands
