"""The MFDS DMF dlt source: the whole public DMF list per load, and one row describing the load.

Three resources, all append-only in the `mfds_raw` dataset:

- `dmf_item_versions`: each distinct record once, ever: the 9 source fields exactly as received
  (declared as nullable text so every column exists even when a load has it all null) under
  `row_hash`, the hash of those exact values; a load appends only the records not stored yet
  (`row_versions.split_rows`);
- `dmf_load_items`: one row per distinct record received per load (stable repeats kept once,
  `repeat_count` says how often): its position, page and `row_hash`. Joined to the versions it
  gives back the load exactly (the view `mfds_raw.dmf_items`);
- `load_runs`: one row per load attempt, complete or not, with its verdict and counters, and
  (`schema_drift`) what did not match the declared item schema.

Both resources carry a dlt schema contract with frozen columns (settings.RAW_SCHEMA_CONTRACT):
the raw tables hold exactly the declared columns and can never silently grow new ones; columns
this code declares later are added deliberately (`declared_columns_resources`).

The list is fetched once, lazily, when the first resource is extracted (helpers.fetch_registry);
API and data problems never raise here: they become `load_runs.fetch_status` and `reason`.
The service key arrives through dlt secrets (`MFDS_SERVICE_KEY`, or `mfds_service_key` in
`.dlt/secrets.toml`) and is typed as a secret so dlt keeps it out of its traces.
"""

from __future__ import annotations

import os

# Defaults that must hold wherever `dmf` is started from (dlt only reads .dlt/ in the working
# directory): no anonymous usage telemetry, and no copy of every day's items kept in the
# pipeline dir once DuckDB has them (the raw tables are the audit trail). Env still overrides.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("LOAD__DELETE_COMPLETED_JOBS", "true")

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date
from typing import Any

import dlt
from dlt.common.typing import TSecretStrValue
from dlt.extract.resource import DltResource

from dmf_watch.core.config import DEFAULT_API_BASE_URL
from dmf_watch.pipelines.mfds.helpers import FetchResult, fetch_registry
from dmf_watch.pipelines.mfds.row_versions import KnownVersions, split_rows
from dmf_watch.pipelines.mfds.settings import (
    ITEM_SCHEMA,
    MEMBERSHIP_TABLE,
    RAW_SCHEMA_CONTRACT,
    RUNS_TABLE,
    VERSIONS_TABLE,
    RetryPolicy,
)

VERSION_COLUMNS: dict[str, dict[str, Any]] = {
    "row_hash": {"data_type": "bigint", "nullable": False, "unique": True},
    **{name.lower(): dict(spec) for name, spec in ITEM_SCHEMA.items()},
}

MEMBERSHIP_COLUMNS: dict[str, dict[str, Any]] = {
    "load_id": {"data_type": "text", "nullable": False},
    "as_of_date": {"data_type": "date", "nullable": False},
    "item_position": {"data_type": "bigint", "nullable": False},
    "page_no": {"data_type": "bigint", "nullable": False},
    "repeat_count": {"data_type": "bigint", "nullable": False},
    "row_hash": {"data_type": "bigint", "nullable": False},
}

RUN_COLUMNS: dict[str, dict[str, Any]] = {
    "load_id": {"data_type": "text", "nullable": False, "unique": True},
    "as_of_date": {"data_type": "date", "nullable": False},
    "started_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "finished_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
    "duration_s": {"data_type": "double", "nullable": False},
    "fetch_status": {"data_type": "text", "nullable": False},
    "reason": {"data_type": "text", "nullable": True},
    "total_count": {"data_type": "bigint", "nullable": True},
    "fetched_count": {"data_type": "bigint", "nullable": False},
    "distinct_count": {"data_type": "bigint", "nullable": False},
    "duplicate_count": {"data_type": "bigint", "nullable": False},
    "pages": {"data_type": "bigint", "nullable": False},
    "requests": {"data_type": "bigint", "nullable": False},
    "retries": {"data_type": "bigint", "nullable": False},
    "attempts": {"data_type": "bigint", "nullable": False},
    "result_codes": {"data_type": "text", "nullable": True},
    "source_url": {"data_type": "text", "nullable": True},
    # Added with issue 8; dlt adds it to existing warehouses (load.migrate_declared_columns).
    "schema_drift": {"data_type": "text", "nullable": True},
    # The order of attempts, assigned by the writer from the warehouse (load.next_attempt_seq),
    # never read off a clock: null on rows written before it was declared.
    "attempt_seq": {"data_type": "bigint", "nullable": True},
}


