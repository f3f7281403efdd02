"""The warehouse boundary: the one module that opens connections, for DuckDB or PostgreSQL, and
knows the schema names.

Why one module: DMF Watch runs on an embedded DuckDB file (the default) or on a team's
PostgreSQL server (`DMF_WAREHOUSE=postgres`, credentials from the libpq variables). Every stage
(the loader, enrich, reports, notify, the commands) asks the same few things of either engine —
is this table there yet, what rows does this query give — through `connect()`, so no other
module imports `duckdb` or a PostgreSQL driver. The SQL it is handed is portable: `?`
placeholders (translated for the PostgreSQL driver), schema names from `schemas()`.

The layer schemas come from dbt's configuration (dbt_project.yml's `+schema`), with the prefix
macros/generate_schema_name.sql adds for a developer's target (`DMF_SCHEMA_PREFIX`). The
schemas Python owns (`enrichment`, `notify`) take the same prefix, so two developers or two
test runs on one server each keep their own AI output and delivery ledger.
"""

from __future__ import annotations

import functools
import os
import re
import select
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import duckdb
import psycopg2
import psycopg2.extensions
import yaml

from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.interrupts import RunInterrupted

if TYPE_CHECKING:
    from dmf_watch.core.config import Settings

ENGINES = ("duckdb", "postgres")
# What a failed statement raises on either engine, for `except warehouse.Error`.
Error: tuple[type[Exception], ...] = (duckdb.Error, psycopg2.Error)

# The raw layer: the dlt dataset the loader writes (pipelines.mfds.settings) and every later
# stage reads; named here so that a stage can name it without importing the loader and dlt.
RAW_DATASET = "mfds_raw"
# The schemas that Python creates and writes (enrich/enrichment_store.py, notify/ledger.py); no
# dbt model reads them, so they are named here and not in dbt_project.yml.
ENRICHMENT_SCHEMA = "enrichment"
NOTIFY_SCHEMA = "notify"
# The raw tables a stored load leaves (the loader's); without them there is nothing to build, and
# dbt's first on-run-start hook (macros/loads_stored.sql) stops any dbt command at once.
LOADER_TABLES = ("dmf_item_versions", "dmf_load_items", "load_runs")
NO_LOAD_ADVICE = "load first with `dmf run` (or `dmf load`), or try `dmf demo`"

PROJECT_FILE = Path(__file__).resolve().parents[2] / "dbt_project.yml"

# Every PostgreSQL connection (this module's, dlt's, dbt's through profiles.yml) gives up
# connecting after PGCONNECT_TIMEOUT seconds, libpq's own variable, or this many when it is unset:
# without it a port that accepts and never answers holds a run for ever, and libpq blocks in C
# where no signal handler of the run (SIGTERM, the deadline) gets to run.
DEFAULT_CONNECT_TIMEOUT_S = 30
# TCP keepalives on every connection: a server host that vanished mid-statement is noticed after
# about a minute (30 s idle, then 3 probes 10 s apart) instead of the kernel's two hours.
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


class WarehouseUnreachable(DmfError):
    """The PostgreSQL server did not answer within the connect timeout."""


class Cursor(Protocol):
    description: Any

    def fetchall(self) -> list[tuple[Any, ...]]: ...
    def fetchone(self) -> tuple[Any, ...] | None: ...


@dataclass(frozen=True)
class Schemas:
    """The schema of each layer on this target (`marts`, or `alice_marts` with a prefix)."""

    raw: str
    staging: str
    intermediate: str
    marts: str
    seeds: str
    enrichment: str
    notify: str


@functools.cache
def _layer_schemas() -> dict[str, str]:
    """Each layer's `+schema` in dbt_project.yml (models' layers and the seeds)."""
    project = yaml.safe_load(PROJECT_FILE.read_text(encoding="utf-8"))
    models = project["models"]["dmf_watch"]
    return {
        "staging": models["staging"]["+schema"],
        "intermediate": models["intermediate"]["+schema"],
        "marts": models["marts"]["+schema"],
        "seeds": project["seeds"]["dmf_watch"]["+schema"],
    }


