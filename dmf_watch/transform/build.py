"""`dbt build` on the project, against the configured warehouse: the morning's transform stage.

dbt's own tests are the integrity gates. When the gate test fails, dbt skips every model that
publishes events, and dbt itself records the load as rejected: the on-run-end hook
record_fired_gates (macros/gate_rejections.sql) reads the run's results, finds int_load_signals
through dbt's graph and fails when it cannot (a rejection that silently went unrecorded would
make every later build compare with the rejected load). So plain `dbt build` and this command
record the same verdicts; this module only reads what the hook did. One more build then brings
every mart in line with that verdict (the gate test passes, the day's summary is written), and
after a backfill judges each later load against the last accepted one.

dbt runs in this process (dbtRunner), not in a child: a child pays Python's and dbt's start-up
on every build (about 2 s a build on a 5-day warehouse, 13.5 s → 11.4 s). dbt-duckdb keeps its DuckDB
handle open after a command ends, so each invocation closes it: the loader, the AI step and the
report open the same file right after, some of them read-only.

Every build's outcome is recorded in the raw layer's `build_runs` (`mfds_raw.build_runs`, append-only), so that `dmf report`
can refuse to render marts a failed build left behind and say what to fix.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from importlib import metadata
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.interrupts import deferred_interruptions
from dmf_watch.core.lock import check_lock_held
from dmf_watch.core.storage import is_write_failure_text, write_failure_message
from dmf_watch.core.warehouse import NO_LOAD_ADVICE, holds_a_load, table_exists
from dmf_watch.transform.seed_check import check_seeds, seed_error

log = logging.getLogger(__name__)

GATE_TEST = "assert_no_integrity_gate_fired"
TESTED_LOADS_VARIABLE = "DMF_TESTED_LOADS"  # read by macros/data_test_scope.sql
BUILD_RUNS_TABLE = "build_runs"
# Models that read only seeds and no var: the same seed files, macros and SQL give the same
# table, so the morning build leaves them out with the seeds (a test holds this list to dbt's graph).
SEED_ONLY_MODELS = ("int_watch_terms_latin_keyed", "int_watchlist_terms")


# The start of the line the hook check_loads_stored (macros/loads_stored.sql) stops dbt with.
NO_LOAD_MARKER = "holds no load yet"
# The start of every reason the hook record_fired_gates gives for not recording a rejection.
UNRECORDED_MARKER = "cannot record the gate rejection:"
# The line the hook publish_marts (macros/publish_marts.sql) logs when the readers' marts were replaced.
PUBLISHED_MARKER = "marts published:"


# The end of PostgreSQL's message when lock_timeout cancels a statement ("canceling statement due
# to lock timeout"), as dbt passes it on in a failed node's message.
LOCK_TIMEOUT_MARKER = "due to lock timeout"


class BuildLockTimeout(DmfError):
    """A statement of the build waited longer than DMF_PG_LOCK_TIMEOUT_S for another session's lock."""


class NoLoadStored(DmfError):
    """dbt stopped before anything ran: the warehouse holds no load (nothing to build or record)."""


@dataclass(frozen=True)
class BuildOutcome:
    success: bool
    gate_fired: bool
    failures: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # by RESULT_KINDS, in that order
    notes: list[str] = field(default_factory=list)  # what the gate hook said it recorded
    seconds: float = 0.0  # every dbt build of it, the rounds after a gate rejection included
    published: bool = False  # the hook publish_marts replaced the readers' marts with this build

    def tally(self) -> str:
        """What dbt did, e.g. "58 models built, 127 tests passed, 0 failed, 0 skipped; 12.4 s"."""
        counts = ", ".join(f"{self.counts.get(kind, 0)} {kind}" for kind in RESULT_KINDS)
        return f"{counts}; {self.seconds:.1f} s"

    def summary(self) -> str:
        if self.gate_fired:
            return f"an integrity gate fired; the load is recorded as rejected ({self.tally()})"
        if not self.success:
            return f"dbt build failed ({self.tally()}): {'; '.join(self.failures[:3])}"
        return f"dbt build passed ({self.tally()})"


# The kinds of node result a build reports, from dbt's resource type and status (hooks are left out).
RESULT_KINDS = ("models built", "tests passed", "failed", "skipped")


