"""The Ray engine on a cluster of two nodes on this machine: the local engine's reports,
rows scored on both nodes, and a worker killed mid-run.

``ray.cluster_utils.Cluster`` starts a head node and one worker node (one CPU each, no
dashboard) as separate raylets on this machine, shared by the module's tests and shut
down when they end. It runs in a helper process of its own, with a token of the test's
(Ray's token authentication, ``RAY_AUTH_TOKEN``): a Ray started earlier in this process
(test_ray_engine.py's) leaves Ray's token mode and a cached token behind, which a cluster
started here would use and a pytest subprocess could not find. Each run on it is a
pytest subprocess with ``RAY_ADDRESS`` set to the cluster and the same token, under a
timeout (a run that hung fails its test, never the suite), and its cache folder one
every node reads at the same path, as a cluster needs. The reference for every
number is the local engine's run (bulk mode) of the same eval on the same data.

The eval records, on a Ray worker, which node scored each row, in a side file: a test of
two nodes that scored everything on one would prove nothing.

Skipped, with the reason, where Ray is not installed; with ``CI`` set (``.ci/run``, which
installs the ``ray`` extra) a missing Ray fails instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pytest
from helpers.generated import BROKEN, GENERATED_ROWS, generated_rows
from helpers.project import Project

if os.environ.get("CI") and importlib.util.find_spec("ray") is None:
    pytest.fail("CI is set but Ray is not installed: pip install -e '.[dev,ray]'", pytrace=False)
ray = pytest.importorskip("ray", reason="the Ray engine's tests need Ray: pip install -e '.[ray]'")

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
ROWS = GENERATED_ROWS

EVAL = """
import os
import signal
import sys

import pytest

pytestmark = pytest.mark.ragmetrics(dataset="data/rows.jsonl", batch_size=1500)

NODES = {nodes!r}  # where a Ray worker notes which node scored each row
KILLED = {killed!r}  # the marker of a kill that happened
KILL_ONCE = {kill_once!r}  # the row whose worker is killed on its first attempt
KILL_ALWAYS = {kill_always!r}  # the row whose worker is killed on every attempt


def _ray_node():
    \"\"\"The node this row runs on when a Ray worker runs it; None in the pytest
    process (the local engine never imports Ray).\"\"\"
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return ray.get_runtime_context().get_node_id()


def _on_ray(row):
    node = _ray_node()
    if node is None:
        return
    if row.id == KILL_ALWAYS or (row.id == KILL_ONCE and not os.path.exists(KILLED)):
        with open(KILLED, "a") as marker:
            marker.write(row.id + "\\n")
        os.kill(os.getpid(), signal.SIGKILL)
    with open(NODES, "a") as noted:
        noted.write(f"{{node}} {{os.getpid()}} {{row.id}}\\n")


def test_answers(row, em, f1, idk_citation, tokens, overlap):
    _on_ray(row)
    em(row); idk_citation(row); tokens(row); overlap(row)
    assert f1(row) > 0
"""

GATES = """
[gates]
"f1.mean" = ">= 0.3"
"em.mean" = ">= 0.5 @ 95%"
"idk_citation.sum" = "== 0"
"overlap.count" = ">= 1"
"""


# The helper process: a two-node cluster, its address and node ids on a line of their own
# (after anything Ray prints), shut down when the test closes its stdin.
CLUSTER = """
import json
import sys

from ray.cluster_utils import Cluster

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
try:
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes(timeout=60)
    nodes = [node.node_id for node in cluster.list_all_nodes()]
    print("CLUSTER", json.dumps({"address": cluster.address, "nodes": nodes}), flush=True)
    sys.stdin.read()
finally:
    cluster.shutdown()
