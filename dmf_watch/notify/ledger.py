"""The `notify` schema: created and written only by `dmf_watch/notify/`, read by the report.

- `notify.alerts`: one row per alert raised (kind, level, the day it is about, its text). Its
  key `alert_id` = kind + day + condition, so evaluating a day again cannot raise it twice.
- `notify.alert_state`: one row per watched condition (the pipeline, the AI layer, the AI's
  invalid-answer streak) with the state last announced. Alerts fire on a change of state only:
  "learned ignoring" of a daily repeated alert kills the real ones.
- `notify.deliveries`: one row per try-out of one message to one destination: the destination
  NAME (never its URL), the outcome, the number of attempts and a scrubbed error.

The schema's name is the connection's (`con.schemas.notify`: `alice_notify` with a prefix).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from dmf_watch.core.warehouse import Connection, rows


def ddl(schema: str) -> list[str]:
    """The statements that create the schema and its tables, idempotently."""
    return [
        f"create schema if not exists {schema}",
        f"""create table if not exists {schema}.alerts (
        alert_id text primary key,
        as_of_date date not null,
        raised_at timestamptz not null,
        level text not null,             -- INFO | WARN | CRITICAL
        kind text not null,              -- load_rejected | run_failed | recovered | ai_* ...
        condition_name text not null,    -- pipeline | ai | ai_invalid_streak
        title text not null,
        body text not null
    )""",
        f"""create table if not exists {schema}.alert_state (
        condition_name text primary key,
        state text not null,             -- ok | broken | the AI outcome last seen
        since_date date not null,
        last_evaluated_date date not null,
        updated_at timestamptz not null
    )""",
        f"""create table if not exists {schema}.deliveries (
        delivery_id text primary key,
        as_of_date date not null,
        delivered_at timestamptz not null,
        message_kind text not null,      -- daily | weekly | alert | test
        message_key text not null,       -- daily:YYYY-MM-DD | weekly:YYYY-MM-DD | alert_id | test:...
        level text not null,
        alert_kind text,
        destination text not null,       -- the destination's name, never its URL
        service text,                    -- the URL's scheme (mailto, json, slack, ...)
        outcome text not null,           -- sent | failed | written (demo outbox)
        attempts integer not null,
        error text,                      -- scrubbed of every credential
        resend boolean not null default false
    )""",
    ]


ALERT_COLUMNS = ("alert_id", "as_of_date", "raised_at", "level", "kind", "condition_name", "title", "body")
DELIVERY_COLUMNS = (
    "delivery_id",
    "as_of_date",
    "delivered_at",
    "message_kind",
    "message_key",
    "level",
    "alert_kind",
    "destination",
    "service",
    "outcome",
    "attempts",
    "error",
    "resend",
)


def utc_now() -> datetime:
    return datetime.now(UTC)


def ensure_schema(con: Connection) -> None:
    for statement in ddl(con.schemas.notify):
        con.execute(statement)


def insert(con: Connection, table: str, columns: Sequence[str], record: Mapping[str, Any]) -> None:
    con.execute(
        f"insert into {con.schemas.notify}.{table} ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})",
        [record.get(c) for c in columns],
    )


def insert_alert(con, alert: Mapping[str, Any]) -> bool:
    """Insert unless an alert with that id exists; True when it is new."""
    found = con.execute(
        f"select count(*) from {con.schemas.notify}.alerts where alert_id = ?", [alert["alert_id"]]
    ).fetchone()
    if found and found[0]:
        return False
    insert(con, "alerts", ALERT_COLUMNS, alert)
    return True


def insert_delivery(con, delivery: Mapping[str, Any]) -> None:
    insert(con, "deliveries", DELIVERY_COLUMNS, delivery)


def condition_state(con, name: str) -> dict[str, Any] | None:
    found = rows(con, f"select * from {con.schemas.notify}.alert_state where condition_name = ?", [name])
    return found[0] if found else None


def set_condition_state(con, name: str, state: str, as_of: date, *, changed: bool) -> None:
    current = condition_state(con, name)
    now = utc_now()
    if current is None:
        con.execute(
            f"insert into {con.schemas.notify}.alert_state values (?, ?, ?, ?, ?)", [name, state, as_of, as_of, now]
        )
    else:
        con.execute(
            f"""update {con.schemas.notify}.alert_state
                        set state = ?, since_date = case when ? then ? else since_date end,
                            last_evaluated_date = greatest(last_evaluated_date, ?), updated_at = ?
                        where condition_name = ?""",
            [state, changed, as_of, as_of, now, name],
        )


def alerts_for_day(con, as_of: date) -> list[dict[str, Any]]:
    return rows(
        con, f"select * from {con.schemas.notify}.alerts where as_of_date = ? order by raised_at, alert_id", [as_of]
    )


def sent_keys(con, as_of: date) -> set[tuple[str, str]]:
    """(message_key, destination) pairs already delivered (or written) for the day."""
    return {
        (r["message_key"], r["destination"])
        for r in rows(
            con,
            f"""
        select message_key, destination from {con.schemas.notify}.deliveries
        where as_of_date = ? and outcome in ('sent', 'written')""",
            [as_of],
        )
    }