def _result_kind(resource_type: str, status: str) -> str | None:
    if status in {"error", "fail"}:
        return "failed"
    if status == "skipped":
        return "skipped"
    if resource_type in {"test", "unit_test"}:
        return "tests passed" if status in {"pass", "warn"} else None
    if resource_type in {"model", "seed", "snapshot"}:
        return "models built" if status == "success" else None
    return None


@dataclass(frozen=True)
class DbtInvocation:
    """What one dbt command did: its exit status as dbt's CLI gives it, and what it said."""

    returncode: int  # 0 success; 1 a node failed; 2 dbt could not run
    output: str  # dbt's messages at info level and above, one a line, as its CLI prints them
    result: Any = None  # dbt's own result (RunExecutionResult, ...); None when dbt could not run


def invoke_dbt(
    settings: Settings,
    command: str,
    *extra: str,
    env: dict[str, str] | None = None,
    manifest: Any = None,
    log_file_level: str = "debug",
) -> DbtInvocation:
    """Runs one dbt command on the project with the warehouse of `settings`, in this process.

    dbt reads its profile and macros' `env_var` from os.environ, so `env` is set there for the
    length of the command and put back afterwards. Nothing is printed: dbt's messages come back
    in `output` and its log goes to the state dir's logs/dbt.log, at `log_file_level` (dbt's
    default, debug, unless the caller says otherwise). `manifest`, one that parse_project
    returned, spares the command parsing the project again (dbt's own programmatic reuse:
    dbtRunner(manifest=...)).
    """
    if settings.warehouse == "duckdb":
        settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    args = [
        *command.split(),
        "--project-dir",
        str(settings.project_dir),
        "--profiles-dir",
        str(settings.project_dir),
        "--target-path",
        str(settings.state_dir / "dbt" / "target"),
        "--log-path",
        str(settings.state_dir / "logs"),
        "--log-level",
        "none",
        "--log-level-file",
        log_file_level,
        *extra,
    ]
    lines: list[str] = []

    def keep(event: Any) -> None:
        if event.info.level in ("info", "warn", "error") and event.info.msg:
            lines.append(event.info.msg)

    with _environment(
        dict(
            env or {},
            **_postgres_session(settings),
            DMF_WAREHOUSE=settings.warehouse,  # the profile's target
            DMF_SCHEMA_PREFIX=settings.schema_prefix,
            DMF_DUCKDB_PATH=str(settings.duckdb_path),
            DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        )
    ):
        from dbt.cli.main import dbtRunner

        with warehouse.held_open(settings):
            done = dbtRunner(manifest=manifest, callbacks=[keep]).invoke(args)
    if isinstance(done.exception, KeyboardInterrupt):
        raise done.exception  # dbt cancelled its statements on it (dmf_watch.core.interrupts); the run stops here
    if done.exception is not None:
        lines.append(f"{type(done.exception).__name__}: {done.exception}")
    returncode = 0 if done.success else 2 if done.exception is not None else 1
    return DbtInvocation(returncode, "\n".join(lines), done.result)


def _postgres_session(settings: Settings) -> dict[str, str]:
    """What every session dbt opens on PostgreSQL starts with, through libpq's own variables: the
    connect timeout the profile reads, and a `lock_timeout` in PGOPTIONS (appended to any the
    user set). PGOPTIONS and not an on-run-start hook: dbt opens a connection per thread and again
    after each node, and a hook's `set` reaches only the one it runs on, while libpq sends PGOPTIONS
    at the start of each of them; and not a profile field, because dbt-postgres has none for it.
    A BI session idle in a transaction that read a mart then stops the table swap after
    DMF_PG_LOCK_TIMEOUT_S, not after the run's deadline."""
    if settings.warehouse != "postgres":
        return {}
    options = os.environ.get("PGOPTIONS", "").strip()
    lock_timeout = f"-c lock_timeout={round(settings.pg_lock_timeout_s * 1000)}"
    return {
        "PGCONNECT_TIMEOUT": str(warehouse.connect_timeout_s()),
        "PGOPTIONS": f"{options} {lock_timeout}".strip(),
    }


