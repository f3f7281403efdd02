"""`load_day`: fetch the MFDS DMF list for one logical date and append it to the warehouse with dlt.

Every load is stored, complete or not, so the raw layer is the full audit trail;
the dbt gates decide later whether a complete load is also an *accepted* one. A date that
already has a complete load is skipped without calling the API unless `force=True`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import dlt
from dlt.common.configuration.exceptions import ConfigFieldMissingException
from dlt.extract.source import DltSource
from dlt.pipeline.exceptions import PipelineStepFailed

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import ConfigError, DmfError, error_chain
from dmf_watch.core.interrupts import raise_held
from dmf_watch.core.storage import write_failure
from dmf_watch.core.url_policy import base_url_problem
from dmf_watch.core.warehouse import table_exists
from dmf_watch.pipelines.mfds import empty_items_tables, mfds_source, run_row, run_row_resource
from dmf_watch.pipelines.mfds.contract import contract_violation, migrate_declared_columns
from dmf_watch.pipelines.mfds.helpers import IMPLAUSIBLE_MARKER, FetchResult, redact
from dmf_watch.pipelines.mfds.row_versions import (
    HashCollision,
    create_items_view,
    has_items_table,
    migrate_items_table,
    stored_versions,
)
from dmf_watch.pipelines.mfds.settings import (
    LIST_SIZE_DECISIONS_TABLE,
    MEMBERSHIP_TABLE,
    PIPELINE_NAME,
    RUNS_TABLE,
    VERSIONS_TABLE,
    RetryPolicy,
)

log = logging.getLogger(__name__)
# Attempts in the order the warehouse gave them; rows from before attempt_seq come first, by clock.
ATTEMPT_ORDER = "attempt_seq nulls first, finished_at, load_id"

MISSING_KEY = (
    "No MFDS service key is configured: set MFDS_SERVICE_KEY to the decoded key from data.go.kr "
    "(or put mfds_service_key in .dlt/secrets.toml)."
)


@dataclass(frozen=True)
class LoadOutcome:
    """What `load_day` did, for the command line and the run log (never holds the key)."""

    load_id: str | None
    as_of_date: date
    fetch_status: str  # 'complete' | 'incomplete' | 'failed' | 'skipped'
    reason: str | None
    total_count: int | None
    fetched_count: int
    distinct_count: int
    duplicate_count: int
    requests: int
    retries: int
    duration_s: float
    schema_drift: str | None = None  # the drift record (JSON) when the item keys did not fit

    @property
    def ok(self) -> bool:
        return self.fetch_status in ("complete", "skipped")

    def summary(self) -> str:
        day = self.as_of_date.isoformat()
        if self.fetch_status == "skipped":
            return f"Load for {day} skipped: {self.reason}"
        counts = (
            f"{self.fetched_count:,} records received"
            if self.schema_drift  # all-null once mapped
            else f"{self.distinct_count:,} records"
            + (f" ({self.duplicate_count:,} listed twice)" if self.duplicate_count else "")
        ) + f", {self.requests} requests, {self.retries} retries, {self.duration_s:.1f} s"
        if self.fetch_status == "complete":
            return f"Loaded the MFDS DMF list for {day} (load {self.load_id}): complete, {counts}."
        verdict = "failed" if self.fetch_status == "failed" else "is incomplete"
        if "--list-size" in (self.reason or ""):  # the cap refused it: the reason names the way through
            return f"The MFDS DMF load for {day} {verdict} (load {self.load_id}): {self.reason}."
        return (
            f"The MFDS DMF load for {day} {verdict} (load {self.load_id}): {self.reason}; {counts}. "
            "It is recorded but will not be used; run the load again later."
        )


def new_load_id(now: datetime | None = None) -> str:
    """Sortable and unique: UTC time of the start plus a short random suffix."""
    now = now or datetime.now(UTC)
    return f"{now.astimezone(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def mfds_pipeline(settings: Settings) -> dlt.Pipeline:
    """The dlt pipeline; its working dir lives under the project's state dir, not in ~/.dlt.

    The working dir is derivable: dlt keeps its state and schema in the warehouse too and syncs
    them back (sync_destination). So a working dir that cannot be read (a file cut short by a
    full disk, a corrupted state.json) is moved aside with one log line naming the file, and the
    run goes on with a fresh one, instead of failing every morning on a JSONDecodeError.
    """
    pipelines_dir = settings.state_dir / "dlt"
    pipelines_dir.mkdir(parents=True, exist_ok=True)
    _set_aside_if_unreadable(pipelines_dir / PIPELINE_NAME)
    return dlt.pipeline(
        pipeline_name=PIPELINE_NAME,
        pipelines_dir=str(pipelines_dir),
        destination=_destination(settings),
        dataset_name=warehouse.schemas(settings).raw,
    )


def _destination(settings: Settings) -> dlt.Destination:
    if settings.warehouse == "postgres":
        # The connection parameters libpq resolved (PGPASSFILE and ~/.pgpass included), handed
        # over as dlt's documented credentials dict; dlt masks the password in what it prints.
        return dlt.destinations.postgres(credentials=warehouse.postgres_credentials())
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    return dlt.destinations.duckdb(str(settings.duckdb_path))


def _set_aside_if_unreadable(working_dir: Path) -> None:
    # what dlt reads back as JSON when it opens the pipeline: its state and its stored schemas
    kept = [working_dir / "state.json", *sorted((working_dir / "schemas").glob("*.json"))]
    for path in (path for path in kept if path.is_file()):
        try:
            json.loads(path.read_bytes())
        except (ValueError, OSError) as error:
            aside = working_dir.with_name(f"{working_dir.name}.unreadable-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
            working_dir.rename(aside)
            log.warning(
                "dlt's working state %s could not be read (%s); it is rebuilt from the warehouse, and the "
                "unreadable copy was moved to %s",
                path,
                str(error).splitlines()[0][:160],
                aside,
            )
            return


def existing_complete_load(settings: Settings, as_of: date) -> tuple | None:
    """The latest complete load for `as_of` that the gates have not rejected, if any."""
    if not warehouse.exists(settings):
        return None
    schemas = warehouse.schemas(settings)
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, schemas.raw, RUNS_TABLE):
            return None
        not_rejected = ""
        if table_exists(con, schemas.marts, "dmf_loads"):
            not_rejected = (
                f" and load_id not in (select load_id from {schemas.marts}.dmf_loads where verdict = 'rejected')"
            )
        return con.execute(
            "select load_id, total_count, fetched_count, distinct_count, duplicate_count "
            f"from {schemas.raw}.{RUNS_TABLE} "
            f"where as_of_date = ? and fetch_status = 'complete'{not_rejected} "
            f"order by {ATTEMPT_ORDER} desc limit 1",
            [as_of],
        ).fetchone()


def published_load(settings: Settings, as_of: date) -> str | None:
    """The load that published `as_of` (its verdict in the marts is accepted), if any."""
    if not warehouse.exists(settings):
        return None
    marts = warehouse.schemas(settings).marts
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, marts, "dmf_day_decisions"):
            return None
        row = con.execute(
            f"select load_id from {marts}.dmf_day_decisions where as_of_date = ? and verdict = 'accepted'", [as_of]
        ).fetchone()
    return row[0] if row else None


def last_accepted_total(settings: Settings) -> int | None:
    """The totalCount of the latest accepted load (the latest complete one before any build)."""
    if not warehouse.exists(settings):
        return None
    schemas = warehouse.schemas(settings)
    with warehouse.connect(settings, read_only=True) as con:
        if table_exists(con, schemas.marts, "dmf_loads"):
            row = con.execute(
                f"select total_count from {schemas.marts}.dmf_loads where verdict = 'accepted' "
                "order by as_of_date desc, attempt_order desc limit 1"
            ).fetchone()
            if row:
                return row[0]
        if not table_exists(con, schemas.raw, RUNS_TABLE):
            return None
        row = con.execute(
            f"select total_count from {schemas.raw}.{RUNS_TABLE} where fetch_status = 'complete' "
            "order by as_of_date desc, finished_at desc limit 1"
        ).fetchone()
    return row[0] if row else None


def accepted_list_size(settings: Settings) -> int | None:
    """The list size a person accepted after the plausibility cap refused a load (`dmf accept-load
    --list-size`), while no list has been published for its date or a later one: the loader then
    takes it as the last accepted list's size, so the next list of that size is fetched (and one
    that grew again as much is refused again). Once a list is published after it, that list's
    size is the measure and the decision has done its work."""
    if not warehouse.exists(settings):
        return None
    schemas = warehouse.schemas(settings)
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, schemas.raw, LIST_SIZE_DECISIONS_TABLE):
            return None
        row = con.execute(
            f"select list_size, as_of_date from {schemas.raw}.{LIST_SIZE_DECISIONS_TABLE} "
            "order by decision_seq desc limit 1"
        ).fetchone()
        if row is None:
            return None
        if table_exists(con, schemas.marts, "dmf_loads"):
            ((published,),) = con.execute(
                f"select count(*) from {schemas.marts}.dmf_loads where verdict = 'accepted' and as_of_date >= ?",
                [row[1]],
            ).fetchall()
            if published:
                return None
    return row[0]


def plausibility_base(settings: Settings) -> int | None:
    """The list size the plausibility cap grows from (RetryPolicy.plausible_total): the last
    accepted list's, or a larger size a person accepted since."""
    sizes = [size for size in (last_accepted_total(settings), accepted_list_size(settings)) if size is not None]
    return max(sizes) if sizes else None


