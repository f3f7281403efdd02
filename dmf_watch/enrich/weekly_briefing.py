"""Weekly commentary: optional, off by default (`weekly_enabled = false`).

Every figure in the payload is computed here, by SQL over the marts (the registration groups are
counted in Python); the model only writes the sentences around them. Never raises.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date, timedelta
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import rows
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.ai_config import AiConfig, load_ai_config
from dmf_watch.enrich.parse import parse_weekly
from dmf_watch.enrich.render import SCHEMAS_DIR, json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    EnrichOutcome,
    Tools,
    base_run,
    finish_after_failed_call,
    finish_without_call,
    new_run_id,
    read_marts,
    write_run,
)
from dmf_watch.enrich.sanitize import for_prompt

KIND = "weekly"
PROMPT = "uc5_weekly_commentary.md"
SCHEMA = "uc5_weekly.schema.json"
# A permit number's registration group: `NNNN-X` after its 8-digit date part.
REGISTRATION_GROUP = re.compile(r"^[0-9]{8}-([0-9]+-[A-Z])")


def _totals(con, start: date, end: date) -> dict[str, int]:
    row = con.execute(
        f"""select coalesce(sum(new_count), 0), coalesce(sum(changed_count), 0),
                                coalesce(sum(withdrawn_count), 0), count(*)
                         from {con.schemas.marts}.dmf_daily_summary
                         where as_of_date between ? and ? and verdict = 'accepted'""",
        [start, end],
    ).fetchone()
    return {"new": int(row[0]), "changed": int(row[1]), "withdrawn": int(row[2]), "days": int(row[3])}


def _top(con, sql: str, params: list[Any], limit: int = 5) -> list[list[Any]]:
    return [[for_prompt(r[0], 60), int(r[1])] for r in con.execute(sql + f" limit {int(limit)}", params).fetchall()]


def _top_groups(con, week: list[date], limit: int = 5) -> list[list[Any]]:
    """The week's most frequent registration groups (the `NNNN-X` after a permit number's date
    part), counted here because each engine spells a regular-expression group differently."""
    permits = con.execute(
        f"select permit_no from {con.schemas.marts}.dmf_events where as_of_date between ? and ?", week
    ).fetchall()
    groups = Counter(m[1] for (permit_no,) in permits if permit_no and (m := REGISTRATION_GROUP.match(permit_no)))
    ranked = sorted(groups.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [[for_prompt(group, 60), n] for group, n in ranked]


def weekly_payload(con, as_of: date) -> dict[str, Any]:
    marts = con.schemas.marts
    start = as_of - timedelta(days=6)
    prev = (start - timedelta(days=7), start - timedelta(days=1))
    totals = _totals(con, start, as_of)
    medians = con.execute(
        f"""select coalesce(percentile_cont(0.5) within group (order by new_count), 0),
                   coalesce(percentile_cont(0.5) within group (order by changed_count), 0),
                   coalesce(percentile_cont(0.5) within group (order by withdrawn_count), 0)
                             from {marts}.dmf_daily_summary
                             where as_of_date between ? and ? and verdict = 'accepted'""",
        [as_of - timedelta(days=29), as_of],
    ).fetchone()
    week = [start, as_of]
    withdrawn = rows(
        con,
        f"""select dmf_key, ingredient_name, applicant, on_watchlist
                                   from {marts}.dmf_events where as_of_date between ? and ?
                                   and event_type = 'WITHDRAWN'
                                   order by on_watchlist desc, severity_rank, dmf_key limit 20""",
        week,
    )
    hits = con.execute(
        f"""select count(*) from {marts}.dmf_events
                          where as_of_date between ? and ? and on_watchlist""",
        week,
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
    return {
        "period": {"from": start.isoformat(), "to": as_of.isoformat(), "days_with_accepted_load": totals["days"]},
        "totals": {
            "new": totals["new"],
            "changed": totals["changed"],
            "withdrawn": totals["withdrawn"],
            "prev_week": {k: v for k, v in _totals(con, *prev).items() if k != "days"},
            "trailing_30d_daily_median": {"new": medians[0], "changed": medians[1], "withdrawn": medians[2]},
        },
        "top_applicants_new": _top(
            con,
            f"""select applicant, count(*) n from {marts}.dmf_events
            where as_of_date between ? and ? and event_type = 'NEW' and applicant is not null
            group by 1 order by n desc, 1""",
            week,
        ),
        "top_countries_new": _top(
            con,
            f"""select countries, count(*) n from {marts}.dmf_events
            where as_of_date between ? and ? and event_type = 'NEW' and countries is not null
            group by 1 order by n desc, 1""",
            week,
        ),
        "top_ingredient_groups": _top_groups(con, week),
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
    """Commentary on the seven days ending `as_of`. Never raises."""
    cfg: AiConfig | None = None
    try:
        cfg = load_ai_config(settings)
        return _enrich_week(settings, as_of, cfg)
    except Exception as exc:
        return EnrichOutcome(
            None,
            as_of,
            KIND,
            "FAILED",
            "internal_error",
            detail=f"unexpected error in enrich_week: {type(exc).__name__}",
        )


def _enrich_week(settings: Settings, as_of: date, base: AiConfig) -> EnrichOutcome:
    cfg = base.for_purpose(base.weekly_model, base.weekly_effort)
    found, stopped = read_marts(
        settings, as_of, KIND, cfg, lambda con: (weekly_payload(con, as_of), store.latest_run(con, as_of, KIND))
    )
    if stopped is not None:
        return stopped
    payload, latest = found
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
    if latest and latest["status"] == "OK" and latest["prompt_sha256"] == prompt.identity_sha256:
        return EnrichOutcome(latest["run_id"], as_of, KIND, "OK", headline=latest["headline"], reused=True)
    run_id = new_run_id(as_of, KIND)
    tools = Tools(settings, cfg, run_id)
    result = tools.client.call("weekly_commentary", prompt, schema, SCHEMAS_DIR / SCHEMA, tools.log_dir)
    if not result.ok:
        return finish_after_failed_call(settings, as_of, KIND, cfg, prompt.identity_sha256, result, tools, run_id)
    known = frozenset(w["dmf_key"] for w in payload["withdrawn_detail"])
    answer = parse_weekly(result.obj, known)
    if not answer.ok:
        return finish_without_call(
            settings,
            as_of,
            KIND,
            "parse_failed",
            cfg,
            f"the answer was discarded: {answer.failure_reason}.",
            prompt.identity_sha256,
            result,
            tools,
            run_id,
        )
    now = store.utc_now()
    items = [
        {
            "run_id": run_id,
            "as_of_date": as_of,
            "kind": "weekly_commentary",
            "item_key": i.dmf_key or i.label,
            "importance": None,
            "content": i.why,
            "detail_json": store.dumps({"label": i.label, "dmf_key": i.dmf_key}),
            "applied": 0,
            "created_at": now,
        }
        for i in answer.notable_items
    ]
    note = answer.dropped.note()
    run = base_run(
        run_id,
        as_of,
        KIND,
        "OK",
        None,
        cfg,
        note,
        headline=answer.headline,
        summary_md="\n\n".join(answer.trend_paragraphs),
        commentary=answer.commentary_md(),
        prompt_sha256=prompt.identity_sha256,
        agy_call_count=result.attempts,
        total_tokens=result.tokens,
        cache_hit=result.cache_hit,
        dropped_json=store.dumps(answer.dropped.as_dict()) if answer.dropped.total else None,
    )
    problem = write_run(settings, run, items, tools.call_rows(run_id, as_of, note))
    if problem:
        return EnrichOutcome(None, as_of, KIND, "FAILED", "storage_error", detail=problem)
    return EnrichOutcome(
        run_id,
        as_of,
        KIND,
        "OK",
        headline=answer.headline,
        detail=note,
        agy_calls=result.attempts,
        tokens=result.tokens,
        cache_hit=result.cache_hit,
        dropped=answer.dropped.as_dict(),
        prompt_chars=len(prompt.text),
    )