def lock_timeout_message(settings: Settings) -> str:
    """The line of a build its lock timeout stopped: who holds the lock (pg_locks and
    pg_stat_activity on the build's schemas), and what to do."""
    layers = warehouse.schemas(settings)
    try:
        with warehouse.connect(settings, read_only=True) as con:
            holders = warehouse.lock_holders(
                con, [layers.raw, layers.staging, layers.intermediate, layers.marts, layers.seeds]
            )
    except warehouse.Error:
        holders = []
    if holders:
        pid, first = holders[0]
        who = first + (f" (and {len(holders) - 1} more session(s))" if len(holders) > 1 else "")
        advice = (
            f"ask its owner to end that transaction, or end the session (`select pg_terminate_backend({pid})`), "
            "then run the command again"
        )
    else:
        who = "another session, which has let go of it since"
        advice = "run the command again"
    return (
        f"the build waited {settings.pg_lock_timeout_s:g} s (DMF_PG_LOCK_TIMEOUT_S) for a table lock on "
        f"{warehouse.describe(settings)} held by {who}; the build stopped there: {advice}."
    )


def parse_project(settings: Settings) -> Any:
    """dbt imported and the project parsed, for builds that follow in this process; None when
    dbt could not parse it (the build then parses again and says why).

    It reads no warehouse. A caller that builds several times (a backfill, a test session)
    parses once and passes the manifest to each build (dbtRunner(manifest=...)).
    """
    try:
        parsed = invoke_dbt(settings, "parse", "--no-write-json")
    except Exception:  # never fatal here: the build that follows parses again and reports it
        log.warning("dbt could not parse the project ahead of the build", exc_info=True)
        return None
    return parsed.result if parsed.returncode == 0 else None


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _outcome(settings: Settings, invocation: DbtInvocation) -> BuildOutcome:
    """The build's outcome from dbt's own result object (the morning build writes no
    run_results.json of dbt's, see _build)."""
    output = invocation.output
    if invocation.returncode != 0 and is_write_failure_text(output):
        raise DmfError(write_failure_message(settings, text=output))
    if invocation.returncode != 0 and NO_LOAD_MARKER in output:
        line = next(line.strip() for line in output.splitlines() if NO_LOAD_MARKER in line)
        raise NoLoadStored(line)
    if invocation.returncode != 0 and UNRECORDED_MARKER in output:
        raise DmfError(
            f"an integrity gate fired but the rejection could not be recorded ({_operation_message(output)}); "
            f"nothing was published. Fix the dbt project and run `dmf build` again "
            f"(details in {settings.state_dir / 'logs' / 'dbt.log'})."
        )
    if invocation.returncode != 0 and settings.warehouse == "postgres" and LOCK_TIMEOUT_MARKER in output:
        raise BuildLockTimeout(lock_timeout_message(settings))  # a hook's statement (on-run-end), or a node's
    if not hasattr(invocation.result, "results"):
        last = output.strip().splitlines()[-1:] or ["no output"]
        raise DmfError(f"dbt could not run: {last[0]} (see {settings.state_dir / 'logs' / 'dbt.log'}).")
    counts: dict[str, int] = {}
    failures: list[str] = []
    gate_fired = lock_timeout = False
    for result in invocation.result.results:
        status = str(getattr(result.status, "value", result.status))
        unique_id = result.node.unique_id
        kind = _result_kind(str(getattr(result.node.resource_type, "value", result.node.resource_type)), status)
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
        if status in {"error", "fail"}:
            name = unique_id.split(".")[-1] if unique_id.count(".") < 3 else unique_id.split(".")[2]
            failures.append(f"{name}: {(result.message or status).splitlines()[0]}")
        gate_fired = gate_fired or (status == "fail" and f".{GATE_TEST}" in unique_id)
        lock_timeout = lock_timeout or (status == "error" and LOCK_TIMEOUT_MARKER in (result.message or ""))
    if settings.warehouse == "postgres" and lock_timeout:
        raise BuildLockTimeout(lock_timeout_message(settings))
    notes = [line[line.index("gate rejections:") :] for line in output.splitlines() if "gate rejections:" in line]
    if invocation.returncode != 0 and not failures:  # an on-run-end hook failed (the publish): no node did
        failures.append(_operation_message(output))
    return BuildOutcome(
        success=invocation.returncode == 0,
        gate_fired=gate_fired,
        failures=failures,
        counts=counts,
        notes=notes,
        published=invocation.returncode == 0 and PUBLISHED_MARKER in output,
    )


