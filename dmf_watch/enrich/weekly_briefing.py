"""Weekly commentary: optional, off by default (`weekly_enabled = false`).

It comments on the week the weekly workbook it appears in covers (the seven days before the
report date), from the same `rpt_weekly_*` models the workbook reads, so that the text and the
tables beside it count the same days the same way. Every figure comes from SQL over the marts;
the model only writes the sentences around them. Never raises.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import Connection, rows
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.ai_config import AiConfig
from dmf_watch.enrich.parse import WeeklyAnswer, parse_weekly
from dmf_watch.enrich.render import json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    Ask,
    EnrichOutcome,
    Kept,
    ask_agy,
    finish_without_call,
    item_row,
    never_raises,
    read_marts,
)
from dmf_watch.enrich.sanitize import for_prompt

KIND = "weekly"
PROMPT = "uc5_weekly_commentary.md"
SCHEMA = "uc5_weekly.schema.json"
TOP = 5


def _ranked(con: Connection, model: str, rank: str, name: str, count: str, report_date: date) -> list[list[Any]]:
    """The week's top rows of one ranked weekly model, as the workbook lists them."""
    return [
        [for_prompt(row[0], 60), int(row[1])]
        for row in con.execute(
            f"select {name}, {count} from {con.schemas.marts}.{model} where report_date = ? and {rank} <= ? "
            f"order by {rank}",
            [report_date, TOP],
        ).fetchall()
    ]


def week_of(con: Connection, report_date: date) -> tuple[date, date]:
    """The days the weekly workbook of `report_date` covers, as its totals model says them."""
    bounds = con.execute(
        f"select min(period_start), min(period_end) from {con.schemas.marts}.rpt_weekly_totals where report_date = ?",
        [report_date],
    ).fetchone()
    if bounds and bounds[0] is not None:
        return bounds[0], bounds[1]
    return report_date - timedelta(days=7), report_date - timedelta(days=1)  # before the first load


def weekly_payload(con: Connection, report_date: date) -> dict[str, Any]:
    marts = con.schemas.marts
    start, end = week_of(con, report_date)
    week = [start, end]
    metrics = {
        row["metric"]: row
        for row in rows(
            con,
            f"select metric, this_week, previous_week, median_30d_daily from {marts}.rpt_weekly_totals "
            "where report_date = ?",
            [report_date],
        )
    }

    def metric(name: str, column: str) -> Any:
        value = metrics.get(name, {}).get(column)
        return value if value is None else (int(value) if column != "median_30d_daily" else float(value))

    withdrawn = rows(
        con,
        f"""select dmf_key, ingredient_name, applicant, on_watchlist
            from {marts}.dmf_events where as_of_date between ? and ? and event_type = 'WITHDRAWN'
            order by on_watchlist desc, severity_rank, dmf_key limit 20""",
        week,
    )
    hits = con.execute(
        f"select count(*) from {marts}.dmf_events where as_of_date between ? and ? and on_watchlist", week
    ).fetchone()[0]
    terms = [
        for_prompt(r[0], 60)
        for r in con.execute(
            f"""select distinct ingredient_name from {marts}.dmf_events
           where as_of_date between ? and ? and on_watchlist and ingredient_name is not null
           order by 1 limit 10""",
            week,
        ).fetchall()
    ]
    ops = con.execute(
        f"""select count(*), count(*) filter (where verdict <> 'accepted'), avg(duration_s)
            from {marts}.dmf_loads where as_of_date between ? and ?""",
        week,
    ).fetchone()
    ai = con.execute(
        f"""select count(*), count(*) filter (where status <> 'SUCCESS' or schema_valid = 0)
            from {con.schemas.enrichment}.agy_calls where as_of_date between ? and ?
            and coalesce(purpose, '') <> 'weekly_commentary'""",
        week,
    ).fetchone()
    kinds = ("new", "changed", "withdrawn")
    return {
        "period": {
            "from": start.isoformat(),
            "to": end.isoformat(),
            "days_with_accepted_load": metric("accepted_load_days", "this_week") or 0,
        },
        "totals": {
            **{kind: metric(f"{kind}_count", "this_week") or 0 for kind in kinds},
            # null: the week before had no accepted day to compare with (the workbook says so too)
            "prev_week": {kind: metric(f"{kind}_count", "previous_week") for kind in kinds},
            "trailing_30d_daily_median": {kind: metric(f"{kind}_count", "median_30d_daily") for kind in kinds},
        },
        "top_applicants_new": _ranked(
            con, "rpt_weekly_new_applicants", "applicant_rank", "applicant", "new_count", report_date
        ),
        "top_countries_new": _ranked(
            con, "rpt_weekly_new_countries", "country_rank", "country", "new_count", report_date
        ),
        "top_ingredient_groups": _ranked(
            con, "rpt_weekly_registration_groups", "group_rank", "registration_group", "event_count", report_date
        ),
        "withdrawn_detail": [
            {
                "dmf_key": for_prompt(w["dmf_key"], 40),
                "ingredient_name": for_prompt(w["ingredient_name"], 80),
                "applicant": for_prompt(w["applicant"], 60),
                "on_watchlist": bool(w["on_watchlist"]),
            }
            for w in withdrawn
        ],
        "watchlist_activity": {"hits": int(hits), "terms_hit": terms},
        "ops": {
            "loads": int(ops[0]),
            "rejected_loads": int(ops[1]),
            # rounded here: PostgreSQL rounds only numeric to a number of places
            "avg_fetch_seconds": None if ops[2] is None else round(float(ops[2]), 1),
            "ai_calls": int(ai[0]),
            "ai_failures": int(ai[1]),
        },
    }


