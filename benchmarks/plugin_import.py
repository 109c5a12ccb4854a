"""What importing the plugin adds to every pytest start, against ``import pytest`` itself.

pytest imports the plugin's entry point (``[project.entry-points.pytest11]`` in
pyproject.toml) in every run of every project it is installed in, and every run registers
the fixtures' modules it names (``FIXTURE_MODULES`` of ``plugin/hooks.py``), so both are
timed. Each round runs, in a
fresh interpreter with bytecode written (``PYTHONDONTWRITEBYTECODE`` removed from the
environment, so the first round writes what the others read)::

    python -X importtime -c "import pytest; import <entry point>; ..."

and reads CPython's import-time table (microseconds, one line per module, nested imports
indented under the module that triggered them). ``pytest`` is the cumulative time of the
top-level ``pytest`` line; the plugin's is the sum of the cumulative times of the top-level
lines after it: every module the entry points import that pytest had not. The figures are
the medians over the rounds, and the ratio is the median of each round's plugin / pytest
(a round's two numbers share the machine's load, so the ratio is steadier than either).
``--root`` times another checkout (the plugin before a change, say); ``--modules N`` lists
the N modules with the largest median self time on the plugin's side: where the time
goes. Nothing is asserted: the figures are for reading (docs/performance.md, "Plugin
import")::

    .venv/bin/python benchmarks/plugin_import.py --rounds 20 --modules 15
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# The entry point, and the fixtures' modules every run registers from it (kept equal to
# plugin/hooks.py's FIXTURE_MODULES: ``--root`` may time a checkout of another version).
ENTRY_POINTS = (
    "pytest_ragmetrics.plugin.hooks",
    "pytest_ragmetrics.plugin.fixtures",
    "pytest_ragmetrics.plugin.dataset_fixtures",
)


@dataclass(frozen=True)
class Round:
    """One interpreter's figures, in milliseconds: pytest's import, what the entry points
    added after it, and the self time of each module they imported."""

    pytest_ms: float
    plugin_ms: float
    self_ms: dict[str, float] = field(default_factory=dict)


def parse_importtime(table: str) -> Round:
    """The figures of one ``-X importtime`` table (CPython's stderr): a line reads
    ``import time: <self us> | <cumulative us> | <indent><module>``; a top-level import has
    no indent. Every line after the top-level ``pytest`` one belongs to the plugin."""
    pytest_us: int | None = None
    plugin_us = 0
    self_us: dict[str, float] = {}
    for line in table.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|", 2)
        module = name.strip()
        top_level = not name.removeprefix(" ").startswith(" ")
        if pytest_us is None:
            if top_level and module == "pytest":
                pytest_us = int(cumulative)
            continue
        self_us[module] = int(own) / 1000
        if top_level:
            plugin_us += int(cumulative)
    if pytest_us is None:
        raise ValueError("plugin_import: no top-level `pytest` line in the -X importtime output")
    return Round(pytest_us / 1000, plugin_us / 1000, self_us)


def run_round(python: str, modules: tuple[str, ...], root: Path) -> Round:
    """Import pytest, then ``modules``, in a fresh interpreter whose first import path is
    ``root``; its import-time table."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])
    code = "; ".join(f"import {name}" for name in ("pytest", *modules))
    done = subprocess.run(
        [python, "-X", "importtime", "-c", code],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"plugin_import: `{code}` failed:\n{done.stderr[-2000:]}")
    return parse_importtime(done.stderr)


def slowest(rounds: list[Round], count: int) -> list[tuple[str, float]]:
    """The ``count`` modules with the largest median self time (0 in a round without it)."""
    times: dict[str, list[float]] = defaultdict(list)
    for one in rounds:
        for module, ms in one.self_ms.items():
            times[module].append(ms)
    medians = {
        module: statistics.median([*ms, *[0.0] * (len(rounds) - len(ms))])
        for module, ms in times.items()
    }
    return sorted(medians.items(), key=lambda item: -item[1])[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="interpreters timed (default 20)")
    parser.add_argument("--modules", type=int, default=0, help="list the N slowest modules")
    parser.add_argument("--python", default=sys.executable, help="the interpreter to time")
    parser.add_argument(
        "--root",
        type=Path,
        default=Path(__file__).resolve().parents[1],
        help="the checkout whose pytest_ragmetrics is imported (default: this one); "
        "another, e.g. `git worktree add`'s, to time a version against this one",
    )
    args = parser.parse_args()
    root = args.root.resolve()
    run_round(args.python, ENTRY_POINTS, root)  # writes the bytecode the timed rounds read
    rounds = [run_round(args.python, ENTRY_POINTS, root) for _ in range(args.rounds)]
    pytest_ms = statistics.median(one.pytest_ms for one in rounds)
    plugin_ms = statistics.median(one.plugin_ms for one in rounds)
    ratio = statistics.median(one.plugin_ms / one.pytest_ms for one in rounds)
    print(f"{root}: {len(rounds)} rounds, load average (1 min) {os.getloadavg()[0]:.2f}")
    print(f"import pytest                   {pytest_ms:7.1f} ms (median)")
    print(f"the plugin's entry points after {plugin_ms:7.1f} ms (median)")
    print(f"plugin / pytest                 {ratio:7.2f}   (median of the rounds' ratios)")
    if args.modules:
        print(f"\nthe {args.modules} largest self times on the plugin's side (median ms):")
        for module, ms in slowest(rounds, args.modules):
            print(f"{ms:7.2f}  {module}")


if __name__ == "__main__":
    main()