def _write_run_results(settings: Settings, invocation: DbtInvocation) -> None:
    """Writes run_results.json as dbt would have, for a build run with --no-write-json."""
    if hasattr(invocation.result, "write"):
        invocation.result.write(str(settings.state_dir / "dbt" / "target" / "run_results.json"))


def check_seed_files(settings: Settings) -> None:
    """A malformed seed edit stops the build before dbt, in one line an analyst can act on."""
    problems = check_seeds(settings.project_dir)
    if problems:
        for problem in problems:
            log.error("seed check: %s", problem)
        raise DmfError(seed_error(problems))


def build(
    settings: Settings,
    *,
    full_refresh: bool = False,
    check_seeds: bool = True,
    unit_tests: bool = False,
    new_loads_only: bool = False,
    manifest: Any = None,
    after_load: bool = False,
) -> BuildOutcome:
    """Runs `dbt build`; after a gate rejection, builds once more so the marts reflect it.

    dbt's unit tests check the models' SQL on fixed inputs, so they say nothing about the day's
    data: the morning job leaves them out (dbt's own advice for production builds) and saves
    about a sixth of dbt's run time; `dmf build`, the command run after editing a model, and CI include them.

    `new_loads_only` (the morning job) has the data tests of the tables that hold every record
    of every load read only the loads stored since the last build that succeeded
    (macros/data_test_scope.sql), so that they cost the same on day 365 as on day 2. Every
    other build tests all of history; so does this one when no build has succeeded yet. It
    also leaves the seeds and their tests out when the seed files are byte for byte those the
    latest build loaded and it succeeded: the tables hold exactly what those tests passed, and
    the seven seeds with their 35 tests are a fifth of dbt's nodes. The models that read only
    seeds (SEED_ONLY_MODELS) are left out with them: their tables would come out the same.

    The outcome is recorded in the warehouse whatever it is, a dbt that could not run included.

    A malformed seed stops it before dbt starts: nothing is built, so nothing is recorded and
    the last good marts stay as they were. `check_seeds=False` leaves a malformed seed to dbt's
    own tests (which stay the authority).

    `manifest` (from parse_project) is used by every dbt command of the build instead of parsing
    the project again. `after_load`: a load of this run has just readied the raw layer (every
    load migrates a warehouse from before row versions first), so the build does not look again;
    looking imports the loader and dlt, which `dmf run` otherwise leaves to its load's process.
    """
    if check_seeds:
        check_seed_files(settings)
    check_lock_held("the build")
    if not after_load:
        _migrate_raw_items(settings)
    started = datetime.now(UTC)
    attempt_seq_seen = latest_attempt_seq(settings)
    seeds = seed_layer_digest(settings)
    try:
        tested_loads = loads_since_last_good_build(settings) if new_loads_only and not full_refresh else None
        keep_seeds = tested_loads is not None and _seeds_loaded_and_passed(settings, seeds)
        outcome, consistent = _build(
            settings,
            full_refresh,
            unit_tests,
            tested_loads,
            keep_seeds,
            morning=new_loads_only,
            manifest=manifest,
        )
    except NoLoadStored:
        raise  # dbt stopped before making anything: there is no build to record
    except (DmfError, KeyboardInterrupt) as error:
        with deferred_interruptions():  # a build stopped half-way is recorded, so nothing reads its marts
            record_build(
                settings,
                started,
                consistent=False,
                gate_fired=False,
                failures=[str(error) if isinstance(error, DmfError) else f"stopped ({error})"],
                full_refresh=full_refresh,
                attempt_seq_seen=attempt_seq_seen,
            )
        raise
    record_build(
        settings,
        started,
        consistent=consistent,
        gate_fired=outcome.gate_fired,
        failures=outcome.failures,
        full_refresh=full_refresh,
        seeds=seeds,
        attempt_seq_seen=attempt_seq_seen,
        published=outcome.published,
    )
    if outcome.published:
        _refresh_reader_copy(settings)
    return outcome


