"""The `enrichment` schema in the warehouse: created here, written only by `dmf_watch/enrich/`.
Its name is the connection's (`con.schemas.enrichment`: `alice_enrichment` with a prefix).

The report reads these tables with LEFT JOINs, so a day with no rows simply shows a badge.
Writes use parameter binding only; model text never becomes SQL. The contract columns come
first in each table; the columns after them are additions this layer needs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from dmf_watch.core.warehouse import Connection, rows


def ddl(schema: str) -> list[str]:
    """The statements that create the schema, its tables and its view, idempotently."""
    return [
        f"create schema if not exists {schema}",
        f"""create table if not exists {schema}.enrichment_run (
        run_id text primary key,
        as_of_date date not null,
        kind text not null,              -- daily | weekly | anomaly | drift
        status text not null,            -- OK | SKIPPED | FAILED
        skip_reason text,
        headline text,
        summary_md text,
        risk_note text,
        commentary text,
        model text,
        prompt_sha256 text,
        created_at timestamptz not null,
        effort text,
        badge text,                      -- Korean badge for skip_reason (enrich.badges)
        detail text,                     -- one plain sentence on what happened
        agy_call_count integer,          -- agy processes launched by this run
        total_tokens bigint,
        cache_hit boolean,
        dropped_json text,               -- {{"event_unknown_key": 1, ...}}
        overall_assessment text          -- anomaly runs: ACTION_REQUIRED | MONITOR | NO_ACTION
    )""",
        f"""create table if not exists {schema}.enrichment (
        run_id text not null,
        as_of_date date not null,
        kind text not null,              -- event_comment | anomaly_hypothesis | ingredient_alias | weekly_commentary | api_field_path
        item_key text,                   -- dmf_key | signal_id | watch_term | label
        importance text,
        content text,                    -- already quarantined
        detail_json text,
        applied integer not null default 0,
        created_at timestamptz not null
    )""",
        f"""create table if not exists {schema}.agy_calls (
        call_id text primary key,
        run_id text,
        as_of_date date,
        started_at timestamptz,
        duration_s double precision,
        exit_code integer,
        status text,                     -- agy envelope status, or LAUNCH_FAILED / TIMEOUT / INVALID
        error_kind text,
        transport text,                  -- argv | stdin
        turns integer,
        input_tokens bigint,
        output_tokens bigint,
        cached_tokens bigint,
        thinking_tokens bigint,
        total_tokens bigint,
        prompt_chars integer,
        prompt_sha256 text,
        model text,
        effort text,
        schema_valid integer,
        error text,
        purpose text,
        attempt integer,                 -- 0 first try, 1 stricter retry
        stdout_path text
    )""",
        f"""create table if not exists {schema}.proposals (
        proposal_id text primary key,
        as_of_date date,
        kind text,                       -- ingredient_alias
        watch_term text,
        candidate_ingredient_name text,
        base_form text,
        salt_form text,
        confidence double precision,
        reason text,
        status text not null,            -- PENDING | ACCEPTED | REJECTED
        created_at timestamptz not null,
        decided_at timestamptz,
        decided_by text,
        decision_note text,
        run_id text,
        isomer_note text,
        model text,
        prompt_sha256 text,
        source_file text
    )""",
        f"""create table if not exists {schema}.proposal_decisions (
        decision_id text primary key,
        proposal_id text not null,
        decision text not null,          -- ACCEPTED | REJECTED
        previous_status text,
        decided_by text,
        decided_at timestamptz not null,
        note text
    )""",
        f"""create or replace view {schema}.pending_proposals as
        select p.*,
               current_date - cast(p.created_at as date) as age_days,
               current_date - cast(p.created_at as date) > 7 as is_overdue
        from {schema}.proposals p
        where p.status = 'PENDING'""",
    ]


RUN_COLUMNS = (
    "run_id",
    "as_of_date",
    "kind",
    "status",
    "skip_reason",
    "headline",
    "summary_md",
    "risk_note",
    "commentary",
    "model",
    "prompt_sha256",
    "created_at",
    "effort",
    "badge",
    "detail",
    "agy_call_count",
    "total_tokens",
    "cache_hit",
    "dropped_json",
    "overall_assessment",
)
ITEM_COLUMNS = (
    "run_id",
    "as_of_date",
    "kind",
    "item_key",
    "importance",
    "content",
    "detail_json",
    "applied",
    "created_at",
)
CALL_COLUMNS = (
    "call_id",
    "run_id",
    "as_of_date",
    "started_at",
    "duration_s",
    "exit_code",
    "status",
    "error_kind",
    "transport",
    "turns",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "thinking_tokens",
    "total_tokens",
    "prompt_chars",
    "prompt_sha256",
    "model",
    "effort",
    "schema_valid",
    "error",
    "purpose",
    "attempt",
    "stdout_path",
)
PROPOSAL_COLUMNS = (
    "proposal_id",
    "as_of_date",
    "kind",
    "watch_term",
    "candidate_ingredient_name",
    "base_form",
    "salt_form",
    "confidence",
    "reason",
    "status",
    "created_at",
    "decided_at",
    "decided_by",
    "decision_note",
    "run_id",
    "isomer_note",
    "model",
    "prompt_sha256",
    "source_file",
)


def utc_now() -> datetime:
    return datetime.now(UTC)


def ensure_schema(con: Connection) -> None:
    for statement in ddl(con.schemas.enrichment):
        con.execute(statement)


def _insert(con: Connection, table: str, columns: Sequence[str], records: Iterable[Mapping[str, Any]]) -> int:
    sql = f"insert into {con.schemas.enrichment}.{table} ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})"
    batch = [[record.get(c) for c in columns] for record in records]
    if batch:
        con.executemany(sql, batch)
    return len(batch)


def insert_run(con, run: Mapping[str, Any]) -> None:
    _insert(con, "enrichment_run", RUN_COLUMNS, [run])


def insert_items(con, items: Iterable[Mapping[str, Any]]) -> int:
    return _insert(con, "enrichment", ITEM_COLUMNS, items)


def insert_calls(con, calls: Iterable[Mapping[str, Any]]) -> int:
    return _insert(con, "agy_calls", CALL_COLUMNS, calls)


def insert_proposals(con, proposals: Iterable[Mapping[str, Any]]) -> int:
    return _insert(con, "proposals", PROPOSAL_COLUMNS, proposals)


def latest_run(con, as_of: date, kind: str) -> dict[str, Any] | None:
    found = rows(
        con,
        f"""select * from {con.schemas.enrichment}.enrichment_run
                         where as_of_date = ? and kind = ?
                         order by created_at desc, run_id desc limit 1""",
        [as_of, kind],
    )
    return found[0] if found else None


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)