def with_cap_advice(reason: str | None, as_of: date, total_count: int | None) -> str | None:
    """A cap refusal's reason with the command that lets a checked list through, so every place that
    shows it (the load line, `dmf status`, the report, the alert) names the way out."""
    if not reason or IMPLAUSIBLE_MARKER not in reason or total_count is None or "--list-size" in reason:
        return reason
    return (
        f"{reason}; if the MFDS site lists {total_count:,} registrations, let the list through: "
        f"dmf accept-load --as-of {as_of.isoformat()} --by NAME --reason TEXT --list-size {total_count}"
    )


def next_attempt_seq(settings: Settings) -> int:
    """The place of the next load attempt in the warehouse's order of attempts.

    Taken from the warehouse under its lock (every writer holds it), never from a clock: a
    retry after an NTP correction still comes after the attempt it retries.
    """
    if not warehouse.exists(settings):
        return 1
    raw = warehouse.schemas(settings).raw
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, raw, RUNS_TABLE) or "attempt_seq" not in warehouse.columns(con, raw, RUNS_TABLE):
            return 1
        ((latest,),) = con.execute(f"select max(attempt_seq) from {raw}.{RUNS_TABLE}").fetchall()
    return (latest or 0) + 1


def _loaded_run(settings: Settings, package_id: str) -> str:
    """Which of our loads a dlt package held, for the log line (dlt's id means nothing to a user)."""
    try:
        with warehouse.connect(settings, read_only=True) as con:
            row = con.execute(
                f"select load_id, as_of_date, fetch_status from {warehouse.schemas(settings).raw}.{RUNS_TABLE} "
                "where _dlt_load_id = ?",
                [package_id],
            ).fetchone()
    except warehouse.Error:
        row = None
    return f"load {row[0]} of {row[1]} ({row[2]})" if row else "a load without its load_runs row"