def _refresh_reader_copy(settings: Settings) -> None:
    """The BI tools' copy of the marts follows each publication (DuckDB only). It is a
    convenience beside the warehouse: a copy that cannot be written is logged and left as it
    was, never a reason to call the morning failed."""
    started = time.monotonic()
    try:
        with deferred_interruptions():  # the copy is renamed into place whole or not at all
            copy = warehouse.publish_reader_copy(settings)
    except (*warehouse.Error, OSError) as error:
        log.warning("the readers' copy of the marts was not refreshed: %s", str(error).splitlines()[0])
        return
    if copy is not None:
        log.info("build: the readers' copy of the marts is %s (%.2f s)", copy, time.monotonic() - started)


def seed_layer_digest(settings: Settings) -> str:
    """A hash of what the seed layer (the seeds and SEED_ONLY_MODELS) is built from: every file
    under seeds/ and macros/, dbt_project.yml (the seeds' column types), each such model's SQL and
    the property files beside it (its tests), and the versions of dbt and DuckDB that render and
    run them."""
    project = settings.project_dir
    models = [path for name in SEED_ONLY_MODELS for path in (project / "models").rglob(f"{name}.sql")]
    files = {
        *(project / "seeds").rglob("*"),
        *(project / "macros").rglob("*"),
        project / "dbt_project.yml",
        *models,
        *(path for model in models for path in model.parent.glob("*.yml")),
    }
    digest = hashlib.sha256()
    for package in ("dbt-core", "dbt-duckdb", "duckdb"):
        digest.update(f"{package}=={metadata.version(package)}\0".encode())
    for path in sorted(files):
        if path.is_file():
            digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _seeds_loaded_and_passed(settings: Settings, digest: str) -> bool:
    """Whether the latest build, whatever it was, succeeded with seed files of this digest: a
    failed build may have loaded other seeds that their tests then refused."""
    if not warehouse.exists(settings):
        return False
    with warehouse.connect(settings, read_only=True) as con:
        raw = con.schemas.raw
        if not table_exists(con, raw, BUILD_RUNS_TABLE) or not _has_column(con, BUILD_RUNS_TABLE, "seeds_digest"):
            return False
        row = con.execute(
            f"select success, seeds_digest from {raw}.{BUILD_RUNS_TABLE} order by finished_at desc limit 1"
        ).fetchone()
    return row is not None and bool(row[0]) and row[1] == digest


def _migrate_raw_items(settings: Settings) -> None:
    """A warehouse from before row versions is migrated before dbt reads the new raw tables
    (normally the next load has done it; this covers `dmf build` run first)."""
    from dmf_watch.pipelines.mfds.row_versions import has_items_table

    if has_items_table(settings):
        from dmf_watch.pipelines.mfds.load import migrate_raw_items

        migrate_raw_items(settings)


def loads_since_last_good_build(settings: Settings) -> list[str] | None:
    """The loads stored after the last build that left consistent marts started (None: there
    is no such build, so everything is new)."""
    if not warehouse.exists(settings):
        return None
    with warehouse.connect(settings, read_only=True) as con:
        raw = con.schemas.raw
        if not table_exists(con, raw, BUILD_RUNS_TABLE, "load_runs"):
            return None
        seen_column = "attempt_seq_seen" if _has_column(con, BUILD_RUNS_TABLE, "attempt_seq_seen") else "null"
        ((since, seen),) = con.execute(
            f"select max(started_at), max({seen_column}) from {raw}.{BUILD_RUNS_TABLE} where success"
        ).fetchall()
        if since is None:
            return None
        if seen is not None and _has_column(con, "load_runs", "attempt_seq"):
            # the warehouse's order of attempts, not the clock: a load written after a clock was
            # set back is still new to the build that follows it
            rows = con.execute(
                f"select load_id from {raw}.load_runs where attempt_seq > ? order by attempt_seq", [seen]
            ).fetchall()
        else:  # no successful build recorded what it saw yet
            rows = con.execute(
                f"select load_id from {raw}.load_runs where finished_at > ? order by finished_at", [since]
            ).fetchall()
    return [row[0] for row in rows]


def _has_column(con: warehouse.Connection, table: str, column: str) -> bool:
    """Whether a raw table has a column a later version added (older warehouses lack it)."""
    return column in warehouse.columns(con, con.schemas.raw, table)