def schemas(settings: Settings) -> Schemas:
    prefix = f"{settings.schema_prefix}_" if settings.schema_prefix else ""
    layers = {layer: prefix + name for layer, name in _layer_schemas().items()}
    return Schemas(
        raw=prefix + RAW_DATASET,
        enrichment=prefix + ENRICHMENT_SCHEMA,
        notify=prefix + NOTIFY_SCHEMA,
        **layers,
    )


def _placeholders(sql: str) -> str:
    """`?` placeholders as the PostgreSQL driver writes them (`%s`), a literal `%` escaped.
    Quoted text is left alone: a `?` inside a string literal is not a parameter."""
    parts = re.split(r"('(?:[^']|'')*')", sql)
    return "".join(part if part.startswith("'") else part.replace("%", "%%").replace("?", "%s") for part in parts)


class Connection:
    """One connection to the warehouse: `execute` takes portable SQL with `?` placeholders.
    It carries its target's schema names (`con.schemas.marts`), so a function handed a
    connection writes `{con.schemas.marts}.dmf_events` without the settings being threaded
    through every query helper."""

    def __init__(self, engine: str, raw: Any, schemas: Schemas) -> None:
        self.engine = engine
        self.schemas = schemas
        self._raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        if self.engine == "duckdb":
            return self._raw.execute(sql, list(params))
        cursor = self._raw.cursor()
        if params:
            cursor.execute(_placeholders(sql), tuple(params))
        else:  # no parameters: the driver passes the text as is (SQL compiled by dbt may hold % and ?)
            cursor.execute(sql)
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if self.engine == "duckdb":
            self._raw.executemany(sql, [list(row) for row in rows])
        else:
            self._raw.cursor().executemany(_placeholders(sql), [tuple(row) for row in rows])

    def commit(self) -> None:
        if self.engine == "postgres":
            self._raw.commit()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The block's statements stored all or none. DuckDB commits each statement unless a
        transaction is opened; on PostgreSQL the `connect` block already is one transaction."""
        if self.engine == "postgres":
            yield
            return
        self._raw.execute("begin")
        try:
            yield
        except BaseException:
            self._raw.execute("rollback")
            raise
        self._raw.execute("commit")


def connect_timeout_s() -> int:
    """libpq's connect timeout as every connection of a run uses it: PGCONNECT_TIMEOUT (whole
    seconds; 0 waits for ever, as libpq reads it), DEFAULT_CONNECT_TIMEOUT_S when unset."""
    raw = os.environ.get("PGCONNECT_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_CONNECT_TIMEOUT_S
    if not raw.isdigit():
        raise ConfigError(f"PGCONNECT_TIMEOUT must be a whole number of seconds (0: no limit), not {raw!r}.")
    return int(raw)


def server_name() -> str:
    """The server as libpq's variables name it, host:port/database (never the role's password)."""
    host = os.environ.get("PGHOST", "localhost")
    port = os.environ.get("PGPORT", "5432")
    # libpq's default database is the role's name, whose default is the operating-system user
    database = os.environ.get("PGDATABASE") or os.environ.get("PGUSER") or os.environ.get("USER", "")
    return f"{host}:{port}/{database}"


def open_postgres(application_name: str) -> Any:
    """A psycopg2 connection to the server libpq's variables name, bounded by the connect timeout
    and kept alive by TCP keepalives. A server that does not answer within the timeout is one line
    naming it (WarehouseUnreachable); any other refusal is psycopg2's own error."""
    timeout = connect_timeout_s()
    # Every other parameter from the libpq environment (PGHOST, PGPORT, PGUSER, PGPASSWORD or
    # PGPASSFILE/~/.pgpass, PGDATABASE, PGSSLMODE): nothing of it passes through this code.
    try:
        return psycopg2.connect("", application_name=application_name[:63], connect_timeout=timeout, **KEEPALIVES)
    except psycopg2.OperationalError as error:
        if "timeout expired" not in str(error):
            raise
        raise WarehouseUnreachable(
            f"the PostgreSQL server {server_name()} did not answer within {timeout} s (PGCONNECT_TIMEOUT): "
            "check that the server is up and that PGHOST and PGPORT name it, or raise PGCONNECT_TIMEOUT."
        ) from None


