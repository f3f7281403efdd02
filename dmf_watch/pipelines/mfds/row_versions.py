"""Content-addressed row versions: every load reconstructable byte for byte, each record stored once.

Why: the registry changes by a handful of records a day, yet storing each load whole added
~9,200 rows a day to the raw layer. Now a record (the 9 source fields exactly as received,
nulls, empty strings, CR/LF and spaces kept) is stored once in `dmf_item_versions`, under
`row_hash`, a hash of its exact values; each load adds only its membership in `dmf_load_items`
(load id, position, page, repeat count, `row_hash`): the list as served, in order. Joining the
two gives back every load exactly (`mfds_raw.dmf_items`, a view, and dbt's `base_mfds__items`).

The hash is defined so that SQL can compute it too (the migration of an older warehouse and
the dbt test of the versions do): the SHA-256 of the fields in source order, each written as
`N;` for null or `S<utf-8 byte length>:<value>;`, its first 15 hex digits read as a (positive)
BIGINT. 60 bits: with a million versions the chance that two share a hash is below 1e-6, and the
writer checks every reused hash against the stored values anyway (`HashCollision`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dmf_watch.core import warehouse
from dmf_watch.pipelines.mfds.settings import (
    COLUMN_NAMES,
    DATASET_NAME,
    ITEMS_TABLE,
    MEMBERSHIP_TABLE,
    VERSIONS_TABLE,
)

if TYPE_CHECKING:
    from dmf_watch.core.config import Settings

log = logging.getLogger(__name__)

Values = tuple[Any, ...]
# What the writer needs to know of the versions already stored: hash -> the 9 values.
KnownVersions = Callable[[Sequence[int]], Mapping[int, Values]]
HASH_HEX_DIGITS = 15  # 60 bits: fits a signed BIGINT without a sign trick, in Python and SQL


class HashCollision(Exception):
    """Two different records with one row_hash: refuse the load rather than store a wrong one."""


def canonical_text(values: Iterable[Any]) -> str:
    """The exact record as one unambiguous string (length-prefixed, nulls distinct from '')."""
    return "".join(
        "N;" if value is None else f"S{len(str(value).encode('utf-8', 'surrogatepass'))}:{value};" for value in values
    )


def row_hash(values: Iterable[Any]) -> int:
    """The content address of a record's 9 values (see the module docstring for the SQL twin)."""
    digest = hashlib.sha256(canonical_text(values).encode("utf-8", "surrogatepass")).hexdigest()
    return int(digest[:HASH_HEX_DIGITS], 16)


def row_hash_sql(columns: Sequence[str] = COLUMN_NAMES) -> str:
    """The same hash as a DuckDB expression over `columns` (used by the one-time migration)."""
    parts = ", ".join(
        f"case when {c} is null then 'N;' else 'S' || strlen({c}) || ':' || {c} || ';' end" for c in columns
    )
    return f"cast(('0x' || left(sha256(concat({parts})), {HASH_HEX_DIGITS})) as bigint)"


def values_of(row: Mapping[str, Any]) -> Values:
    return tuple(row.get(column) for column in COLUMN_NAMES)


def split_rows(
    rows: Sequence[Mapping[str, Any]], load_id: str, as_of: Any, known: KnownVersions | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A load's distinct rows as (versions not stored yet, the load's membership rows).

    Raises `HashCollision` when a stored version under a hash differs from the record.
    """
    hashed = [(row_hash(values_of(row)), row) for row in rows]
    stored = known([h for h, _ in hashed]) if known is not None and hashed else {}
    versions: dict[int, dict[str, Any]] = {}
    memberships: list[dict[str, Any]] = []
    for digest, row in hashed:
        values = values_of(row)
        if digest in stored:
            if tuple(stored[digest]) != values:
                raise HashCollision(
                    f"two different MFDS records share the row hash {digest} in {DATASET_NAME}.{VERSIONS_TABLE}; "
                    "nothing of this load was stored (report this: the hash must be widened)"
                )
        elif digest in versions:
            if values_of(versions[digest]) != values:
                raise HashCollision(f"two different MFDS records of one load share the row hash {digest}")
        else:
            versions[digest] = {"row_hash": digest, **dict(zip(COLUMN_NAMES, values))}
        # Any other key a row carries goes on with the membership row, so that the frozen
        # contract refuses it by name instead of this function dropping it unseen.
        memberships.append(
            {
                "load_id": load_id,
                "as_of_date": as_of,
                "row_hash": digest,
                **{k: v for k, v in row.items() if k not in COLUMN_NAMES},
            }
        )
    return list(versions.values()), memberships


def _table_type(con: warehouse.Connection, raw: str, table: str) -> str | None:
    row = con.execute(
        "select table_type from information_schema.tables where table_schema = ? and table_name = ?",
        [raw, table],
    ).fetchone()
    return row[0] if row else None


def stored_versions(settings: Settings, hashes: Sequence[int]) -> dict[int, Values]:
    """The stored versions among `hashes` (none when the warehouse or table does not exist yet)."""
    if not warehouse.exists(settings) or not hashes:
        return {}
    raw = warehouse.schemas(settings).raw
    with warehouse.connect(settings, read_only=True) as con:
        if _table_type(con, raw, VERSIONS_TABLE) is None:
            return {}
        found = con.execute(
            f"select row_hash, {', '.join(COLUMN_NAMES)} from {raw}.{VERSIONS_TABLE} "
            "where row_hash in (select unnest(cast(? as bigint[])))",
            [list(hashes)],
        ).fetchall()
    return {row[0]: tuple(row[1:]) for row in found}


def items_view_sql(raw: str = DATASET_NAME) -> str:
    return f"""
