"""`load_day`: fetch the MFDS DMF list for one logical date and append it to DuckDB with dlt.

Every load is stored, complete or not, so the raw layer is the full audit trail (SPEC §3);
the dbt gates decide later whether a complete load is also an *accepted* one. A date that
already has a complete load is skipped without calling the API unless `force=True`.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import date, datetime, timezone

import dlt
import duckdb
from dlt.common.configuration.exceptions import ConfigFieldMissingException
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.config import Settings
from pipelines.errors import ConfigError, DmfError
from pipelines.mfds import empty_items_table, mfds_source
from pipelines.mfds.helpers import FetchResult, is_usable_base_url, redact
from pipelines.mfds.settings import DATASET_NAME, ITEMS_TABLE, PIPELINE_NAME, RUNS_TABLE, RetryPolicy

log = logging.getLogger(__name__)

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

    @property
    def ok(self) -> bool:
        return self.fetch_status in ("complete", "skipped")

    def summary(self) -> str:
        day = self.as_of_date.isoformat()
        if self.fetch_status == "skipped":
            return f"Load for {day} skipped: {self.reason}"
        counts = (
            f"{self.distinct_count:,} records"
            + (f" ({self.duplicate_count:,} listed twice)" if self.duplicate_count else "")
            + f", {self.requests} requests, {self.retries} retries, {self.duration_s:.1f} s"
        )
        if self.fetch_status == "complete":
            return f"Loaded the MFDS DMF list for {day} (load {self.load_id}): complete, {counts}."
        verdict = "failed" if self.fetch_status == "failed" else "is incomplete"
        return (
            f"The MFDS DMF load for {day} {verdict} (load {self.load_id}): {self.reason}; {counts}. "
            "It is recorded but will not be used; run the load again later."
        )


def new_load_id(now: datetime | None = None) -> str:
    """Sortable and unique: UTC time of the start plus a short random suffix."""
    now = now or datetime.now(timezone.utc)
    return f"{now.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}"


def mfds_pipeline(settings: Settings) -> dlt.Pipeline:
    """The dlt pipeline; its working dir lives under the project's state dir, not in ~/.dlt."""
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    pipelines_dir = settings.state_dir / "dlt"
    pipelines_dir.mkdir(parents=True, exist_ok=True)
    return dlt.pipeline(
        pipeline_name=PIPELINE_NAME,
        pipelines_dir=str(pipelines_dir),
        destination=dlt.destinations.duckdb(str(settings.duckdb_path)),
        dataset_name=DATASET_NAME,
    )


def _table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    row = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, table],
    ).fetchone()
    return bool(row and row[0])


def existing_complete_load(settings: Settings, as_of: date) -> tuple | None:
    """The latest complete load for `as_of` that the gates have not rejected, if any."""
    if not settings.duckdb_path.exists():
        return None
    with duckdb.connect(str(settings.duckdb_path)) as con:
        if not _table_exists(con, DATASET_NAME, RUNS_TABLE):
            return None
        not_rejected = ""
        if _table_exists(con, "marts", "dmf_loads"):
            not_rejected = (
                " and load_id not in (select load_id from marts.dmf_loads where verdict = 'rejected')"
            )
        return con.execute(
            "select load_id, total_count, fetched_count, distinct_count, duplicate_count "
            f"from {DATASET_NAME}.{RUNS_TABLE} "
            f"where as_of_date = ? and fetch_status = 'complete'{not_rejected} "
            "order by finished_at desc limit 1",
            [as_of],
        ).fetchone()


def _ensure_items_table(settings: Settings, pipeline: dlt.Pipeline) -> None:
    """A load without items must still leave `dmf_items` with every column (dbt reads it)."""
    with duckdb.connect(str(settings.duckdb_path)) as con:
        if _table_exists(con, DATASET_NAME, ITEMS_TABLE):
            return
    pipeline.run(empty_items_table(), schema=pipeline.default_schema, loader_file_format="insert_values")


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
    if not force:
        existing = existing_complete_load(settings, as_of)
        if existing is not None:
            load_id, total, fetched, distinct, duplicates = existing
            return LoadOutcome(
                load_id=load_id, as_of_date=as_of, fetch_status="skipped",
                reason=f"a complete load ({load_id}) already exists for this date; use --force to load it again",
                total_count=total, fetched_count=fetched, distinct_count=distinct,
                duplicate_count=duplicates, requests=0, retries=0, duration_s=0.0,
            )

    if not is_usable_base_url(settings.api_base_url):
        raise ConfigError(
            f"MFDS_API_BASE_URL is not an http(s) URL ({settings.api_base_url.split('?')[0]!r}); "
            "set it to https://apis.data.go.kr/1471000/MdcDmfInfoService01 or the simulator's URL."
        )
    if service_key is not None and not service_key.strip():
        raise ConfigError(MISSING_KEY)
    key_args = {} if service_key is None else {"mfds_service_key": service_key}  # decoded once, in helpers
    load_id = new_load_id()
    results: list[FetchResult] = []
    try:
        source = mfds_source(
            as_of=as_of, load_id=load_id, mfds_api_base_url=settings.api_base_url,
            retry_policy=retry_policy, on_result=results.append, **key_args,
        )
    except ConfigFieldMissingException:  # neither MFDS_SERVICE_KEY nor .dlt/secrets.toml has it
        raise ConfigError(MISSING_KEY) from None

    pipeline = mfds_pipeline(settings)
    try:
        # jsonl: DuckDB bulk-reads it against the declared columns, ~5x faster and ~3x leaner
        # than dlt's default INSERT statements for this destination; values arrive unchanged
        # (tests/test_load_replay.py compares every field with the real dump).
        pipeline.run(source, loader_file_format="jsonl")
        if not results or not results[0].rows:
            _ensure_items_table(settings, pipeline)
    except PipelineStepFailed as exc:
        detail = redact(str(exc.exception) if exc.exception else str(exc), service_key)
        raise DmfError(
            f"The MFDS load for {as_of} could not be written to {settings.duckdb_path} "
            f"({detail.splitlines()[0][:200] if detail else 'unknown error'}); "
            "check that no other program holds the file and try again."
        ) from None
    if not results:  # cannot happen: both resources fetch before they yield
        raise DmfError(f"The MFDS load for {as_of} produced no fetch result; this is a bug, please report it.")
    result = results[0]
    outcome = LoadOutcome(
        load_id=load_id,
        as_of_date=as_of,
        fetch_status=result.status,
        reason=result.reason,
        total_count=result.total_count,
        fetched_count=result.fetched_count,
        distinct_count=result.distinct_count,
        duplicate_count=result.duplicate_count,
        requests=result.requests,
        retries=result.retries,
        duration_s=result.duration_s,
    )
    (log.info if result.status == "complete" else log.warning)("%s", outcome.summary())
    return outcome