DECLARED_COLUMNS: dict[str, dict[str, dict[str, Any]]] = {
    VERSIONS_TABLE: VERSION_COLUMNS,
    MEMBERSHIP_TABLE: MEMBERSHIP_COLUMNS,
    RUNS_TABLE: RUN_COLUMNS,
}


class _FetchOnce:
    """Both resources need the same fetch; whichever is extracted first runs it."""

    def __init__(self, fetch: Callable[[], FetchResult], on_result: Callable[[FetchResult], None] | None) -> None:
        self._fetch, self._on_result = fetch, on_result
        self._result: FetchResult | None = None

    def __call__(self) -> FetchResult:
        if self._result is None:
            self._result = self._fetch()
            if self._on_result is not None:
                self._on_result(self._result)
        return self._result


def run_row(result: FetchResult, load_id: str, as_of: date, attempt_seq: int | None = None) -> dict[str, Any]:
    """The `load_runs` row of one load (`attempt_seq` is set by the writer, load.write_load)."""
    return {
        "load_id": load_id,
        "as_of_date": as_of,
        "started_at": result.started_at,
        "finished_at": result.finished_at,
        "duration_s": result.duration_s,
        "fetch_status": result.status,
        "reason": result.reason,
        "total_count": result.total_count,
        "fetched_count": result.fetched_count,
        "distinct_count": result.distinct_count,
        "duplicate_count": result.duplicate_count,
        "pages": result.pages,
        "requests": result.requests,
        "retries": result.retries,
        "attempts": result.attempts,
        "result_codes": result.result_codes,
        "source_url": result.source_url,
        "schema_drift": result.schema_drift,
        "attempt_seq": attempt_seq,
    }


@dlt.source(name="mfds", max_table_nesting=0)
def mfds_source(
    as_of: date,
    load_id: str,
    mfds_service_key: TSecretStrValue = dlt.secrets.value,
    mfds_api_base_url: str = DEFAULT_API_BASE_URL,
    retry_policy: RetryPolicy | None = None,
    on_result: Callable[[FetchResult], None] | None = None,
    allowed_hosts: Sequence[str] = (),
    known_versions: KnownVersions | None = None,
    previous_total: int | None = None,
) -> Sequence[DltResource]:
    """The MFDS DMF list for the logical date `as_of`, as load `load_id`.

    `on_result` receives the `FetchResult` once the list has been fetched, so the caller can
    report the verdict without reading the warehouse back. `known_versions` looks up stored
    row versions (see `item_resources`). `previous_total`, the last accepted list's size, bounds
    the totalCount the fetch believes (RetryPolicy.plausible_total).
    """
    fetch = _FetchOnce(
        lambda: fetch_registry(mfds_api_base_url, mfds_service_key, retry_policy, allowed_hosts, previous_total),
        on_result,
    )
    return raw_resources(as_of, load_id, fetch, known_versions)


@dlt.source(name="mfds", max_table_nesting=0)
def mfds_dump_source(
    as_of: date,
    load_id: str,
    read: Callable[[], FetchResult],
    on_result: Callable[[FetchResult], None] | None = None,
    known_versions: KnownVersions | None = None,
) -> Sequence[DltResource]:
    """One dated dump of the list (`dmf backfill`, dmf_watch/pipelines/mfds/dumps.py) as load `load_id`.

    Same resources, hence the same tables, columns and contract as a live load: only where the
    `FetchResult` comes from differs (a file read by `read` instead of the API).
    """
    return raw_resources(as_of, load_id, _FetchOnce(read, on_result), known_versions)


