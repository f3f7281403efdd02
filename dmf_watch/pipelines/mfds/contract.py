"""The dlt schema contract of the raw tables: keeping it, and turning a breach into a verdict.

The raw resources are frozen to their declared columns (settings.RAW_SCHEMA_CONTRACT), defence
in depth behind the key audit of the fetch: whatever a future code path or API shape yields,
`mfds_raw` can never silently grow a column. Two consequences are handled here:

- a warehouse created before a column was declared must still load: the frozen contract would
  refuse the new declared column too, so it is added first, deliberately and schema-only;
- a breach must end as a recorded, rejected load with a reason naming the table and column,
  never as a traceback, and the package dlt extracted must not be loaded by the next run.
"""

from __future__ import annotations

import logging

import dlt
from dlt.common.schema.exceptions import DataValidationError

from dmf_watch.core.errors import error_chain
from dmf_watch.pipelines.mfds import DECLARED_COLUMNS, declared_columns_resources
from dmf_watch.pipelines.mfds.item_schema import shown_name
from dmf_watch.pipelines.mfds.settings import DATASET_NAME

log = logging.getLogger(__name__)

_DECLARED = DECLARED_COLUMNS


def missing_declared_columns(pipeline: dlt.Pipeline) -> dict[str, list[str]]:
    """Declared columns the pipeline's stored schema (synced from the warehouse) lacks, by table."""
    pipeline.sync_destination()
    if not pipeline.default_schema_name:
        return {}  # no schema yet: the first load creates every declared column
    schema = pipeline.default_schema
    missing: dict[str, list[str]] = {}
    for table, columns in _DECLARED.items():
        if table not in schema.tables:
            continue
        stored = schema.get_table_columns(table)
        absent = [name for name in columns if name not in stored]
        if absent:
            missing[table] = absent
    return missing


def migrate_declared_columns(pipeline: dlt.Pipeline) -> dict[str, list[str]]:
    """Add declared-but-absent columns (nullable) to existing raw tables; returns what it added."""
    missing = missing_declared_columns(pipeline)
    if missing:
        pipeline.run(
            declared_columns_resources(list(missing)),
            schema=pipeline.default_schema,
            loader_file_format="insert_values",
        )
        for table, names in missing.items():
            log.info("Added the declared column(s) %s to %s.%s", ", ".join(names), DATASET_NAME, table)
    return missing


def contract_violation(exc: BaseException) -> str | None:
    """The one-sentence reason when `exc` (from `pipeline.run`) is a schema-contract breach."""
    for cause in error_chain(exc):
        if isinstance(cause, DataValidationError):
            table = shown_name(cause.table_name or "?")
            column = cause.column_name
            what = f"the undeclared column {shown_name(column)}" if column else f"a change ({cause.schema_entity})"
            return (
                f"the raw table {DATASET_NAME}.{table} refused {what}: its columns are frozen to "
                "the declared schema (dmf_watch/pipelines/mfds/__init__.py), so nothing of this load was stored"
            )
    return None