def _forget_uncompleted_jobs(settings: Settings, pipeline: dlt.Pipeline, package_id: str) -> None:
    """Remove the rows of a package's jobs that dlt will run again, so completing it loads each
    row once. A kill can fall after DuckDB committed a job and before dlt marked it completed;
    dlt then re-runs the job and the rows would be there twice (seen: 2,400 items for 1,200).
    Only rows of this never-completed package go (it has no `_dlt_loads` row yet); jobs dlt
    marked completed keep theirs and are not run again."""
    if not warehouse.exists(settings):
        return
    jobs = pipeline.get_load_package_info(package_id).jobs
    tables = {
        job.job_file_info.table_name
        for state in ("new_jobs", "started_jobs", "failed_jobs")
        for job in jobs.get(state, [])
    }
    raw = warehouse.schemas(settings).raw
    with warehouse.connect(settings) as con:
        for table in sorted(tables & {VERSIONS_TABLE, MEMBERSHIP_TABLE, RUNS_TABLE}):
            if table_exists(con, raw, table):
                ((stray,),) = con.execute(
                    f"select count(*) from {raw}.{table} where _dlt_load_id = ?", [package_id]
                ).fetchall()
                if stray:
                    con.execute(f"delete from {raw}.{table} where _dlt_load_id = ?", [package_id])
                    log.warning(
                        "dlt package %s: %d row(s) of %s.%s were in the warehouse although dlt had not "
                        "marked their job done; removed so the completed package holds them once",
                        package_id,
                        stray,
                        raw,
                        table,
                    )


