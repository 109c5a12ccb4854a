"""SQL datasets: the rows of a query, read through SQLAlchemy a batch at a time.

A ``SqlDataset`` names where the database is, never what its URL is: ``url_env`` is the
NAME of an environment variable holding the SQLAlchemy URL (a network URL carries a
password, so like the judge's API key it is read from the environment when the rows are
read and never written to a file, a report, a cache key, a baseline or a message), or
``sqlite`` is the path of a SQLite file, relative to the eval file, which carries no
secret. A SQLite path in the variable's URL is relative to the eval file too.

The rows come in a fixed order, so that every pytest-xdist worker collects the same
rows: the query runs wrapped as ``SELECT * FROM (<query>) ORDER BY <order_by>``,
``order_by`` being the id column unless named. An ``ORDER BY`` inside the query is not
relied on (a database may ignore the order of a subquery).

Each row becomes the plain data a JSONL line holds, so that one set of field checks
(``data.fields.validate_fields``) serves every format, as for Parquet:

* the id column is the ``id`` field; ``columns`` renames other columns to fields, and
  every other column keeps its name;
* NULL is an absent field, as in Parquet; a NULL id is a problem of the row;
* a text value of a field that holds lists or objects (``contexts``, ``relevant``,
  ``retrieved``, ``telemetry``, ``tokens``, ...) is read as JSON, as is a ``gold`` that
  starts with ``[`` (SQLite has no JSON type); JSON and JSONB values (PostgreSQL) and
  arrays arrive as lists and objects already (through psycopg, JSON nested too deep for
  Python's parser is the row's problem as any JSON nested deeper than a row may is);
* 0 and 1 in a boolean field are false and true (SQLite has no boolean type);
* a DECIMAL is a number (an integer when it has no fraction), a date or time its ISO
  text, a UUID its text; any other type (bytes, intervals...), a NaN or infinite float
  and, through psycopg, a date or time that Python cannot hold (PostgreSQL's
  ``infinity``, a year after 9999 or BC, 24:00) make the row bad with a ``<sql>``
  problem naming the column, as a NaN makes a JSONL line bad with a ``<json>`` one.

A row is named by its id, as ``<display>: row 'q3'`` (``SqlDataset.display``): a query
has no lines. The dataset's identity (its ``sha256`` in reports) is of the statement run
and of each row's input columns (the id, system, question and labels), never of the
system's outputs nor of the URL.

SQLAlchemy is imported only here and only when a SQL dataset is read; the PostgreSQL
driver (psycopg) is the ``postgresql`` extra.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_ragmetrics.data.streams import DatasetError, Digest, Problem
from pytest_ragmetrics.files import canonical_json, display_path, loads_finite, resolved

BATCH_ROWS = 1000  # rows fetched from the database at a time (a server-side cursor's)

# Fields whose text value is JSON (lists and objects); ``gold`` only when it starts with [.
JSON_TEXT_FIELDS = frozenset(
    {"contexts", "relevant", "telemetry", "repeats", "retrieved", "retrieved_repeats", "tokens"}
)
BOOL_FIELDS = frozenset({"answerable", "show", "show_gold"})
# What the dataset's identity hashes of each row: its id and system, and the fields that
# ``results.baseline.INPUT_FIELDS`` names a row's inputs (the question and its labels).
IDENTITY_FIELDS = (
    "id",
    "system",
    "question",
    "gold",
    "relevant",
    "answerable",
    "show_gold",
    "session_id",
    "turn",
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LABEL = re.compile(r"\bfrom\s+([\w.]+)", re.IGNORECASE)


class SqlConfigError(ValueError):
    """A ``SqlDataset`` is wrongly configured; the message says how to fix it."""


@dataclass(frozen=True)
class SqlDataset:
    """A dataset read from a SQL database: the marker's ``dataset=`` for a query.

    ``query`` is any SELECT; ``url_env`` the name of the environment variable holding the
    database's SQLAlchemy URL, or ``sqlite`` a SQLite file's path (relative to the eval
    file), one of the two; ``id_column`` the column of row ids; ``columns`` maps a column
    to the field it holds (``{"gold_json": "gold"}``; other columns keep their names);
    ``order_by`` the columns the rows are ordered by (default the id column; end it with
    the id column so that the order is total); ``label`` names the query in messages and
    reports (default the first table after FROM); ``proxy_relevant`` names a column whose
    value stands for the row's relevance label (``relevant`` is ``[value]``), a row whose
    value is NULL being unjudged: skipped and counted (``unjudged``), never scored."""

    query: str
    url_env: str | None = None
    sqlite: str | Path | None = None
    id_column: str = "id"
    columns: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    order_by: tuple[str, ...] | str | None = None
    label: str | None = None
    # A column holding a proxy relevance label (the URL of the document shown to the
    # user): its value is the row's one relevant doc id; a NULL makes the row unjudged.
    proxy_relevant: str | None = None
    # The directory of the eval file, which relative SQLite paths are relative to, and the
    # SQLite path as reports show it (from the project root); set by the plugin when it
    # reads the marker (``at``).
    base: Path | None = field(default=None, repr=False)
    shown: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.query, str) or not self.query.strip().rstrip(";").strip():
            raise SqlConfigError("query must be a SELECT statement, as a string")
        self._check_origin()
        if not isinstance(self.id_column, str) or not self.id_column.strip():
            raise SqlConfigError("id_column must name the column of row ids")
        columns = _pairs(self.columns)
        object.__setattr__(self, "columns", columns)
        order = (self.id_column,) if self.order_by is None else self.order_by
        if isinstance(order, str):
            order = (order,)
        if not order or not all(isinstance(name, str) and name.strip() for name in order):
            raise SqlConfigError("order_by must name one or more columns, e.g. ('asked_at', 'id')")
        object.__setattr__(self, "order_by", tuple(order))
        label = self.label if self.label is not None else _default_label(self.query)
        if not isinstance(label, str) or not label.strip() or len(label) > 60:
            raise SqlConfigError("label must be a short name of the query (at most 60 characters)")
        object.__setattr__(self, "label", label)
        proxy = self.proxy_relevant
        if proxy is not None and (not isinstance(proxy, str) or not proxy.strip()):
            raise SqlConfigError("proxy_relevant must name the column of proxy relevance labels")
        if proxy is not None and proxy in dict(columns):
            raise SqlConfigError(f"proxy_relevant column {proxy!r} is mapped by columns= too")

    def _check_origin(self) -> None:
        if (self.url_env is None) == (self.sqlite is None):
            raise SqlConfigError(
                "give url_env= (the name of the environment variable holding the database's "
                "URL) or sqlite= (a SQLite file's path), one of the two"
            )
        if self.url_env is not None and not (
            isinstance(self.url_env, str) and _ENV_NAME.fullmatch(self.url_env)
        ):
            # Not echoed: a value that is no variable name may well be the URL itself.
            raise SqlConfigError(
                "url_env must be the NAME of an environment variable (letters, digits and _) "
                "that holds the URL, never the URL itself: a URL carries the password"
            )
        if self.sqlite is not None and (
            not isinstance(self.sqlite, str | Path) or "://" in str(self.sqlite)
        ):
            raise SqlConfigError(
                "sqlite must be a SQLite file's path (relative to the eval file), not a URL; "
                "put a URL in an environment variable and name it with url_env="
            )

    @property
    def field_of(self) -> dict[str, str]:
        """Each renamed column's field (the id column's is ``id``, a proxy label's
        ``relevant``)."""
        proxy = {self.proxy_relevant: "relevant"} if self.proxy_relevant is not None else {}
        return {**dict(self.columns), **proxy, self.id_column: "id"}

    @property
    def display(self) -> str:
        """How messages and reports name the dataset: where it is (the variable, never
        its value, or the SQLite path) and the query's label."""
        origin = f"${self.url_env}" if self.url_env is not None else self.shown or str(self.sqlite)
        return f"sql({origin}, {self.label})"

    def at(self, base: Path, root: Path | None = None) -> SqlDataset:
        """This dataset, read from an eval file in the directory ``base``; its SQLite path
        shown from ``root`` (the project's), if given."""
        shown = None
        if self.sqlite is not None and root is not None:
            shown = display_path(resolved(base / self.sqlite), root)
        return dataclasses.replace(self, base=base, shown=shown)


