"""SQL datasets against a real PostgreSQL server (Debian's binaries, psycopg 3 through
SQLAlchemy): the same aggregates as the JSONL eval, and bad inputs that each end in a
clear error naming the query, never an INTERNALERROR, with the other evals unaffected.

The server is this module's: ``initdb`` into a fresh directory, ``pg_ctl start`` on a Unix
socket there and on 127.0.0.1 (for the password test), stopped at the end whatever
happened. The directory is made with ``tempfile.mkdtemp`` in the system's temporary
folder, not under pytest's ``tmp_path``: a Unix socket's path may not exceed 107 bytes,
which tmp_path's long names do, and as root the server runs as the ``postgres`` user
(PostgreSQL refuses to run as root), who cannot enter pytest's root-only folders.

Without the binaries these tests skip, except under CI (``CI`` set), where they fail:
.ci/run installs them, so a skip there would hide a broken setup.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers.project import EVAL

BIN = Path("/usr/lib/postgresql/15/bin")
REPOSITORY = Path(__file__).parents[2]
ANSWERS = REPOSITORY / "evals" / "data" / "answers.jsonl"
WAIT = 60  # seconds any one server command may take before the test gives up
PASSWORD = "right-horse-battery"


def _unavailable(reason: str) -> None:
    """Skip for want of PostgreSQL; fail instead under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, and CI must run the PostgreSQL tests")
    pytest.skip(reason)


@dataclass(frozen=True)
class Server:
    """A running server: its socket directory and TCP port, and a superuser to set up."""

    directory: Path
    port: int

    def url(self, database: str = "rag", user: str = "rag") -> str:
        """A SQLAlchemy URL over the Unix socket (trusted: no password)."""
        return f"postgresql+psycopg://{user}@/{database}?host={self.directory}&port={self.port}"

    def tcp_url(self, password: str) -> str:
        return f"postgresql+psycopg://rag:{password}@127.0.0.1:{self.port}/rag"

    def connect(self, database: str = "rag", user: str = "rag") -> Any:
        import psycopg

        return psycopg.connect(
            host=str(self.directory),
            port=self.port,
            user=user,
            dbname=database,
            autocommit=True,
            connect_timeout=WAIT,
        )


