"""Every SELECT the reports run, and nothing else.

The reports do no arithmetic: counts come from `marts.dmf_daily_summary` and the weekly
`rpt_*` models, and the few sums over the AI audit tables (which dbt does not own) are SQL too.
Each query orders by its full key so the same warehouse gives the same rows in the same order,
which is what makes a re-rendered report byte-identical.

The `enrichment` schema is written only by the AI step and may not exist at all (AI never ran):
every read of it is guarded by `has_table` and joined with LEFT JOIN, so the report renders fully
without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from dmf_watch.core.warehouse import Connection, table_exists

TREND_DAYS = 30

Row = dict[str, Any]


def fetch(con: Connection, sql: str, params: list[Any] | None = None) -> list[Row]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, values)) for values in cur.fetchall()]


def fetch_one(con: Connection, sql: str, params: list[Any] | None = None) -> Row | None:
    rows = fetch(con, sql, params)
    return rows[0] if rows else None


@dataclass(frozen=True)
class Tables:
    """Which optional relations exist in this warehouse."""

    enrichment_run: bool
    enrichment: bool
    agy_calls: bool
    proposals: bool
    watchlist_unmatched: bool
    registrations: bool

    @classmethod
    def probe(cls, con: Connection) -> Tables:
        present = {
            (schema, name)
            for schema, name in con.execute("select table_schema, table_name from information_schema.tables").fetchall()
        }
        marts, enrichment = con.schemas.marts, con.schemas.enrichment
        return cls(
            enrichment_run=(enrichment, "enrichment_run") in present,
            enrichment=(enrichment, "enrichment") in present,
            agy_calls=(enrichment, "agy_calls") in present,
            proposals=(enrichment, "proposals") in present,
            watchlist_unmatched=(marts, "dmf_watchlist_unmatched") in present,
            registrations=(marts, "dmf_registrations") in present,
        )


def _ai_items_cte(con: Connection, tables: Tables, kind: str) -> str:
    """Latest AI text per (day, item) of one kind, or an empty relation when AI never ran.
    `kind` is one of this module's constants, never user input."""
    if tables.enrichment:
        return f"""ai_items as (
            select as_of_date, item_key, content
            from (
                select
                    as_of_date, item_key, content,
                    row_number() over (
                        partition by as_of_date, item_key order by created_at desc, run_id desc
                    ) as recency
                from {con.schemas.enrichment}.enrichment
                where kind = '{kind}'
            ) as ranked
            where recency = 1
        )"""
    return """ai_items as (
        select cast(null as date) as as_of_date, cast(null as varchar) as item_key,
               cast(null as varchar) as content
        where false
    )"""


# --- the day ----------------------------------------------------------------------------------


def day_summary(con, as_of: date) -> Row | None:
    """The day's row of dmf_daily_summary (counts of the latest load for that date)."""
    return fetch_one(
        con,
        f"""
        select * from {con.schemas.marts}.dmf_daily_summary where as_of_date = ?
    """,
        [as_of],
    )


def day_load(con, as_of: date) -> Row | None:
    """The load the day's report is about: the one dmf_day_decisions says decides the day."""
    return fetch_one(
        con,
        f"""
        select loads.*
        from {con.schemas.marts}.dmf_day_decisions as day_decisions
        inner join {con.schemas.marts}.dmf_loads as loads
            on day_decisions.load_id = loads.load_id
        where day_decisions.as_of_date = ?
    """,
        [as_of],
    )


def trend(con, as_of: date) -> list[Row]:
    """One row per calendar day of the 30 days ending on as_of (blank where no load)."""
    return fetch(
        con,
        f"""
        with days as (
            select cast(? as date) - cast(offsets.n as integer) as day
            from generate_series(0, {TREND_DAYS - 1}) as offsets(n)
        )
        select
            days.day,
            summary.verdict,
            summary.is_baseline,
            summary.new_count,
            summary.changed_count,
            summary.withdrawn_count,
            summary.critical_count,
            summary.watchlist_hit_count,
            summary.event_count,
            summary.fired_signal_count
        from days
        left join {con.schemas.marts}.dmf_daily_summary as summary on summary.as_of_date = days.day
        order by days.day
    """,
        [as_of],
    )


def gate_signals(con, load_id: str) -> list[Row]:
    return fetch(
        con,
        f"""
        select signal_id, severity, observed, baseline, baseline_text, window_text, context,
               description, description_ko, what_to_check_ko
        from {con.schemas.marts}.dmf_signals
        where load_id = ? and fired and is_gate
        order by signal_id
    """,
        [load_id],
    )