# What ConnectionInfo.status (libpq's PQstatus) reports of a connection that is established.
_CONNECTION_OK = 0
# A run stopped while it had waited this long for the server names the server in its line.
NAMED_WAIT_S = 1.0


def _wait(conn: Any) -> None:
    """psycopg2's wait callback (its documented "green" mode, set_wait_callback): libpq's waits for
    the server happen here, in Python's select(), instead of in C. A signal handler of the run then
    runs while PostgreSQL keeps it waiting: SIGTERM, SIGINT and the run's deadline raise in the
    middle of a connect or a statement, psycopg2 closes that connection (the server rolls back what
    it had begun), and the run stops with its line. libpq does not time out a connect made this
    way, so the connect timeout is kept here."""
    started = time.monotonic()
    deadline = None
    try:
        while True:
            state = conn.poll()
            if state == psycopg2.extensions.POLL_OK:
                return
            if deadline is None and conn.info.status != _CONNECTION_OK and connect_timeout_s() > 0:
                deadline = time.monotonic() + connect_timeout_s()
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise psycopg2.OperationalError("timeout expired")
            if state == psycopg2.extensions.POLL_READ:
                select.select([conn.fileno()], [], [], remaining)
            elif state == psycopg2.extensions.POLL_WRITE:
                select.select([], [conn.fileno()], [], remaining)
            else:
                raise psycopg2.OperationalError(f"bad state from poll: {state}")
    except RunInterrupted as stopped:
        waited = time.monotonic() - started
        if waited >= NAMED_WAIT_S:  # a stop in the middle of a quick statement names no server
            stopped.waiting_for = (
                f"PostgreSQL {server_name()}, which had not answered for {waited:.0f} s "
                "(check that the server is up and answering)"
            )
        raise


@contextmanager
def interruptible_waits(settings: Settings) -> Iterator[None]:
    """On PostgreSQL, every wait of this process for the server (this module's connections,
    dlt's and dbt's, which all use psycopg2) is one a signal interrupts, for the length of the
    block: see _wait. Without it libpq blocks in C, and a server that stops answering keeps the
    run past SIGTERM and its deadline, for ever."""
    if settings.warehouse != "postgres":
        yield
        return
    psycopg2.extensions.set_wait_callback(_wait)
    try:
        yield
    finally:
        psycopg2.extensions.set_wait_callback(None)


def _connect_postgres(read_only: bool) -> Any:
    raw = open_postgres("dmf")
    raw.set_session(readonly=read_only)
    return raw


@contextmanager
def connect(settings: Settings, *, read_only: bool = False) -> Iterator[Connection]:
    """A connection for the length of the block. On PostgreSQL the block is one transaction,
    committed when it ends normally and rolled back when it raises."""
    if settings.warehouse == "postgres":
        raw = _connect_postgres(read_only)
        try:
            yield Connection("postgres", raw, schemas(settings))
            raw.commit()
        except BaseException:
            raw.rollback()
            raise
        finally:
            raw.close()
        return
    with duckdb.connect(str(settings.duckdb_path), read_only=read_only) as raw:
        yield Connection("duckdb", raw, schemas(settings))


@contextmanager
def held_open(settings: Settings) -> Iterator[None]:
    """Keeps the embedded file's database open in this process for the length of the block.

    dbt-duckdb closes the file whenever no node holds a connection (profiles.yml keeps
    `keep_open: false`, so that the file is closed when a dbt command ends); between two nodes
    that is a checkpoint, then the catalog read again for the next node: about a sixth of a
    small build's CPU (docs/tests-and-benchmarks.md). DuckDB hands every `connect` of a file
    already open in the process the same database (its instance cache), so while this
    connection lives, dbt's closes and opens are only connections to it. Nothing runs on this connection. On PostgreSQL, or when the file is
    not there or cannot be opened (dbt then meets the same fault and reports it its way), the block
    runs as it would without."""
    held = None
    if settings.warehouse == "duckdb" and settings.duckdb_path.is_file():
        with suppress(duckdb.Error):
            held = duckdb.connect(str(settings.duckdb_path))
    try:
        yield
    finally:
        if held is not None:
            held.close()