def recover_pending(settings: Settings, pipeline: dlt.Pipeline) -> list[str]:
    """Finish what a killed run left in dlt's working dir, deliberately, before a new extract.

    dlt would otherwise load the pending package *instead of* the new data. A normalized
    package may already be partly in DuckDB (dlt loads job by job), so it is completed: the
    raw tables then hold that load whole, with its load_runs row. A package that was only
    extracted never reached DuckDB and is discarded; the caller extracts afresh. One log line
    per package says which, with its ids. Returns those lines (for tests and the caller).
    """
    lines: list[str] = []
    normalized = list(pipeline.list_normalized_load_packages())
    for package_id in normalized:
        _forget_uncompleted_jobs(settings, pipeline, package_id)
    if normalized:
        pipeline.load()
        for package_id in normalized:
            lines.append(
                f"dlt package {package_id} left by an interrupted run was normalized (possibly partly "
                f"loaded), so it was completed: {_loaded_run(settings, package_id)} is now whole in "
                f"{pipeline.dataset_name}"
            )
    extracted = list(pipeline.list_extracted_load_packages())
    if extracted:
        pipeline.abort_packages()
        for package_id in extracted:
            lines.append(
                f"dlt package {package_id} left by an interrupted run was only extracted (nothing of it "
                "reached the warehouse), so it was discarded; the list is fetched afresh"
            )
    for line in lines:
        log.warning("%s", line)
    return lines


def _ensure_items_table(settings: Settings, pipeline: dlt.Pipeline) -> None:
    """A load without items must still leave both item tables with every column (dbt reads
    them), and the `dmf_items` view over them."""
    raw = warehouse.schemas(settings).raw
    with warehouse.connect(settings) as con:
        missing = not table_exists(con, raw, VERSIONS_TABLE, MEMBERSHIP_TABLE)
    if missing:
        pipeline.run(empty_items_tables(), schema=pipeline.default_schema, loader_file_format="insert_values")
    with warehouse.connect(settings) as con:
        create_items_view(con, raw)


def migrate_raw_items(settings: Settings, pipeline: dlt.Pipeline | None = None) -> str | None:
    """A warehouse from before row versions (a `dmf_items` table holding every load whole) is
    moved into versions + membership once, on the next load or build; returns the log line.

    The tables are created empty by dlt first (so dlt's schema knows them), then the rows move
    in one DuckDB transaction (`row_versions.migrate_items_table`); idempotent.
    """
    if not has_items_table(settings):
        return None
    pipeline = pipeline or mfds_pipeline(settings)
    pipeline.sync_destination()
    pipeline.run(empty_items_tables(), schema=pipeline.default_schema, loader_file_format="insert_values")
    return migrate_items_table(settings)


def stop_if_interrupted(exc: PipelineStepFailed) -> None:
    """dlt wraps whatever its steps raise, a KeyboardInterrupt included, in PipelineStepFailed; a
    run told to stop (SIGTERM, its deadline, Ctrl-C: RunInterrupted) while dlt syncs or stores must
    stop as told, not be reported as a warehouse that could not be written."""
    stop = next((error for error in error_chain(exc) if isinstance(error, KeyboardInterrupt)), None)
    if stop is not None:
        raise stop