def signals(con, tables: Tables, as_of: date, load_id: str) -> list[Row]:
    return fetch(
        con,
        f"""
        with {_ai_items_cte(con, tables, "anomaly_hypothesis")}
        select
            signals.signal_id,
            signals.is_gate,
            signals.fired,
            signals.severity,
            signals.observed,
            signals.baseline,
            signals.baseline_text,
            signals.window_text,
            signals.context,
            signals.description,
            signals.description_ko,
            signals.what_to_check_ko,
            ai_items.content as ai_comment
        from {con.schemas.marts}.dmf_signals as signals
        left join ai_items
            on ai_items.as_of_date = signals.as_of_date and ai_items.item_key = signals.signal_id
        where signals.load_id = ? and signals.as_of_date = ?
        order by signals.fired desc, signals.is_gate desc, signals.signal_id
    """,
        [load_id, as_of],
    )


_EVENT_COLUMNS = """
    events.event_id, events.dmf_key, events.permit_no, events.event_type, events.severity,
    events.severity_rank, events.on_watchlist, events.watch_terms, events.ingredient_name,
    events.applicant, events.applicant_bizrno, events.manufacturer, events.manufacture_place,
    events.countries, events.permit_date, events.notice_code, events.changed_fields,
    events.change_kind, events.absent_days, events.watch_matches, events.watch_owners,
    events.rationale_ko, ai_items.content as ai_comment
"""


def events(con, tables: Tables, as_of: date, event_type: str) -> list[Row]:
    return fetch(
        con,
        f"""
        with {_ai_items_cte(con, tables, "event_comment")}
        select {_EVENT_COLUMNS}
        from {con.schemas.marts}.dmf_events as events
        left join ai_items
            on ai_items.as_of_date = events.as_of_date and ai_items.item_key = events.dmf_key
        where events.as_of_date = ? and events.event_type = ?
        order by events.severity_rank, events.rule_priority, events.ingredient_name nulls last,
                 events.dmf_key
    """,
        [as_of, event_type],
    )


def watchlist_events(con, tables: Tables, as_of: date) -> list[Row]:
    return fetch(
        con,
        f"""
        with {_ai_items_cte(con, tables, "event_comment")}
        select {_EVENT_COLUMNS}
        from {con.schemas.marts}.dmf_events as events
        left join ai_items
            on ai_items.as_of_date = events.as_of_date and ai_items.item_key = events.dmf_key
        where events.as_of_date = ? and events.on_watchlist
        order by events.severity_rank, events.rule_priority, events.event_type,
                 events.ingredient_name nulls last, events.dmf_key
    """,
        [as_of],
    )


def field_changes(con, tables: Tables, as_of: date) -> list[Row]:
    """One row per changed field of the day's CHANGED events, with the event's context."""
    return fetch(
        con,
        f"""
        with {_ai_items_cte(con, tables, "event_comment")}
        select
            changes.dmf_key,
            changes.permit_no,
            changes.field_name,
            changes.before_value,
            changes.after_value,
            changes.change_kind,
            changes.change_detail,
            changes.removed_entries,
            changes.added_entries,
            changes.severity,
            changes.severity_rank,
            changes.on_watchlist,
            events.severity as event_severity,
            events.ingredient_name,
            events.applicant,
            events.manufacturer,
            events.watch_terms,
            ai_items.content as ai_comment
        from {con.schemas.marts}.dmf_event_field_changes as changes
        left join {con.schemas.marts}.dmf_events as events
            on events.as_of_date = changes.as_of_date and events.dmf_key = changes.dmf_key
        left join ai_items
            on ai_items.as_of_date = changes.as_of_date and ai_items.item_key = changes.dmf_key
        where changes.as_of_date = ?
        order by changes.severity_rank, events.ingredient_name nulls last, changes.dmf_key,
                 changes.field_name
    """,
        [as_of],
    )