def _pairs(columns: Any) -> tuple[tuple[str, str], ...]:
    """``columns`` as sorted (column, field) pairs; each field named by one column."""
    items = list(columns.items()) if isinstance(columns, Mapping) else list(columns)
    if not all(
        isinstance(pair, tuple)
        and len(pair) == 2
        and all(isinstance(name, str) and name.strip() for name in pair)
        for pair in items
    ):
        raise SqlConfigError('columns must map column names to fields, e.g. {"gold_json": "gold"}')
    fields = [name for _, name in items]
    twice = sorted({name for name in fields if fields.count(name) > 1})
    if twice:
        raise SqlConfigError(f"columns maps two columns to field(s) {', '.join(map(repr, twice))}")
    if "id" in fields:
        raise SqlConfigError("columns must not map a column to 'id'; name it with id_column=")
    return tuple(sorted(items))


def _default_label(query: str) -> str:
    found = _LABEL.search(query)
    return found.group(1) if found else "query"


@dataclass(frozen=True)
class SqlRow:
    """One row as read: its 1-based number in the ordered result, its fields as JSON-like
    data, that data as JSON text, and what was left out of it."""

    number: int
    data: dict[str, Any]
    text: str
    problems: tuple[Problem, ...]


# -- connecting -----------------------------------------------------------------------------


