"""Two questions every stage asks the warehouse: is this table there yet, and what rows does it hold.

Why here: the loader (dmf_watch/pipelines/mfds), the AI layer (enrich), notify and the command (dmf) each
ask "is this table there yet?" before reading a table an earlier step may not have created yet
(a first run, a build that never got that far), and enrich and notify read their rows as dicts.
The layout lets the stages import only this leaf package, so the helpers live in it; it imports
nothing of the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

# The schema of the raw layer: the dlt dataset the loader writes (pipelines.mfds.settings) and
# every later stage reads; here so that a stage can name it without importing the loader and dlt.
RAW_DATASET = "mfds_raw"
# The raw tables a stored load leaves (the loader's); without them there is nothing to build, and
# dbt's first on-run-start hook (macros/loads_stored.sql) stops any dbt command at once.
LOADER_TABLES = ("dmf_item_versions", "dmf_load_items", "load_runs")
NO_LOAD_ADVICE = "load first with `dmf run` (or `dmf load`), or try `dmf demo`"


def table_exists(con: duckdb.DuckDBPyConnection, schema: str, *names: str) -> bool:
    """True when every named table (or view) exists in `schema`."""
    wanted = set(names)
    if not wanted:
        return True
    row = con.execute(
        "select count(distinct table_name) from information_schema.tables "
        "where table_schema = ? and list_contains(?, table_name)",
        [schema, sorted(wanted)],
    ).fetchone()
    return bool(row) and row[0] == len(wanted)


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of a query as dicts keyed by column name (what the prompts and messages read)."""
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def holds_a_load(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the raw layer holds what a load stores (a fresh warehouse, or one a `dbt build` was
    run on before any load, holds none: it needs a load, not a build)."""
    return table_exists(con, RAW_DATASET, *LOADER_TABLES)