def watchlist_unmatched(con, tables: Tables, as_of: date) -> list[Row] | None:
    """The watch terms of every kind that match no registration on `as_of`, with why; None when
    the warehouse cannot tell: the mart is missing, or was built for another day (it holds the
    latest accepted load only), so a report never reads "every term matched" from no answer."""
    if not tables.watchlist_unmatched:
        return None
    rows = fetch(
        con,
        f"""
        select watch_term, term_kind, unmatched_reason, candidates
        from {con.schemas.marts}.dmf_watchlist_unmatched
        where as_of_date = ?
        order by term_kind, watch_term
    """,
        [as_of],
    )
    if rows or not tables.registrations:
        return rows or None
    built_for = fetch_one(con, f"select max(as_of_date) as as_of_date from {con.schemas.marts}.dmf_registrations")
    return [] if built_for and built_for["as_of_date"] == as_of else None


def loads(con, first_day: date, last_day: date) -> list[Row]:
    return fetch(
        con,
        f"""
        select *
        from {con.schemas.marts}.dmf_loads
        where as_of_date between ? and ?
        order by as_of_date desc, attempt_order desc
    """,
        [first_day, last_day],
    )


# --- AI tables (optional) ---------------------------------------------------------------------


def ai_run(con, tables: Tables, as_of: date, kind: str) -> Row | None:
    """The latest enrichment run of a kind for a day, or None (no run, or AI never ran)."""
    if not tables.enrichment_run:
        return None
    return fetch_one(
        con,
        f"""
        select run_id, status, skip_reason, headline, summary_md, risk_note, commentary, model,
               created_at
        from {con.schemas.enrichment}.enrichment_run
        where as_of_date = ? and kind = ?
        order by created_at desc, run_id desc
        limit 1
    """,
        [as_of, kind],
    )


# The reports show the agy calls of the runs whose answers they show (status OK), never those of
# a failed or refused step: a re-run retries a failed step, and when the retry fails the same way
# the report must not change (docs/ai-layer.md, "Re-runs"). Every attempt stays in
# enrichment.agy_calls and in the run's log under state/agy_runs/.
def _answered_runs(con: Connection) -> str:
    return f"run_id in (select run_id from {con.schemas.enrichment}.enrichment_run where status = 'OK')"


def ai_calls(con, tables: Tables, first_day: date, last_day: date) -> list[Row]:
    if not (tables.agy_calls and tables.enrichment_run):
        return []
    return fetch(
        con,
        f"""
        select as_of_date, call_id, run_id, started_at, duration_s, status, error_kind, model,
               effort, transport, turns, input_tokens, output_tokens, cached_tokens,
               thinking_tokens, total_tokens, schema_valid
        from {con.schemas.enrichment}.agy_calls
        where as_of_date between ? and ? and {_answered_runs(con)}
        order by as_of_date, started_at, call_id
    """,
        [first_day, last_day],
    )


def ai_call_totals(con, tables: Tables, first_day: date, last_day: date) -> Row:
    if not (tables.agy_calls and tables.enrichment_run):
        return {
            "calls": 0,
            "failed_calls": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cached_tokens": 0,
            "thinking_tokens": 0,
            "total_tokens": 0,
            "duration_s": 0,
        }
    return fetch_one(
        con,
        f"""
        select
            count(*) as calls,
            count(case when coalesce(exit_code, 0) <> 0 or error_kind is not null then 1 end)
                as failed_calls,
            coalesce(sum(input_tokens), 0) as input_tokens,
            coalesce(sum(output_tokens), 0) as output_tokens,
            coalesce(sum(cached_tokens), 0) as cached_tokens,
            coalesce(sum(thinking_tokens), 0) as thinking_tokens,
            coalesce(sum(total_tokens), 0) as total_tokens,
            coalesce(sum(duration_s), 0) as duration_s
        from {con.schemas.enrichment}.agy_calls
        where as_of_date between ? and ? and {_answered_runs(con)}
    """,
        [first_day, last_day],
    )


# --- delivery (the notify schema, written only by dmf_watch/notify/; may not exist) -----------------------


def _notify_ready(con) -> bool:
    return table_exists(con, con.schemas.notify, "alerts", "deliveries")


def notify_alerts(con, first_day: date, last_day: date) -> list[Row]:
    if not _notify_ready(con):
        return []
    return fetch(
        con,
        f"""
        select as_of_date, raised_at, level, kind, title
        from {con.schemas.notify}.alerts
        where as_of_date between ? and ?
        order by as_of_date desc, raised_at desc, alert_id
    """,
        [first_day, last_day],
    )