def latest_attempt_seq(settings: Settings) -> int | None:
    """The newest load attempt's place in the warehouse's order (None: none recorded with one)."""
    if not warehouse.exists(settings):
        return None
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.raw, "load_runs") or not _has_column(con, "load_runs", "attempt_seq"):
            return None
        ((latest,),) = con.execute(f"select max(attempt_seq) from {con.schemas.raw}.load_runs").fetchall()
    return latest


def _build(
    settings: Settings,
    full_refresh: bool,
    unit_tests: bool,
    tested_loads: list[str] | None = None,
    keep_seeds: bool = False,
    morning: bool = False,
    manifest: Any = None,
) -> tuple[BuildOutcome, bool]:
    """The outcome, and whether the marts are consistent (passed, or a gate's rejection shown).

    The `morning` build (dmf run's) writes less, since every event and artifact dbt writes is
    Python under one lock that both of its threads wait for:
    - no JSON artifact (--no-write-json): serializing the manifest of every node and macro,
      twice a build, was more than a second of it. run_results.json is written from dbt's
      result all the same; manifest.json stays as the last build that wrote it left it.
    - its log file at info level, not debug: what ran, how long, every warning and error with
      its message, but not each SQL statement and connection event. The statements each model
      ran stay in the target dir's run/ folder. At day 368, five alternating cold builds each:
      median 5.41 s against 5.81 s, CPU 7.08 s against 7.6 s.
    """
    extra = (
        *(("--full-refresh",) if full_refresh else ()),
        *(() if unit_tests else ("--exclude-resource-type", "unit_test")),
        # excluding a node excludes the tests on it too
        *(("--exclude", "resource_type:seed", *SEED_ONLY_MODELS) if keep_seeds else ()),
        *(("--no-write-json",) if morning else ()),
    )
    # An environment variable, not --vars: dbt parses the whole project again when its vars change.
    scope = {} if tested_loads is None else {TESTED_LOADS_VARIABLE: json.dumps(tested_loads)}
    results_path = settings.state_dir / "dbt" / "target" / "run_results.json"

    started = time.monotonic()

    def build_once() -> BuildOutcome:
        results_path.unlink(missing_ok=True)  # a build dbt could not run leaves no stale results
        invocation = invoke_dbt(
            settings, "build", *extra, env=scope, manifest=manifest, log_file_level="info" if morning else "debug"
        )
        if morning:
            _write_run_results(settings, invocation)
        return replace(_outcome(settings, invocation), seconds=time.monotonic() - started)

    outcome = build_once()
    if not outcome.gate_fired:
        return outcome, outcome.success
    # dbt's on-run-end hook recorded the earliest fired load. Build again: a later new load
    # (several are new after a backfill) was compared with it, so each round judges the next load
    # against the last accepted one, as day-by-day builds would. Every round records one load or
    # ends, so the rounds are bounded by the loads a build can hold.
    first = outcome
    recorded = _rejected_load_count(settings)
    for note in first.notes:
        log.info("build: %s", note)
    while True:
        after = build_once()
        if not after.gate_fired:
            break
        for note in after.notes:
            log.info("build: %s", note)
        now = _rejected_load_count(settings)
        if now <= recorded:
            break
        log.info("build: an integrity gate fired again on a later load; building once more")
        recorded = now
    failures = first.failures if after.success else after.failures
    outcome = BuildOutcome(False, True, failures, after.counts, seconds=after.seconds, published=after.published)
    return outcome, after.success