class ServerLock:
    """A session-level advisory lock on the server, named by `key`: what the file lock is for the
    embedded file. The server releases it when this connection ends, however the process ends
    (a `kill -9` closes the socket), so it never outlives its holder. The holder's `label` is
    the connection's application_name, which a waiter reads back to name it."""

    def __init__(self, key: str, label: str) -> None:
        self._raw = open_postgres(label)
        self._raw.autocommit = True
        self._key = key

    def try_acquire(self) -> bool:
        cursor = self._raw.cursor()
        cursor.execute("select pg_try_advisory_lock(hashtext(%s))", (self._key,))
        return bool(cursor.fetchone()[0])

    def holder(self) -> str | None:
        cursor = self._raw.cursor()
        cursor.execute(
            "select a.application_name, coalesce(host(a.client_addr), 'local'), "
            "to_char(a.backend_start at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') "
            "from pg_locks as l join pg_stat_activity as a on a.pid = l.pid "
            "where l.locktype = 'advisory' and l.granted and l.objid = hashtext(%s)::oid "
            "and l.database = (select oid from pg_database where datname = current_database()) "
            "and a.pid <> pg_backend_pid() limit 1",
            (self._key,),
        )
        row = cursor.fetchone()
        return f"`{row[0]}` from {row[1]}, connected since {row[2]} UTC" if row else None

    def still_held(self) -> bool:
        """Whether this lock's session is alive and still holds the lock. A server restart (or a
        DBA's pg_terminate_backend) ends the session and with it the lock, while the run's other
        connections simply connect again: a second run could then take the lock and build beside
        this one."""
        try:
            cursor = self._raw.cursor()
            cursor.execute(
                "select count(*) from pg_locks where locktype = 'advisory' and granted "
                "and pid = pg_backend_pid() and objid = hashtext(%s)::oid",
                (self._key,),
            )
            return bool(cursor.fetchone()[0])
        except psycopg2.Error:  # the session is gone (server restarted, backend terminated)
            return False

    def close(self) -> None:
        self._raw.close()


def lock_holders(con: Connection, schema_names: Sequence[str]) -> list[tuple[int, str]]:
    """The other sessions holding a lock on a table of these schemas, each its pid and in words,
    those idle in a transaction first (what blocks a build most often), then the oldest: "pid 4242
    `Metabase` from 10.0.0.7, idle in transaction (open since 2026-12-01 22:31:05 UTC)". What a
    build's lock timeout waited for (pg_locks and pg_stat_activity, PostgreSQL only)."""
    marks = ", ".join("?" for _ in schema_names)
    found = con.execute(
        "select distinct a.pid, a.application_name, coalesce(host(a.client_addr), 'local'), a.state, "
        "to_char(coalesce(a.xact_start, a.state_change) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
        "coalesce(a.xact_start, a.state_change), a.state in ('idle in transaction', 'idle in transaction (aborted)') "
        "from pg_locks as l join pg_class as c on c.oid = l.relation "
        "join pg_namespace as n on n.oid = c.relnamespace join pg_stat_activity as a on a.pid = l.pid "
        f"where l.granted and n.nspname in ({marks}) and a.pid <> pg_backend_pid() "
        "and l.database = (select oid from pg_database where datname = current_database()) "
        "order by 7 desc, 6, 1",
        list(schema_names),
    ).fetchall()
    return [
        (
            pid,
            f"pid {pid} `{name or 'no application_name'}` from {client}, {state or 'state unknown'} (open since {since} UTC)",
        )
        for pid, name, client, state, since, _, _ in found
    ]