def enrich_week(settings: Settings, as_of: date) -> EnrichOutcome:
    """Commentary on the week the weekly workbook of report date `as_of` covers. Never raises."""
    return never_raises(
        settings,
        as_of,
        KIND,
        lambda cfg: _enrich_week(settings, as_of, cfg.for_purpose(cfg.weekly_model, cfg.weekly_effort)),
    )


def _enrich_week(settings: Settings, as_of: date, cfg: AiConfig) -> EnrichOutcome:
    payload, stopped = read_marts(settings, as_of, KIND, cfg, lambda con: weekly_payload(con, as_of))
    if stopped is not None:
        return stopped
    if not cfg.enabled or not cfg.weekly_enabled:
        why = (
            "the AI layer is switched off."
            if not cfg.enabled
            else "weekly_enabled = false in dmf_watch/enrich/agy.toml."
        )
        return finish_without_call(settings, as_of, KIND, "disabled", cfg, why)
    if payload["period"]["days_with_accepted_load"] == 0:
        return finish_without_call(settings, as_of, KIND, "no_load", cfg, "no accepted load in the week.")
    schema = load_schema(SCHEMA)
    prompt = render(PROMPT, {"WEEKLY_JSON": json_block(payload), "SCHEMA_JSON": schema_text(schema)})
    known = frozenset(w["dmf_key"] for w in payload["withdrawn_detail"])
    ask = Ask(
        KIND,
        "weekly_commentary",
        prompt,
        SCHEMA,
        schema,
        parse=lambda obj: parse_weekly(obj, known),
        keep=lambda answer, run_id: _kept(as_of, answer, run_id),
    )
    return ask_agy(settings, as_of, cfg, ask)


def _kept(as_of: date, answer: WeeklyAnswer, run_id: str) -> Kept:
    items = [
        item_row(
            run_id,
            as_of,
            "weekly_commentary",
            i.dmf_key or i.label,
            i.why,
            detail_json=store.dumps({"label": i.label, "dmf_key": i.dmf_key}),
        )
        for i in answer.notable_items
    ]
    fields = {
        "headline": answer.headline,
        "summary_md": "\n\n".join(answer.trend_paragraphs),
        "commentary": answer.commentary_md(),
    }
    return Kept(items, fields)
