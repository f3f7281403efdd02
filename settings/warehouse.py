"""The one answer to "is this table in the warehouse yet?", for every stage and the command.

Why here: the loader (pipelines/mfds), the AI layer (enrich) and the command (dmf) each ask it
before reading a table an earlier step may not have created yet (a first run, a build that
never got that far). The layout lets the stages import only this leaf package, so the helper
lives in it; it imports nothing of the project.
"""

from __future__ import annotations

import duckdb


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