def exists(settings: Settings) -> bool:
    """Whether there is a warehouse to read (the DuckDB file; a server is always there)."""
    return settings.warehouse == "postgres" or settings.duckdb_path.is_file()


def table_exists(con: Connection, schema: str, *names: str) -> bool:
    """True when every named table (or view) exists in `schema`."""
    wanted = sorted(set(names))
    if not wanted:
        return True
    marks = ", ".join("?" for _ in wanted)
    row = con.execute(
        "select count(distinct table_name) from information_schema.tables "
        f"where table_schema = ? and table_name in ({marks})",
        [schema, *wanted],
    ).fetchone()
    return bool(row) and row[0] == len(wanted)


def columns(con: Connection, schema: str, table: str) -> list[str]:
    """The columns of a table, in order."""
    return [
        row[0]
        for row in con.execute(
            "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
            "order by ordinal_position",
            [schema, table],
        ).fetchall()
    ]


def rows(con: Connection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of a query as dicts keyed by column name (what the prompts and messages read)."""
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def holds_a_load(con: Connection, schema: str = RAW_DATASET) -> bool:
    """Whether the raw layer holds what a load stores (a fresh warehouse, or one a `dbt build` was
    run on before any load, holds none: it needs a load, not a build)."""
    return table_exists(con, schema, *LOADER_TABLES)


def postgres_credentials() -> dict[str, Any]:
    """The server, role, database and password libpq resolves from its variables (PGPASSFILE
    and ~/.pgpass included), as the credentials dict dlt's postgres destination takes: dlt has
    no libpq defaults of its own and requires a password."""
    raw = _connect_postgres(read_only=True)
    try:
        info, params = raw.info, raw.get_dsn_parameters()
        credentials = {
            "host": info.host,
            "port": info.port,
            "username": info.user,
            "password": info.password,
            "database": info.dbname,
            "connect_timeout": connect_timeout_s(),  # dlt's own field (its default is 15 s)
            "query": {"sslmode": params.get("sslmode", "prefer"), **{k: str(v) for k, v in KEEPALIVES.items()}},
        }
    finally:
        raw.close()
    return credentials


def describe(settings: Settings) -> str:
    """The warehouse in words for messages and logs: the file, or the server without secrets."""
    if settings.warehouse == "duckdb":
        return str(settings.duckdb_path)
    return f"PostgreSQL {server_name()}"


def reader_copy_path(settings: Settings) -> Path:
    """Where BI tools read the DuckDB warehouse's published marts: a file of their own beside the
    warehouse (`data/dmf_marts.duckdb`), which no morning ever holds or waits for."""
    path = settings.duckdb_path
    return path.with_name(f"{path.stem}_marts{path.suffix or '.duckdb'}")


def publish_reader_copy(settings: Settings) -> Path | None:
    """Copies the published marts into the reader copy, replaced whole by a rename.

    DuckDB lets one process write a file or any number read it, never both: a BI tool reading
    the warehouse itself would stop the morning's load, and the morning would stop the BI tool.
    The copy is written under another name and renamed over the old one, so a reader that has
    the old copy open keeps reading it whole and the next one opens the new. A server's readers
    need no copy (None): the marts are swapped there in one transaction.
    """
    if settings.warehouse != "duckdb":
        return None
    target = reader_copy_path(settings)
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    marts = schemas(settings).marts
    try:
        with duckdb.connect(str(partial)) as copy:
            copy.execute(f"attach '{_quoted(settings.duckdb_path)}' as warehouse (read_only)")
            names = [
                row[0]
                for row in copy.execute(
                    "select table_name from duckdb_tables() where database_name = 'warehouse' and schema_name = ? "
                    "order by table_name",
                    [marts],
                ).fetchall()
            ]
            copy.execute(f"create schema {marts}")
            for name in names:
                copy.execute(f"create table {marts}.{name} as select * from warehouse.{marts}.{name}")
            copy.execute("detach warehouse")
        with partial.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