def _write_error(settings: Settings, as_of: date, exc: PipelineStepFailed, service_key: str | None) -> DmfError:
    """A dlt step that could not write: disk full becomes the what-to-free line, else one sentence.

    The original exception stays chained (for the log), never in the message: it may hold paths
    with the key of a URL; the message is redacted.
    """
    detail = redact(str(exc.exception) if exc.exception else str(exc), service_key)
    collision = next((c for c in error_chain(exc) if isinstance(c, HashCollision)), None)
    if collision is not None:
        return DmfError(f"The MFDS load for {as_of} was refused: {collision}.")
    disk = write_failure(exc, settings)
    if disk is not None:
        return DmfError(redact(disk, service_key))
    return DmfError(
        f"The MFDS load for {as_of} could not be written to {warehouse.describe(settings)} "
        f"({detail.splitlines()[0][:200] if detail else 'unknown error'}); "
        "check that no other program holds the file and try again."
    )


def ready_pipeline(settings: Settings, as_of: date, service_key: str | None = None) -> dlt.Pipeline:
    """The pipeline with whatever a killed run left finished first, a warehouse from before row
    versions migrated and the raw tables given every declared column: what every writer of the
    raw layer (a live load, `dmf backfill`) does before it extracts anything."""
    pipeline = mfds_pipeline(settings)
    try:
        if recover_pending(settings, pipeline) and warehouse.exists(settings):
            _ensure_items_table(settings, pipeline)  # the view over what the completed package wrote
        migrate_raw_items(settings, pipeline)
        migrate_declared_columns(pipeline)
    except PipelineStepFailed as exc:
        stop_if_interrupted(exc)
        raise _write_error(settings, as_of, exc, service_key) from exc
    return pipeline


def load_day(
    settings: Settings,
    as_of: date,
    *,
    service_key: str | None = None,
    force: bool = False,
    retry_policy: RetryPolicy | None = None,
) -> LoadOutcome:
    """Load the whole MFDS DMF list as of `as_of`; API and data problems become the outcome.

    Raises `ConfigError` when no service key is configured, and `DmfError` only when the load
    cannot be written to DuckDB at all.
    """
    pipeline = ready_pipeline(settings, as_of, service_key)
    if force:
        published = published_load(settings, as_of)
        if published is not None:
            raise ConfigError(
                f"{as_of} is published (load {published}); a forced load never replaces a published day. "
                f"If that day's list was wrong, withdraw it deliberately: `dmf reject-load --as-of {as_of} "
                "--by NAME --reason TEXT`, then load again."
            )
    else:
        existing = existing_complete_load(settings, as_of)
        if existing is not None:
            load_id, total, fetched, distinct, duplicates = existing
            return LoadOutcome(
                load_id=load_id,
                as_of_date=as_of,
                fetch_status="skipped",
                reason=f"a complete load ({load_id}) already exists for this date (--force loads it again unless the day is published)",
                total_count=total,
                fetched_count=fetched,
                distinct_count=distinct,
                duplicate_count=duplicates,
                requests=0,
                retries=0,
                duration_s=0.0,
            )

    problem = base_url_problem(settings.api_base_url, settings.api_allowed_hosts)
    if problem is not None:  # the CLI refused it already; checked again for every other caller
        raise ConfigError(f"{problem}.")
    if service_key is not None and not service_key.strip():
        raise ConfigError(MISSING_KEY)
    key_args = {} if service_key is None else {"mfds_service_key": service_key}  # decoded once, in helpers
    load_id = new_load_id()
    results: list[FetchResult] = []
    try:
        source = mfds_source(
            as_of=as_of,
            load_id=load_id,
            mfds_api_base_url=settings.api_base_url,
            retry_policy=retry_policy
            or RetryPolicy(page_deadline_s=settings.page_deadline_s, load_deadline_s=settings.load_deadline_s),
            on_result=results.append,
            allowed_hosts=settings.api_allowed_hosts,
            known_versions=lambda hashes: stored_versions(settings, hashes),
            previous_total=plausibility_base(settings),
            **key_args,
        )
    except ConfigFieldMissingException:  # neither MFDS_SERVICE_KEY nor .dlt/secrets.toml has it
        raise ConfigError(MISSING_KEY) from None
    source.resources[RUNS_TABLE].add_map(
        lambda row: {**row, "reason": with_cap_advice(row["reason"], as_of, row["total_count"])}
    )
    outcome = write_load(settings, pipeline, source, results, as_of, load_id, service_key=service_key)
    raise_held()  # a fetch stopped by a signal or the deadline is recorded as failed; now the run stops
    return outcome