def raw_resources(
    as_of: date, load_id: str, fetch: Callable[[], FetchResult], known_versions: KnownVersions | None = None
) -> Sequence[DltResource]:
    """The raw tables of one load, whatever its items came from: the one writer of `mfds_raw`."""

    @dlt.resource(name=RUNS_TABLE, write_disposition="append", columns=RUN_COLUMNS, schema_contract=RAW_SCHEMA_CONTRACT)
    def load_runs() -> Iterator[dict[str, Any]]:
        yield run_row(fetch(), load_id, as_of)

    return (*item_resources(lambda: fetch().rows, load_id, as_of, known_versions), load_runs)


def _batches(rows: list[dict[str, Any]], size: int = 2000) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def item_resources(
    rows: Callable[[], list[dict[str, Any]]],
    load_id: str,
    as_of: date,
    known_versions: KnownVersions | None = None,
) -> tuple[DltResource, DltResource]:
    """The writer of a load's items: its new row versions and its membership, both appended.

    `rows` gives the load's distinct rows (item_position, page_no, repeat_count and the 9
    fields, as `helpers.distinct_rows` makes them) when first extracted; `known_versions`
    answers which of their hashes are stored already (None: none are), so only records never
    seen before are written as versions. Any item source (live fetch, dump) can feed it.
    """
    split: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def parts() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        if not split:
            split.append(split_rows(rows(), load_id, as_of, known_versions))
        return split[0]

    @dlt.resource(
        name=VERSIONS_TABLE, write_disposition="append", columns=VERSION_COLUMNS, schema_contract=RAW_SCHEMA_CONTRACT
    )
    def dmf_item_versions() -> Iterator[list[dict[str, Any]]]:
        yield from _batches(parts()[0])

    @dlt.resource(
        name=MEMBERSHIP_TABLE,
        write_disposition="append",
        columns=MEMBERSHIP_COLUMNS,
        schema_contract=RAW_SCHEMA_CONTRACT,
    )
    def dmf_load_items() -> Iterator[list[dict[str, Any]]]:
        yield from _batches(parts()[1])

    return dmf_item_versions, dmf_load_items


def declared_columns_resources(tables: Iterable[str]) -> list[DltResource]:
    """Resources that add columns declared in this module to raw tables created before them.

    The frozen contract refuses any column the stored schema lacks, declared or not, so a
    warehouse from before a new declared column (e.g. `schema_drift`) gets it through these,
    with the contract relaxed for this one schema-only step; no row is written.
    """
    declared = DECLARED_COLUMNS
    resources = []
    for table in tables:

        def materialize() -> Iterator[Any]:
            yield dlt.mark.materialize_table_schema()

        resources.append(
            dlt.resource(
                materialize, name=table, write_disposition="append", columns=declared[table], schema_contract="evolve"
            )
        )
    return resources


def run_row_resource(row: dict[str, Any]) -> DltResource:
    """`load_runs` with one given row: records a load whose main run dlt refused (contract)."""

    @dlt.resource(name=RUNS_TABLE, write_disposition="append", columns=RUN_COLUMNS, schema_contract=RAW_SCHEMA_CONTRACT)
    def load_runs() -> Iterator[dict[str, Any]]:
        yield row

    return load_runs


def empty_items_tables() -> list[DltResource]:
    """The two item tables with no rows, only to create them with all their columns.

    Needed when the very first load receives no items (a refused key), or before an older
    warehouse's items are migrated: dlt creates a table only when data arrives, and DuckDB
    cannot bulk-read an empty jsonl file, so these are loaded with dlt's INSERT format instead.
    """
    resources = []
    for table in (VERSIONS_TABLE, MEMBERSHIP_TABLE):

        def materialize() -> Iterator[Any]:
            yield dlt.mark.materialize_table_schema()

        resources.append(
            dlt.resource(materialize, name=table, write_disposition="append", columns=DECLARED_COLUMNS[table])
        )
    return resources