def _as_server_user() -> dict[str, Any]:
    """Run server commands as ``postgres`` when this process is root."""
    return {"user": "postgres"} if os.geteuid() == 0 else {}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(*command: str) -> None:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=WAIT, check=False, **_as_server_user()
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    if not (BIN / "initdb").exists():
        _unavailable(f"no PostgreSQL binaries in {BIN} (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'pytest-ragmetrics[postgresql]')")
    directory = Path(tempfile.mkdtemp(prefix="ragmetrics-pg-"))
    directory.chmod(0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
    data, port = directory / "data", _free_port()
    try:
        _run(
            str(BIN / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--no-sync",
        )
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {directory} -c fsync=off"
        log = str(directory / "server.log")
        _run(
            str(BIN / "pg_ctl"),
            "start",
            "-w",
            "-t",
            str(WAIT),
            "-D",
            str(data),
            "-l",
            log,
            "-o",
            options,
        )
        try:
            found = Server(directory, port)
            _create_role_and_database(found)
            yield found
        finally:
            _run(
                str(BIN / "pg_ctl"),
                "stop",
                "-w",
                "-t",
                str(WAIT),
                "-m",
                "immediate",
                "-D",
                str(data),
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _create_role_and_database(server: Server) -> None:
    with server.connect("postgres", "postgres") as admin:
        admin.execute(f"CREATE ROLE rag LOGIN PASSWORD '{PASSWORD}'")
        admin.execute("CREATE DATABASE rag OWNER rag")
    with server.connect() as connection:
        connection.execute(
            "CREATE TABLE qa_log (qid text PRIMARY KEY, question text NOT NULL, answer text, "
            "gold jsonb, contexts jsonb, answerable boolean, tokens jsonb, "
            "latency_ms double precision, system text)"
        )
        rows = [json.loads(line) for line in ANSWERS.read_text(encoding="utf-8").splitlines()]
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO qa_log VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (
                        row["id"],
                        row["question"],
                        row.get("answer"),
                        _jsonb(row.get("gold")),
                        _jsonb(row.get("contexts")),
                        row.get("answerable"),
                        _jsonb(row.get("tokens")),
                        row.get("latency_ms"),
                        row.get("system"),
                    )
                    for row in rows
                ],
            )


def _jsonb(value: Any) -> Any:
    from psycopg.types.json import Jsonb

    return None if value is None else Jsonb(value)


SQL_EVAL = """
import pytest
from pytest_ragmetrics import SqlDataset

pytestmark = pytest.mark.ragmetrics(dataset=SqlDataset({args}))


def test_answers(row, em, f1, abstain, idk_citation, tokens, latency):
    assert idk_citation(row) == 0
    em(row); f1(row); abstain(row); tokens(row); latency(row)
"""


def _project(pytester: pytest.Pytester, args: str) -> None:
    pytester.makeini("[pytest]\n")
    pytester.makefile(".toml", thresholds="[gates]\n")
    (pytester.path / "data").mkdir(exist_ok=True)
    (pytester.path / "data" / "answers.jsonl").write_bytes(ANSWERS.read_bytes())
    (pytester.path / "test_pg_query.py").write_text(SQL_EVAL.format(args=args))
    # Another eval, over JSONL, that nothing wrong with the query may touch.
    (pytester.path / "test_pg_jsonl.py").write_text(
        EVAL.replace("data/rows.jsonl", "data/answers.jsonl")
    )


QA_ARGS = 'query="SELECT * FROM qa_log", url_env="RAG_DB", id_column="qid"'


def _evaluations(pytester: pytest.Pytester) -> dict[str, Any]:
    report = json.loads((pytester.path / "r.json").read_text())
    return {evaluation["name"]: evaluation for evaluation in report["evals"]}


@pytest.mark.parametrize("mode", ["row", "bulk"])
def test_a_postgresql_query_aggregates_as_the_same_rows_in_jsonl(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    from pytest_ragmetrics.data import sql

    monkeypatch.setattr(sql, "BATCH_ROWS", 7)  # 48 rows: several fetches of a cursor
    monkeypatch.setenv("RAG_DB", server.url())
    _project(pytester, QA_ARGS)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--ragmetrics-json=r.json", f"--ragmetrics-mode={mode}"
    )
    assert result.ret == 0, result.stdout.str()
    evaluations = _evaluations(pytester)
    jsonl, query = evaluations["test_pg_jsonl.py"], evaluations["test_pg_query.py"]
    assert query["dataset"] == "sql($RAG_DB, qa_log)"
    assert (query["n"], query["errors"]) == (jsonl["n"], jsonl["errors"]) == (48, 0)
    assert query["metrics"] == jsonl["metrics"]
    assert [(r["id"], r["metrics"]) for r in query["rows"]] == [
        (r["id"], r["metrics"]) for r in jsonl["rows"]
    ]


def _errors_alone(result: pytest.RunResult, *expected: str) -> str:
    """The run's output, checked: no INTERNALERROR, every ``expected`` text in it, and
    the JSONL eval's 48 rows passed."""
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    for text in expected:
        assert text in output, output
    assert result.parseoutcomes()["passed"] >= 48
    return output


def test_a_wrong_password_is_a_clear_error_that_never_shows_it(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_DB", server.tcp_url("wrong-horse-battery"))
    _project(pytester, QA_ARGS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    output = _errors_alone(
        result,
        "sql($RAG_DB, qa_log): cannot connect to the database:",
        'password authentication failed for user "rag"',
    )
    assert "horse-battery" not in output
    result.assert_outcomes(passed=48, errors=1)
    # The right one works over the same route.
    monkeypatch.setenv("RAG_DB", server.tcp_url(PASSWORD))
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=96)


def test_a_query_error_is_a_clear_error(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_DB", server.url())
    _project(pytester, QA_ARGS.replace("FROM qa_log", "FROM qa_logs"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    _errors_alone(
        result,
        'sql($RAG_DB, qa_logs): the query failed: relation "qa_logs" does not exist',
    )
    result.assert_outcomes(passed=48, errors=1)


def test_a_connection_dropped_mid_fetch_is_a_clear_error(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are fetched 5 at a time; computing row 10 sleeps (in the second fetch), and
    another connection terminates the backend while it does. The function is declared
    STABLE so that the cursor reads the primary key's index, computing each row as it is
    fetched, instead of sorting (and so computing) every row before the first fetch."""
    from pytest_ragmetrics.data import sql

    with server.connect() as connection:
        connection.execute(
            "CREATE OR REPLACE FUNCTION stall_at_10(n bigint) RETURNS bigint LANGUAGE plpgsql "
            f"STABLE AS $$ BEGIN IF n = 10 THEN PERFORM pg_sleep({WAIT}); END IF; RETURN n; "
            "END $$"
        )
        connection.execute(
            "CREATE TABLE IF NOT EXISTS numbered AS SELECT lpad(i::text, 3, '0') AS id, "
            "'Question ' || i AS question, i::bigint AS n FROM generate_series(1, 30) i"
        )
        connection.execute("ALTER TABLE numbered ADD PRIMARY KEY (id)")
        connection.execute("ANALYZE numbered")
    monkeypatch.setattr(sql, "BATCH_ROWS", 5)
    monkeypatch.setenv("RAG_DB", server.url())
    _project(
        pytester,
        'query="SELECT id, question, stall_at_10(n) AS n FROM numbered", url_env="RAG_DB"',
    )
    terminated: list[bool] = []
    killer = threading.Thread(target=lambda: terminated.append(_terminate_sleeper(server)))
    killer.start()
    try:
        result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    finally:
        killer.join(WAIT + 10)
    assert terminated == [True]
    _errors_alone(
        result,
        "sql($RAG_DB, numbered): reading rows failed after 5 row(s):",
        "terminating connection due to administrator command",
    )
    result.assert_outcomes(passed=48, errors=1)


def _terminate_sleeper(server: Server) -> bool:
    """Wait (at most ``WAIT`` seconds) for a backend of ``rag`` asleep in ``pg_sleep``,
    and terminate it; whether one was."""
    deadline = time.monotonic() + WAIT
    with server.connect("postgres", "postgres") as admin:
        while time.monotonic() < deadline:
            found = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE usename = 'rag' AND wait_event = 'PgSleep'"
            ).fetchall()
            if found:
                return bool(found[0][0])
            time.sleep(0.05)
    return False


def test_wrong_types_and_nulls_are_errors_of_their_rows(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six rows: qa-002's gold is NULL, qa-003's a JSON number, qa-004 has a bytea value
    and qa-005 a NaN; a second eval reads the latency column as text, every row's wrong."""
    with server.connect() as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS odd AS SELECT qid, question, answer, "
            "CASE qid WHEN 'qa-002' THEN NULL WHEN 'qa-003' THEN '42'::jsonb ELSE gold END "
            "AS gold, answerable, tokens, latency_ms, "
            "CASE WHEN qid = 'qa-004' THEN '\\x00ff'::bytea END AS payload, "
            "CASE WHEN qid = 'qa-005' THEN 'NaN'::float8 END AS score "
            "FROM qa_log WHERE qid <= 'qa-006'"
        )
    monkeypatch.setenv("RAG_DB", server.url())
    _project(pytester, 'query="SELECT * FROM odd", url_env="RAG_DB", id_column="qid"')
    (pytester.path / "test_pg_text.py").write_text(
        SQL_EVAL.format(
            args='query="SELECT qid, answer, gold, tokens, latency_ms::text AS latency_ms '
            "FROM odd WHERE qid IN ('qa-001', 'qa-006')\", url_env=\"RAG_DB\", "
            'id_column="qid", label="as_text"'
        ).replace("test_answers", "test_text")
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    output = _errors_alone(
        result,
        "sql($RAG_DB, odd): row 'qa-002': field 'gold': required by em, f1 but missing",
        "sql($RAG_DB, odd): row 'qa-003': field 'gold': expected a string, a non-empty list",
        "sql($RAG_DB, odd): row 'qa-004': field '<sql>': column 'payload': a bytes value, "
        "which has no JSON form",
        "sql($RAG_DB, odd): row 'qa-005': field '<sql>': column 'score': nan is not a number "
        "a dataset may hold",
        "sql($RAG_DB, as_text): row 'qa-001': field 'latency_ms': expected a finite number "
        "of milliseconds >= 0, got '1089'",
    )
    assert "sql($RAG_DB, odd): row 'qa-001'" not in output
    assert "sql($RAG_DB, odd): row 'qa-006'" not in output
    result.assert_outcomes(passed=48 + 2, errors=4 + 2)


@pytest.mark.parametrize(
    ("ci", "outcome"), [("1", pytest.fail.Exception), (None, pytest.skip.Exception)]
)
def test_missing_postgresql_skips_except_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str | None, outcome: type[BaseException]
) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no PostgreSQL binaries"):
        _unavailable("no PostgreSQL binaries in /nowhere")


def test_a_date_python_cannot_hold_is_an_error_of_its_row_alone(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's dates run from 4713 BC to 5874897 AD and include infinity, its times
    24:00; Python's run from year 1 to 9999, and end at 23:59:59. Eight rows: qa-001 and
    qa-008 hold dates Python can (their ISO text), each of the others one it cannot, in a
    timestamp, timestamptz, date, time or an array of timestamps column."""
    with server.connect() as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS dated AS SELECT qid, question, answer, gold, "
            "answerable, tokens, latency_ms, "
            "CASE qid WHEN 'qa-002' THEN 'infinity'::timestamp "
            "ELSE '2024-05-01 12:00'::timestamp END AS asked_at, "
            "CASE qid WHEN 'qa-003' THEN '-infinity'::timestamptz END AS answered_at, "
            "CASE qid WHEN 'qa-004' THEN 'infinity'::date "
            "WHEN 'qa-005' THEN '0044-03-15 BC'::date WHEN 'qa-006' THEN '10000-01-01'::date "
            "ELSE '2024-05-01'::date END AS due, "
            "CASE qid WHEN 'qa-007' THEN '24:00'::time END AS at_time, "
            "CASE qid WHEN 'qa-008' THEN ARRAY['2024-01-01'::timestamp] "
            "WHEN 'qa-006' THEN ARRAY['2024-01-01'::timestamp, 'infinity'] END AS seen_at "
            "FROM qa_log WHERE qid <= 'qa-008'"
        )
    monkeypatch.setenv("RAG_DB", server.url())
    _project(pytester, 'query="SELECT * FROM dated", url_env="RAG_DB", id_column="qid"')
    result = pytester.runpytest("-p", "no:cacheprovider")
    cast = "Python's dates and times cannot hold it; cast the column to text in the query"
    output = _errors_alone(
        result,
        "sql($RAG_DB, dated): row 'qa-002': field '<sql>': column 'asked_at': "
        f"timestamp too large (after year 10K): 'infinity'; {cast}",
        "sql($RAG_DB, dated): row 'qa-003': field '<sql>': column 'answered_at': "
        f"timestamp too small (before year 1): '-infinity'; {cast}",
        "sql($RAG_DB, dated): row 'qa-004': field '<sql>': column 'due': "
        f"date too large (after year 10K): 'infinity'; {cast}",
        "sql($RAG_DB, dated): row 'qa-005': field '<sql>': column 'due': "
        f"date too small (before year 1): '0044-03-15 BC'; {cast}",
        "sql($RAG_DB, dated): row 'qa-006': field '<sql>': column 'due': "
        f"date too large (after year 10K): '10000-01-01'; {cast}",
        "sql($RAG_DB, dated): row 'qa-006': field '<sql>': column 'seen_at': "
        f"timestamp too large (after year 10K): 'infinity'; {cast}",
        "sql($RAG_DB, dated): row 'qa-007': field '<sql>': column 'at_time': "
        f"can't parse time '24:00:00': hour must be in 0..23; {cast}",
    )
    assert "row 'qa-001'" not in output
    assert "row 'qa-008'" not in output
    result.assert_outcomes(passed=48 + 2, errors=6)


def test_a_column_name_given_twice_is_refused_with_how_to_alias_it(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL keeps both names of a join's two answers: the first must not be scored
    silently."""
    monkeypatch.setenv("RAG_DB", server.url())
    query = "SELECT a.qid, a.question, a.answer, b.answer FROM qa_log a JOIN qa_log b USING (qid)"
    _project(pytester, f'query="{query}", url_env="RAG_DB", id_column="qid"')
    result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    _errors_alone(
        result,
        "sql($RAG_DB, qa_log): the query gives column(s) 'answer' more than once; give each "
        "column its own name with AS (SELECT a.answer, b.answer AS other_answer ...) and map "
        "it to a field with columns= if it holds one",
    )
    result.assert_outcomes(passed=48, errors=1)


def test_json_nested_deeper_than_python_parses_is_an_error_of_its_row_alone(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's jsonb nests as deep as its stack allows; Python's JSON parser gives up
    at about a thousand levels. qa-002's telemetry nests 5000 levels deep."""
    with server.connect() as connection:
        connection.execute(
            "CREATE TABLE IF NOT EXISTS deep AS SELECT qid, question, answer, gold, "
            "answerable, tokens, latency_ms, CASE qid WHEN 'qa-002' THEN "
            "(repeat('[', 5000) || repeat(']', 5000))::jsonb END AS telemetry "
            "FROM qa_log WHERE qid <= 'qa-003'"
        )
    monkeypatch.setenv("RAG_DB", server.url())
    _project(pytester, 'query="SELECT * FROM deep", url_env="RAG_DB", id_column="qid"')
    result = pytester.runpytest("-p", "no:cacheprovider")
    output = _errors_alone(
        result,
        "sql($RAG_DB, deep): row 'qa-002': field '<sql>': column 'telemetry': lists and "
        "objects nested deeper than",
    )
    assert "row 'qa-001'" not in output
    assert "row 'qa-003'" not in output
    result.assert_outcomes(passed=48 + 2, errors=1)


def test_a_query_error_while_rows_are_read_blames_the_query_not_the_connection(
    server: Server, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """qa-010's text does not cast to an integer: the server stops the query when it
    computes that row, after the rows before it were fetched, 5 at a time."""
    from pytest_ragmetrics.data import sql

    monkeypatch.setattr(sql, "BATCH_ROWS", 5)
    monkeypatch.setenv("RAG_DB", server.url())
    query = (
        "SELECT qid, question, (CASE qid WHEN 'qa-010' THEN 'ten' ELSE '1' END)::int AS n "
        "FROM qa_log"
    )
    _project(pytester, f'query="{query}", url_env="RAG_DB", id_column="qid"')
    result = pytester.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    output = _errors_alone(
        result,
        "sql($RAG_DB, qa_log): the query failed while its rows were read, after ",
        'invalid input syntax for type integer: "ten"; fix the query (run it in a SQL shell)',
    )
    assert "connection was lost" not in output
    result.assert_outcomes(passed=48, errors=1)