def _sqlalchemy(source: str) -> Any:
    try:
        import sqlalchemy
    except ImportError:
        raise DatasetError(
            f"{source}: reading a SQL dataset needs SQLAlchemy; pip install sqlalchemy"
        ) from None
    return sqlalchemy


class _Secrets:
    """What a message must never show: the URL as given and its password."""

    def __init__(self, *secrets: str | None) -> None:
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def redacted(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def _existing(path: Path, source: str) -> Path:
    if not path.is_file():
        raise DatasetError(
            f"{source}: no SQLite file at {path}; a relative path is relative to the eval file"
        )
    return path


def _sqlite_engine(sa: Any, path: Path) -> Any:
    """An engine that opens the SQLite file read-only: an eval never writes its data, and
    a missing file is an error, never a new empty database."""
    import sqlite3

    uri = f"file:{quote(str(path))}?mode=ro"
    return sa.create_engine(
        "sqlite://",
        creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
        poolclass=sa.pool.NullPool,
    )


def _engine(sa: Any, dataset: SqlDataset, source: str) -> tuple[Any, _Secrets]:
    """An engine for the dataset's database, and what its messages must not show."""
    base = dataset.base or Path.cwd()
    if dataset.sqlite is not None:
        return _sqlite_engine(sa, _existing(base / dataset.sqlite, source)), _Secrets()
    env = dataset.url_env
    raw = (os.environ.get(env or "") or "").strip()
    if not raw:
        raise DatasetError(
            f"{source}: the environment variable {env} is not set; set it to the database's "
            "SQLAlchemy URL, e.g. postgresql+psycopg://user:password@host/database"
        )
    try:
        url = sa.engine.make_url(raw)
    except (sa.exc.ArgumentError, ValueError):
        raise DatasetError(  # the value is not echoed: it may hold a password
            f"{source}: ${env} does not hold a SQLAlchemy URL; set it to one such as "
            "postgresql+psycopg://user:password@host/database or sqlite:///path/to/file.sqlite"
        ) from None
    secrets = _Secrets(raw, url.password)
    database = url.database or ""
    if (
        url.get_backend_name() == "sqlite"
        and database not in ("", ":memory:")
        and not (
            database.startswith("file:")  # a SQLite URI: opened as it says
        )
    ):
        return _sqlite_engine(sa, _existing(base / database, source)), secrets
    try:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    except (ImportError, sa.exc.NoSuchModuleError) as error:
        driver = secrets.redacted(str(error))
        raise DatasetError(
            f"{source}: the database driver of ${env}'s URL is not installed ({driver}); "
            "for PostgreSQL pip install 'pytest-ragmetrics[postgresql]' and write the URL "
            "as postgresql+psycopg://..."
        ) from None
    if engine.dialect.driver == "psycopg":
        sa.event.listen(engine, "connect", _load_unheld_values)
    return engine, secrets


# PostgreSQL's types that psycopg loads as Python's dates, times and intervals, which hold
# less: years 1 to 9999, no infinity, no 24:00, at most 999999999 days.
_PG_DATETIME_TYPES = ("date", "time", "timetz", "timestamp", "timestamptz", "interval")
# And as JSON, which Python's parser gives up on at about a thousand levels of nesting.
_PG_JSON_TYPES = ("json", "jsonb")


@dataclass(frozen=True)
class _Unheld:
    """A value the driver could not convert to Python: its words why, or ``None`` when
    it nests too deep for Python's JSON parser."""

    reason: str | None


def _load_unheld_values(dbapi_connection: Any, _record: Any) -> None:
    """Make a psycopg connection load a date or time that Python cannot hold (an
    ``infinity`` timestamp, a date after year 9999), and JSON nested too deep for Python
    to parse, as an ``_Unheld``, a problem of its row, instead of raising and ending the
    whole result. Arrays of these types load their items with the same loaders."""
    from psycopg import DataError
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    adapters = dbapi_connection.adapters
    for names, refusal in ((_PG_DATETIME_TYPES, DataError), (_PG_JSON_TYPES, RecursionError)):
        for name in names:
            oid = adapters.types[name].oid
            for fmt in (Format.TEXT, Format.BINARY):
                loader = adapters.get_loader(oid, fmt)
                if loader is not None:
                    adapters.register_loader(oid, _unheld_loader(loader, fmt, Loader, refusal))


def _unheld_loader(inner: Any, fmt: Any, base: Any, refusal: type[Exception]) -> Any:
    """A psycopg loader class loading as ``inner`` does, and a value that ``inner``
    refuses (``refusal``) as an ``_Unheld``: with the driver's words, unless the refusal
    is a ``RecursionError``."""

    class UnheldLoader(base):  # type: ignore[misc]
        format = fmt

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self.inner = inner(oid, context)

        def load(self, data: Any) -> Any:
            try:
                return self.inner.load(data)
            except RecursionError:
                if refusal is not RecursionError:
                    raise
                return _Unheld(None)
            except refusal as error:
                return _Unheld(" ".join(str(error).split()))

    return UnheldLoader


# -- reading --------------------------------------------------------------------------------


def statement(dataset: SqlDataset, quote_name: Any) -> str:
    """The statement run: the query, ordered by ``order_by`` (each name quoted by the
    database's rules)."""
    query = dataset.query.strip().rstrip(";").strip()
    order = ", ".join(quote_name(name) for name in dataset.order_by or ())
    return f"SELECT * FROM (\n{query}\n) AS ragmetrics_rows ORDER BY {order}"


def sql_rows(
    dataset: SqlDataset, source: str, max_depth: int, digest: Digest | None
) -> Iterator[SqlRow]:
    """Every row of the dataset's query, in its order, ``BATCH_ROWS`` fetched at a time
    (a server-side cursor where the database has one), as JSON-like data nesting at most
    ``max_depth`` levels, the row included; the statement and each row's identity fields
    fed to ``digest``. Anything the database or its driver raises is a ``DatasetError``
    naming ``source``, with the URL and its password redacted."""
    sa = _sqlalchemy(source)
    engine, secrets = _engine(sa, dataset, source)
    reading = _Reading(source, secrets)
    try:
        with engine.connect() as connection:
            text = statement(dataset, engine.dialect.identifier_preparer.quote)
            reading.phase = "query"
            size = BATCH_ROWS
            options = connection.execution_options(stream_results=True, yield_per=size)
            result = options.execute(sa.text(text))
            sqlite = engine.dialect.name == "sqlite"
            fields = _fields(list(result.keys()), dataset, source, sqlite=sqlite)
            if digest is not None:
                digest.update(text.encode("utf-8") + b"\0")
            reading.phase = "fetch"
            # The size again: without one, a Core result's partitions are its whole buffer.
            for partition in result.partitions(size):
                for values in partition:
                    reading.rows += 1
                    row = _row(reading.rows, fields, values, dataset, max_depth)
                    if digest is not None:
                        digest.update(_identity(row.data))
                    yield row
    except Exception as error:
        if isinstance(error, DatasetError) or not _is_database_error(sa, engine, error):
            raise
        raise DatasetError(reading.message(error, _connection_lost(sa, engine, error))) from None
    finally:
        engine.dispose()


def _connection_lost(sa: Any, engine: Any, error: Exception) -> bool:
    """Whether the database error is of the connection or the server (PEP 249's
    ``OperationalError`` or ``InterfaceError``), not of the query or its data."""
    dbapi = getattr(engine.dialect, "loaded_dbapi", None)
    kinds = [getattr(dbapi, name, None) for name in ("OperationalError", "InterfaceError")]
    driver = tuple(kind for kind in kinds if isinstance(kind, type))
    wrapped = (sa.exc.OperationalError, sa.exc.InterfaceError, sa.exc.DisconnectionError)
    original = getattr(error, "orig", None) or error
    return isinstance(error, wrapped) or (bool(driver) and isinstance(original, driver))


def _is_database_error(sa: Any, engine: Any, error: Exception) -> bool:
    dbapi = getattr(engine.dialect, "loaded_dbapi", None)
    driver_error = getattr(dbapi, "Error", None)
    known = (sa.exc.SQLAlchemyError, *([driver_error] if isinstance(driver_error, type) else []))
    return isinstance(error, known)


@dataclass
class _Reading:
    """How far reading got, for the message of an error."""

    source: str
    secrets: _Secrets
    phase: str = "connect"
    rows: int = 0

    def message(self, error: Exception, connection_lost: bool) -> str:
        """The message of ``error``; ``connection_lost``: whether it is of the connection
        or the server, not of the query or its data."""
        reason = self.secrets.redacted(_reason(error))
        if self.phase == "connect":
            return (
                f"{self.source}: cannot connect to the database: {reason}; check the URL "
                "(host, user, password, database) and that the server is running"
            )
        if self.phase == "query":
            return (
                f"{self.source}: the query failed: {reason}; fix the query (run it in a SQL shell)"
            )
        if not connection_lost:  # a row the query cannot compute (a cast, a division...)
            return (
                f"{self.source}: the query failed while its rows were read, after {self.rows} "
                f"row(s): {reason}; fix the query (run it in a SQL shell)"
            )
        return (
            f"{self.source}: reading rows failed after {self.rows} row(s): {reason}; the "
            "connection was lost or the server stopped: run again once the database is reachable"
        )


def _reason(error: Exception) -> str:
    """The driver's own words (not SQLAlchemy's wrapping, which repeats the statement),
    on one line."""
    original = getattr(error, "orig", None) or error
    text = " ".join(str(original).split()) or type(original).__name__
    return text if len(text) <= 400 else f"{text[:380]}..."


# How SQLite names the repeats of a column name in a subquery's result: ``answer:1``.
_SQLITE_REPEAT = re.compile(r"(.+):[0-9]+")


def _repeated(names: list[str], sqlite: bool) -> list[str]:
    """The column names the query gives more than once, sorted. SQLite renames a repeat
    in the subquery the statement wraps the query in (``answer``, ``answer:1``), so there
    a name ``X:<digits>`` beside a column ``X`` is a repeat of ``X`` too."""
    twice = {name for name in names if names.count(name) > 1}
    if sqlite:
        for name in names:
            found = _SQLITE_REPEAT.fullmatch(name)
            if found and found.group(1) in names:
                twice.add(found.group(1))
    return sorted(twice)


def _fields(
    names: list[str], dataset: SqlDataset, source: str, *, sqlite: bool = False
) -> list[str]:
    """The field each result column holds, checked: every column named once, the mapped
    columns present, no two columns giving one field. ``sqlite``: the names are SQLite's,
    which renames repeats."""
    twice = _repeated(names, sqlite)
    if twice:
        first = twice[0]
        raise DatasetError(
            f"{source}: the query gives column(s) {', '.join(map(repr, twice))} more than once; "
            f"give each column its own name with AS (SELECT a.{first}, b.{first} AS "
            f"other_{first} ...) and map it to a field with columns= if it holds one"
        )
    renamed = dataset.field_of
    absent = [column for column in renamed if column not in names]
    if absent:
        raise DatasetError(
            f"{source}: the query gives no column(s) {', '.join(map(repr, absent))} "
            f"(its columns: {', '.join(names)}); select them, or fix id_column= or columns="
        )
    fields = [renamed.get(name, name) for name in names]
    clash = sorted({name for name in fields if fields.count(name) > 1})
    if clash:
        raise DatasetError(
            f"{source}: two columns give field(s) {', '.join(map(repr, clash))}; select one "
            "of them, or map the other to another field with columns="
        )
    return fields


def _identity(data: Mapping[str, Any]) -> bytes:
    inputs = {name: data[name] for name in IDENTITY_FIELDS if name in data}
    return canonical_json(inputs, ascii_only=True).encode("utf-8", "surrogatepass") + b"\n"


class _NoJson(ValueError):
    """A value with no JSON form; the message says why."""


def _row(
    number: int, fields: list[str], values: Any, dataset: SqlDataset, max_depth: int
) -> SqlRow:
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    columns = {field: column for column, field in dataset.field_of.items()}
    for name, value in zip(fields, values, strict=True):
        column = columns.get(name, name)
        proxy_label = name == "relevant" and dataset.proxy_relevant is not None
        if proxy_label and isinstance(value, str):
            value = [value]  # the one document the proxy says is relevant
        if value is None:
            if name == "id":
                problems.append(Problem("id", f"column {column!r} is NULL; every row needs its id"))
            continue  # NULL: an absent field
        try:
            data[name] = _field(name, value, max_depth)
        except _NoJson as error:
            problems.append(Problem("<sql>", f"column {column!r}: {error}"))
        except ValueError as error:  # JSON text that does not parse
            problems.append(
                Problem(name, f"column {column!r}: cannot read {_shown(value)} as JSON: {error}")
            )
    return SqlRow(number, data, json.dumps(data), tuple(problems))


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"


def _field(name: str, value: Any, max_depth: int) -> Any:
    """One column's value as the field ``name`` holds it."""
    if isinstance(value, str):
        starts = value.lstrip()[:1]
        if name in JSON_TEXT_FIELDS or (name == "gold" and starts == "["):
            try:
                parsed = loads_finite(value, refusal="is not a number a dataset may hold")
            except RecursionError:
                raise _NoJson(_TOO_DEEP.format(levels=max_depth)) from None
            return _json(parsed, max_depth - 1, max_depth)
        return value
    if name in BOOL_FIELDS and type(value) is int and value in (0, 1):
        return bool(value)
    return _json(value, max_depth - 1, max_depth)


_TOO_DEEP = (
    "lists and objects nested deeper than {levels} levels (the row itself is one); flatten it"
)


def _json(value: Any, depth: int, max_depth: int) -> Any:
    """``value`` as JSON-like data at most ``depth`` levels of lists and objects deep
    (a row may nest ``max_depth``); ``_NoJson`` when it has no such form."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NoJson(
                f"{value} is not a number a dataset may hold (JSON has no NaN or Infinity); "
                "store NULL for a missing value"
            )
        return value
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, _Unheld):
        if value.reason is None:
            raise _NoJson(_TOO_DEEP.format(levels=max_depth))
        raise _NoJson(
            f"{value.reason}; Python's dates and times cannot hold it; cast the column to "
            "text in the query"
        )
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict | list | tuple):
        if depth < 1:
            raise _NoJson(_TOO_DEEP.format(levels=max_depth))
        if isinstance(value, dict):
            return {str(k): _json(v, depth - 1, max_depth) for k, v in value.items()}
        return [_json(v, depth - 1, max_depth) for v in value]
    raise _NoJson(
        f"a {type(value).__name__} value, which has no JSON form; cast the column to text "
        "or a number in the query"
    )


def _decimal(value: Decimal) -> int | float:
    if not value.is_finite():
        raise _NoJson(f"{value} is not a number a dataset may hold; store NULL for a missing value")
    if value == value.to_integral_value():
        return int(value)
    return float(value)