def _operation_message(output: str) -> str:
    """The one line of dbt's output that says why: the macro's own message when it raised."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for marker in ("cannot record the gate rejection:", "gate rejections:"):
        for line in lines:
            if marker in line:
                return line[line.index(marker) :]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["dbt printed nothing"])[-1][:300]


def _rejected_load_count(settings: Settings) -> int:
    """How many loads the gates have rejected so far (the hook's table in the raw layer)."""
    try:
        with warehouse.connect(settings, read_only=True) as con:
            if not table_exists(con, con.schemas.raw, "rejected_load_signals"):
                return 0
            row = con.execute(f"select count(distinct load_id) from {con.schemas.raw}.rejected_load_signals").fetchone()
    except warehouse.Error:
        return 0
    return int(row[0]) if row else 0


def record_build(
    settings: Settings,
    started: datetime,
    *,
    consistent: bool,
    gate_fired: bool,
    failures: list[str],
    full_refresh: bool,
    seeds: str | None = None,
    attempt_seq_seen: int | None = None,
    published: bool = False,
) -> None:
    """Appends the build's outcome to the raw layer's build_runs (success: dbt passed, so the
    next morning's data tests may start after it; published: the readers' marts are this build;
    seeds_digest: seed_layer_digest of what its seeds and seed-only models came from, a column
    named before those models were kept with the seeds; attempt_seq_seen: the newest load
    attempt when it started, so the next morning build knows which loads are new to it)."""
    if not warehouse.exists(settings):
        return  # dbt never got as far as creating the warehouse: nothing to record it in
    try:
        with warehouse.connect(settings) as con:
            runs = f"{con.schemas.raw}.{BUILD_RUNS_TABLE}"
            con.execute(f"create schema if not exists {con.schemas.raw}")
            con.execute(
                f"create table if not exists {runs} ("
                "started_at timestamp with time zone, finished_at timestamp with time zone, "
                "success boolean, gate_fired boolean, full_refresh boolean, failures varchar)"
            )
            # a warehouse from before the seeds were left out of the morning build gains the column
            con.execute(f"alter table {runs} add column if not exists seeds_digest varchar")
            con.execute(f"alter table {runs} add column if not exists attempt_seq_seen bigint")
            con.execute(f"alter table {runs} add column if not exists published boolean")
            con.execute(
                f"insert into {runs} (started_at, finished_at, success, gate_fired, full_refresh, failures, "
                "seeds_digest, attempt_seq_seen, published) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    started,
                    datetime.now(UTC),
                    consistent,
                    gate_fired,
                    full_refresh,
                    "; ".join(failures) or None,
                    seeds,
                    attempt_seq_seen,
                    published,
                ],
            )
    except (*warehouse.Error, OSError):
        # e.g. a full disk: the build's own failure (already a one-line error) must not be hidden
        log.warning("could not record the build outcome in %s", warehouse.describe(settings), exc_info=True)


def unpublishable_reason(settings: Settings, as_of: date | None = None) -> str | None:
    """Why the marts cannot answer for `as_of` (never built; or the last build failed and the
    day's newest load came after the build the readers see); None when they can.

    The readers' marts are always a complete build (macros/publish_marts.sql), so a failed build
    after it does not make them unreadable: a day they hold is rendered as that build left it.
    Only a day whose newest load the published build did not see waits for a build that passes.
    """
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        return f"the warehouse {where} does not exist: {NO_LOAD_ADVICE}."
    with warehouse.connect(settings, read_only=True) as con:
        raw = con.schemas.raw
        if not table_exists(con, con.schemas.marts, "dmf_loads"):
            if not holds_a_load(con, raw):
                return f"the warehouse {where} holds no load yet: {NO_LOAD_ADVICE}."
            return f"the warehouse {where} has not been built; run `dmf build` first."
        if not table_exists(con, raw, BUILD_RUNS_TABLE):
            return None  # built before builds were recorded
        row = con.execute(
            f"select success, finished_at, failures from {raw}.{BUILD_RUNS_TABLE} order by finished_at desc limit 1"
        ).fetchone()
        if row is None or row[0]:
            return None
        newer = _loads_after_published_build(con, as_of) if as_of is not None else None
    first = (row[2] or "unknown error").split("; ")[0]
    failed = f"the last build failed at {row[1].astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC ({first[:200]})"
    if newer == 0:
        return None  # the published build already saw every load of the day
    return f"{failed}; fix that and run `dmf build`."


def _loads_after_published_build(con: warehouse.Connection, as_of: date) -> int | None:
    """How many loads of `as_of` were stored after the newest build that succeeded began (None:
    the warehouse does not record what its builds saw, so that cannot be told)."""
    raw = con.schemas.raw
    if not _has_column(con, BUILD_RUNS_TABLE, "attempt_seq_seen") or not _has_column(con, "load_runs", "attempt_seq"):
        return None
    ((seen,),) = con.execute(f"select max(attempt_seq_seen) from {raw}.{BUILD_RUNS_TABLE} where success").fetchall()
    if seen is None:
        return None
    ((count,),) = con.execute(
        f"select count(*) from {raw}.load_runs where as_of_date = ? and attempt_seq > ?", [as_of, seen]
    ).fetchall()
    return int(count)