"""


@dataclass(frozen=True)
class TwoNodes:
    """The running cluster: its address, its nodes' ids, and the environment of a process
    that joins it (the address and the token)."""

    address: str
    node_ids: frozenset[str]
    env: dict[str, str]


@pytest.fixture(scope="module")
def cluster() -> Iterator[TwoNodes]:
    """A head node and a worker node, one CPU each, shut down when the module's tests
    are done (or when starting them failed half-way); 120 s to start."""
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH")}
    helper = subprocess.Popen(
        [sys.executable, "-c", CLUSTER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**env, **auth},
    )
    assert helper.stdin is not None
    assert helper.stdout is not None
    waiting = ThreadPoolExecutor(1)  # reads the helper's line, within a time limit
    try:
        line = waiting.submit(_started, helper.stdout).result(timeout=120)
        assert line, f"the cluster did not start (exit status {helper.poll()})"
        started = json.loads(line)
        address = started["address"]
        nodes = frozenset(started["nodes"])
        yield TwoNodes(address, nodes, {**env, **auth, "RAY_ADDRESS": address})
    finally:
        helper.stdin.close()  # the helper shuts the cluster down
        try:
            helper.wait(timeout=60)
        except subprocess.TimeoutExpired:  # stuck starting: its stdout closes with it
            helper.kill()
            helper.wait()
        waiting.shutdown()


def _started(helper_output: IO[str]) -> str:
    """The helper's line saying the cluster started, without its marker; ``""`` if the
    helper ended first."""
    for line in helper_output:
        if line.startswith("CLUSTER "):
            return line.removeprefix("CLUSTER ")
    return ""


def _project(pytester: pytest.Pytester, kill_once: str = "", kill_always: str = "") -> Project:
    project = Project(pytester)
    _write_eval(project.path, kill_once, kill_always)
    return project


def _write_eval(path: Path, kill_once: str = "", kill_always: str = "") -> None:
    """The eval, its data and its gates in the folder ``path``."""
    (path / "data").mkdir(exist_ok=True)
    (path / "data" / "rows.jsonl").write_text(generated_rows(), encoding="utf-8")
    eval_source = EVAL.format(
        nodes=str(path / "nodes.txt"),
        killed=str(path / "killed.txt"),
        kill_once=kill_once,
        kill_always=kill_always,
    )
    (path / "test_eval.py").write_text(eval_source, encoding="utf-8")
    (path / "thresholds.toml").write_text(GATES, encoding="utf-8")


def _on_the_cluster(
    cluster: TwoNodes, project: Project
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """The eval run by the Ray engine on ``cluster``, its cache a folder every node reads
    at the same path (they share this machine's): the process and its JSON report."""
    done = _pytest(
        project.path,
        cluster.env,
        "--ragmetrics-engine=ray",
        f"--ragmetrics-cache-dir={project.path / 'shared-cache'}",
        "--ragmetrics-json=ray-report.json",
    )
    report = project.path / "ray-report.json"
    assert report.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads(report.read_text(encoding="utf-8"))


def _pytest(path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """pytest run on the project in the folder ``path`` in a process of its own, bounded
    in time."""
    return subprocess.run(
        [*PYTEST, *args],
        cwd=path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env=env,
    )


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The reference: the local engine's run of the eval (bulk mode, cold cache), once for
    the module's tests. Every test's eval is this one: the rows a test kills a worker on
    are killed only on a Ray worker, and the local engine never imports Ray, so its report
    is the same whichever row a test kills. Encoded on one thread, as each of the
    cluster's encoding actors does (one CPU each, so Ray gives each one thread): a
    vector's last bits depend on how many threads encoded it (docs/scale.md), on either
    engine."""
    path = tmp_path_factory.mktemp("local-engine")
    (path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    _write_eval(path)
    done = _pytest(
        path,
        {**os.environ, "OMP_NUM_THREADS": "1"},
        "--ragmetrics-mode=bulk",
        "--ragmetrics-no-cache",
        "--ragmetrics-json=local-report.json",
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # failing rows
    assert not (path / "nodes.txt").exists()  # no row ran on a Ray worker
    report: dict[str, Any] = json.loads((path / "local-report.json").read_text(encoding="utf-8"))
    return report


def _assert_same_evals(on_ray: dict[str, Any], local: dict[str, Any]) -> None:
    """The ``evals`` of two reports equal key by key (so that a difference names its key),
    then as a whole."""
    (ray_eval,) = on_ray["evals"]
    (local_eval,) = local["evals"]
    assert sorted(ray_eval) == sorted(local_eval)
    for key in local_eval:
        assert ray_eval[key] == local_eval[key], key
    assert on_ray["evals"] == local["evals"]


def _scored_on(project: Project) -> dict[str, list[str]]:
    """The nodes the side file says scored each row (a row retried after its worker died
    may be noted more than once)."""
    nodes: dict[str, list[str]] = {}
    for line in (project.path / "nodes.txt").read_text(encoding="utf-8").splitlines():
        node, _pid, row_id = line.split()
        nodes.setdefault(row_id, []).append(node)
    return nodes


def test_two_nodes_give_the_local_engines_report(
    cluster: TwoNodes, local: dict[str, Any], pytester: pytest.Pytester
) -> None:
    """Values, gates, failing rows and the bad row's error identical to the local
    engine's, and both nodes scored rows."""
    project = _project(pytester)
    done, on_ray = _on_the_cluster(cluster, project)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    _assert_same_evals(on_ray, local)
    (evaluation,) = on_ray["evals"]
    statuses = [row["status"] for row in evaluation["rows"]]
    # by hand: 429 rows answer the wrong city (0, 7, ..., 2996), 273 do not know (0, 11,
    # ..., 2992), 39 both (multiples of 77): 663 fail; line 1235 is not JSON
    assert (len(statuses), statuses.count("failed"), statuses.count("error")) == (3000, 663, 1)
    assert evaluation["rows"][BROKEN]["errors"][0].startswith("data/rows.jsonl:1235: ")
    scored = _scored_on(project)
    assert len(scored) == ROWS - 1  # the bad row fails before the test runs
    assert {node for nodes in scored.values() for node in nodes} == cluster.node_ids


def test_a_worker_killed_mid_run_loses_no_row_and_counts_none_twice(
    cluster: TwoNodes, local: dict[str, Any], pytester: pytest.Pytester
) -> None:
    """Row g2222's test kills its own worker process on its first attempt only (the
    marker file says it happened): Ray runs the task again, and every row is in the
    report once, with the local engine's numbers."""
    project = _project(pytester, kill_once="g2222")
    done, on_ray = _on_the_cluster(cluster, project)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert (project.path / "killed.txt").read_text(encoding="utf-8") == "g2222\n"
    (evaluation,) = on_ray["evals"]
    ids = [row["id"] for row in evaluation["rows"]]
    assert len(ids) == len(set(ids)) == ROWS == evaluation["n"]
    _assert_same_evals(on_ray, local)
    assert "g2222" in _scored_on(project)  # scored on its second attempt


LOST = (
    "data/rows.jsonl:2223: call raised LostRow: the Ray engine lost this row: run alone, "
    "its task failed on every attempt (Ray's error is above)"
)


def test_a_row_that_kills_its_worker_every_time_errors_alone_on_two_nodes(
    cluster: TwoNodes, local: dict[str, Any], pytester: pytest.Pytester
) -> None:
    """Row g2222 kills its worker on every attempt: its task fails three times (two
    retries), its rows are run again one a task, and g2222 fails three times more; only
    it errors, with the engine's message, as on a local Ray (test_ray_engine.py), and
    every other row is the local engine's."""
    project = _project(pytester, kill_always="g2222")
    done, on_ray = _on_the_cluster(cluster, project)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert (project.path / "killed.txt").read_text(encoding="utf-8") == "g2222\n" * 6
    (evaluation,) = on_ray["evals"]
    (local_eval,) = local["evals"]
    lost = evaluation["rows"][2222]
    assert (lost["id"], lost["status"], lost["errors"]) == ("g2222", "error", [LOST])
    others = evaluation["rows"][:2222] + evaluation["rows"][2223:]
    assert others == local_eval["rows"][:2222] + local_eval["rows"][2223:]
    assert (evaluation["n"], evaluation["errors"]) == (ROWS, 2)  # g2222 and the bad line
    assert "rows-1501-3000: 330 of 1500 rows failed, 1 errored" in done.stdout