create or replace view {raw}.{ITEMS_TABLE} as
select
    m.load_id, m.as_of_date, m.item_position, m.page_no, m.repeat_count,
    {", ".join("v." + c for c in COLUMN_NAMES)},
    m.row_hash, m._dlt_load_id
from {raw}.{MEMBERSHIP_TABLE} as m
join {raw}.{VERSIONS_TABLE} as v on v.row_hash = m.row_hash
"""


def create_items_view(con: warehouse.Connection, raw: str = DATASET_NAME) -> None:
    """`mfds_raw.dmf_items`: every record of every load (usable or not) as it was received."""
    if (
        _table_type(con, raw, VERSIONS_TABLE)
        and _table_type(con, raw, MEMBERSHIP_TABLE)
        and _table_type(con, raw, ITEMS_TABLE) != "BASE TABLE"
    ):
        con.execute(items_view_sql(raw))


def has_items_table(settings: Settings) -> bool:
    """Whether the warehouse still holds the per-load `dmf_items` table of before row versions
    (only a DuckDB file can: row versions came before PostgreSQL)."""
    if settings.warehouse != "duckdb" or not settings.duckdb_path.exists():
        return False
    with warehouse.connect(settings, read_only=True) as con:
        return _table_type(con, DATASET_NAME, ITEMS_TABLE) == "BASE TABLE"


def migrate_items_table(settings: Settings) -> str | None:
    """Move a pre-row-version `dmf_items` table into versions + membership, once; the log line.

    One DuckDB transaction: the versions (hashed in SQL, the first load's dlt ids kept), the
    membership rows (with their original `_dlt_load_id`/`_dlt_id`), then the table replaced by
    the view of the same name. A crash rolls all of it back and the next run does it again;
    once done there is no table left to migrate, so it never runs twice. The two tables must
    already exist (created empty by dlt, `pipelines.mfds.load`).
    """
    raw = DATASET_NAME
    columns = ", ".join(COLUMN_NAMES)
    with warehouse.connect(settings) as con:
        if _table_type(con, raw, ITEMS_TABLE) != "BASE TABLE":
            return None
        con.execute("begin transaction")
        try:
            ((rows, loads),) = con.execute(
                f"select count(*), count(distinct load_id) from {raw}.{ITEMS_TABLE}"
            ).fetchall()
            con.execute(f"create temp table _hashed as select {row_hash_sql()} as row_hash, * from {raw}.{ITEMS_TABLE}")
            ((before,),) = con.execute(f"select count(*) from {raw}.{VERSIONS_TABLE}").fetchall()
            con.execute(
                f"insert into {raw}.{VERSIONS_TABLE} (row_hash, {columns}, _dlt_load_id, _dlt_id) "
                f"select row_hash, {columns}, _dlt_load_id, _dlt_id from ("
                f"  select *, row_number() over (partition by row_hash order by _dlt_load_id, item_position) as n"
                f"  from _hashed) where n = 1 "
                f"and row_hash not in (select row_hash from {raw}.{VERSIONS_TABLE})"
            )
            ((collisions,),) = con.execute(
                f"select count(*) from (select row_hash from (select distinct row_hash, {columns} from _hashed) "
                "group by row_hash having count(*) > 1)"
            ).fetchall()
            if collisions:
                raise HashCollision(f"{collisions} row hash(es) stand for different records in {raw}.{ITEMS_TABLE}")
            ((after,),) = con.execute(f"select count(*) from {raw}.{VERSIONS_TABLE}").fetchall()
            con.execute(
                f"insert into {raw}.{MEMBERSHIP_TABLE} "
                "(load_id, as_of_date, item_position, page_no, repeat_count, row_hash, _dlt_load_id, _dlt_id) "
                "select load_id, as_of_date, item_position, page_no, repeat_count, row_hash, _dlt_load_id, _dlt_id "
                "from _hashed"
            )
            con.execute(f"drop table {raw}.{ITEMS_TABLE}")
            con.execute("drop table _hashed")
            con.execute(items_view_sql(raw))
            con.execute("commit")
        except BaseException:
            con.execute("rollback")
            raise
    line = (
        f"Migrated {raw}.{ITEMS_TABLE} ({rows:,} rows of {loads} loads) into {after - before:,} row versions "
        f"({raw}.{VERSIONS_TABLE}) and {rows:,} membership rows ({raw}.{MEMBERSHIP_TABLE}); "
        f"{raw}.{ITEMS_TABLE} is now a view that reconstructs every load"
    )
    log.info("%s", line)
    return line


def raw_summary(settings: Settings) -> str | None:
    """One line on what the raw layer holds: every record of every day, and how few are stored."""
    if not warehouse.exists(settings):
        return None
    raw = warehouse.schemas(settings).raw
    with warehouse.connect(settings, read_only=True) as con:
        if _table_type(con, raw, ITEMS_TABLE) != "VIEW":
            return None
        ((days, records),) = con.execute(
            f"select count(distinct as_of_date), count(*) from {raw}.{MEMBERSHIP_TABLE}"
        ).fetchall()
        ((versions,),) = con.execute(f"select count(*) from {raw}.{VERSIONS_TABLE}").fetchall()
    return (
        f"{raw}.{ITEMS_TABLE} (a view) shows every raw record of every day as received: "
        f"{records:,} records of {days} days, stored as {versions:,} distinct row versions"
    )