def write_load(
    settings: Settings,
    pipeline: dlt.Pipeline,
    source: DltSource,
    results: list[FetchResult],
    as_of: date,
    load_id: str,
    *,
    service_key: str | None = None,
) -> LoadOutcome:
    """Write one load's source (the API's, or a dump's: mfds_source / mfds_dump_source) to the
    raw layer; `results` receives its `FetchResult` when dlt extracts it. Live loads and
    `dmf backfill` share this, so both store exactly the same way."""
    attempt_seq = next_attempt_seq(settings)
    try:
        source.resources[RUNS_TABLE].add_map(lambda row: {**row, "attempt_seq": attempt_seq})
        pipeline.run(source, loader_file_format=_file_format(settings))
        _ensure_items_table(settings, pipeline)
    except PipelineStepFailed as exc:
        stop_if_interrupted(exc)
        violation = contract_violation(exc)
        if violation is not None:
            return _refused_by_contract(settings, pipeline, as_of, load_id, results, violation, attempt_seq)
        raise _write_error(settings, as_of, exc, service_key) from exc
    if not results:  # recover_pending leaves nothing pending, so dlt extracted our source
        raise DmfError(f"The MFDS load for {as_of} fetched nothing (dlt did not extract the source); run it again.")
    result = results[0]
    outcome = _outcome(result, load_id, as_of)
    (log.info if result.status == "complete" else log.warning)("%s", outcome.summary())
    return outcome


def _file_format(settings: Settings) -> str:
    """jsonl for DuckDB: it bulk-reads it against the declared columns, ~5x faster and ~3x leaner
    than dlt's default INSERT statements there. PostgreSQL takes INSERT statements: its other
    bulk format, csv, cannot tell an empty string from a null, and the raw layer keeps both.
    Values arrive unchanged either way (tests/load/test_load_replay.py compares every field with
    the real dump)."""
    return "jsonl" if settings.warehouse == "duckdb" else "insert_values"


def _outcome(result: FetchResult, load_id: str, as_of: date) -> LoadOutcome:
    return LoadOutcome(
        load_id=load_id,
        as_of_date=as_of,
        fetch_status=result.status,
        reason=with_cap_advice(result.reason, as_of, result.total_count),
        total_count=result.total_count,
        fetched_count=result.fetched_count,
        distinct_count=result.distinct_count,
        duplicate_count=result.duplicate_count,
        requests=result.requests,
        retries=result.retries,
        duration_s=result.duration_s,
        schema_drift=result.schema_drift,
    )


def _refused_by_contract(
    settings: Settings,
    pipeline: dlt.Pipeline,
    as_of: date,
    load_id: str,
    results: list[FetchResult],
    violation: str,
    attempt_seq: int,
) -> LoadOutcome:
    """The frozen raw schema refused a column: abort what dlt extracted, record a rejected load.

    The extracted package is aborted on purpose (a log line says so): loading it later would
    bring the refused column back, and the next run must fetch afresh.
    """
    pipeline.abort_packages()
    log.warning("MFDS load %s refused by the raw schema contract: %s; aborted its pending package", load_id, violation)
    if not results:
        raise DmfError(
            f"The MFDS load for {as_of} was refused by the raw schema contract ({violation}); nothing was stored."
        )
    result = dataclasses.replace(results[0], status="incomplete", reason=violation)
    try:
        pipeline.run(run_row_resource(run_row(result, load_id, as_of, attempt_seq)), loader_file_format="jsonl")
        _ensure_items_table(settings, pipeline)
    except PipelineStepFailed as exc:
        stop_if_interrupted(exc)
        pipeline.abort_packages()
        raise DmfError(
            f"The MFDS load for {as_of} was refused by the raw schema contract ({violation}) "
            "and could not even be recorded; check dmf_watch/pipelines/mfds/__init__.py."
        ) from None
    outcome = _outcome(result, load_id, as_of)
    log.warning("%s", outcome.summary())
    return outcome