def notify_deliveries(con, first_day: date, last_day: date) -> list[Row]:
    """Every delivery try of the period: destination NAME, outcome, scrubbed error (never a URL)."""
    if not _notify_ready(con):
        return []
    return fetch(
        con,
        f"""
        select as_of_date, delivered_at, level, message_kind, coalesce(alert_kind, message_key) as what,
               destination, service, outcome, attempts, error
        from {con.schemas.notify}.deliveries
        where as_of_date between ? and ?
        order by as_of_date desc, delivered_at desc, delivery_id
    """,
        [first_day, last_day],
    )


def _pending_as_of(con: Connection) -> str:
    return f"""
    from {con.schemas.enrichment}.proposals
    where as_of_date <= ?
      and (status = 'PENDING' or (decided_at is not null and cast(decided_at as date) > ?))
"""


def pending_proposals(con, tables: Tables, as_of: date) -> list[Row]:
    """Proposals that were waiting for a human on as_of (so an old report re-renders the same)."""
    if not tables.proposals:
        return []
    return fetch(
        con,
        f"""
        select
            proposal_id, as_of_date, kind, watch_term, candidate_ingredient_name, base_form,
            salt_form, confidence, reason,
            cast(? as date) - as_of_date as age_days,
            cast(? as date) - as_of_date > 7 as overdue
        {_pending_as_of(con)}
        order by as_of_date, proposal_id
    """,
        [as_of, as_of, as_of, as_of],
    )


def pending_proposal_counts(con, tables: Tables, as_of: date) -> Row:
    if not tables.proposals:
        return {"pending": 0, "overdue": 0}
    return fetch_one(
        con,
        f"""
        select count(*) as pending,
               count(case when cast(? as date) - as_of_date > 7 then 1 end) as overdue
        {_pending_as_of(con)}
    """,
        [as_of, as_of, as_of],
    )


# --- the week (rpt_ models) -------------------------------------------------------------------


def weekly_totals(con, report_date: date) -> list[Row]:
    return fetch(
        con,
        f"""
        select * from {con.schemas.marts}.rpt_weekly_totals where report_date = ? order by metric_order
    """,
        [report_date],
    )


def weekly_ranked(con, model: str, rank_column: str, report_date: date, top: int) -> list[Row]:
    """Top rows of one ranked weekly model; `model`/`rank_column` are this package's constants."""
    return fetch(
        con,
        f"""
        select * from {con.schemas.marts}.{model}
        where report_date = ? and {rank_column} <= ?
        order by {rank_column}
    """,
        [report_date, top],
    )


def weekly_single_source(con, report_date: date) -> list[Row]:
    return fetch(
        con,
        f"""
        select * from {con.schemas.marts}.rpt_weekly_single_source_changes
        where report_date = ?
        order by top_severity_rank, withdrawn_count desc, ingredient_name
    """,
        [report_date],
    )


def weekly_events(
    con, tables: Tables, report_date: date, *, event_type: str | None = None, watchlist_only: bool = False
) -> list[Row]:
    """Events of the 7 days before report_date (withdrawals, watchlist activity)."""
    conditions = ["events.as_of_date between cast(? as date) - 7 and cast(? as date) - 1"]
    params: list[Any] = [report_date, report_date]
    if event_type:
        conditions.append("events.event_type = ?")
        params.append(event_type)
    if watchlist_only:
        conditions.append("events.on_watchlist")
    return fetch(
        con,
        f"""
        with {_ai_items_cte(con, tables, "event_comment")}
        select events.as_of_date, {_EVENT_COLUMNS}
        from {con.schemas.marts}.dmf_events as events
        left join ai_items
            on ai_items.as_of_date = events.as_of_date and ai_items.item_key = events.dmf_key
        where {" and ".join(conditions)}
        order by events.as_of_date, events.severity_rank, events.event_type,
                 events.ingredient_name nulls last, events.dmf_key
    """,
        params,
    )


def week_loads(con, report_date: date) -> list[Row]:
    return fetch(
        con,
        f"""
        select *
        from {con.schemas.marts}.dmf_loads
        where as_of_date between cast(? as date) - 7 and cast(? as date) - 1
        order by as_of_date, attempt_order
    """,
        [report_date, report_date],
    )


def week_bounds(con, report_date: date) -> Row:
    """The covered period, computed by SQL like every other date the report prints."""
    return fetch_one(
        con,
        """
        select cast(? as date) - 7 as period_start, cast(? as date) - 1 as period_end,
               cast(? as date) - 29 as trend_start
    """,
        [report_date, report_date, report_date],
    )
