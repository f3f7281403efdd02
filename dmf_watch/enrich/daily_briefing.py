"""`dmf enrich`: one agy call a day at most — the Korean briefing with its per-event comments,
anomaly notes and alias proposals, sections of one prompt because every call pays agy's fixed
prompt overhead again. Never raises.

The day's facts come from the dbt marts (contract columns only). No call is made when the AI is
switched off, when the day's load was rejected, when nothing happened (no events and no fired
signal), when the same data was already briefed (latest OK run with the same prompt hash, or
the result cache), or when the breaker or a budget says no. Every outcome is a row in
`enrichment.enrichment_run` and an `EnrichOutcome` value.
"""

from __future__ import annotations

import traceback
from datetime import date
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import Connection, rows
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich import proposals as proposal_queue
from dmf_watch.enrich.ai_config import AiConfig, load_ai_config
from dmf_watch.enrich.parse import DailyAnswer, parse_daily
from dmf_watch.enrich.payload import DailyPayload, build_daily_payload, omitted_sentence
from dmf_watch.enrich.render import SCHEMAS_DIR, RenderedPrompt, json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    EnrichOutcome,
    Tools,
    base_run,
    finish_after_failed_call,
    finish_without_call,
    new_run_id,
    open_warehouse,
    read_marts,
    status_for,
    write_run,
)

KIND = "daily"
PROMPT = "uc1_daily_briefing.md"
SCHEMA = "uc1_briefing.schema.json"
MIN_EVENTS_IN_PROMPT = 15


class DayFacts:
    def __init__(self) -> None:
        self.load: dict[str, Any] | None = None
        self.summary: dict[str, Any] | None = None
        self.events: list[dict[str, Any]] = []
        self.changes: list[dict[str, Any]] = []
        self.signals: list[dict[str, Any]] = []
        self.unmatched: list[dict[str, Any]] = []

    @property
    def fired(self) -> list[dict[str, Any]]:
        return [s for s in self.signals if s.get("fired")]


def read_day(con: Connection, as_of: date) -> DayFacts:
    """The day's facts from the marts (the load marts.dmf_day_decisions names decides)."""
    marts = con.schemas.marts
    facts = DayFacts()
    loads = rows(
        con,
        f"""
        select load_id, as_of_date, verdict, reason, is_baseline, finished_at
        from {marts}.dmf_day_decisions where as_of_date = ?""",
        [as_of],
    )
    facts.load = loads[0] if loads else None
    summaries = rows(con, f"select * from {marts}.dmf_daily_summary where as_of_date = ? limit 1", [as_of])
    facts.summary = summaries[0] if summaries else None
    facts.events = rows(
        con,
        f"""
        select event_id, dmf_key, permit_no, event_type, severity, severity_rank, rule_priority,
               on_watchlist, watch_terms, ingredient_name, applicant, manufacturer,
               manufacture_place, countries, permit_date, notice_code, changed_fields, change_kind
        from {marts}.dmf_events where as_of_date = ?""",
        [as_of],
    )
    facts.changes = rows(
        con,
        f"""
        select dmf_key, field_name, before_value, after_value, change_kind
        from {marts}.dmf_event_field_changes where as_of_date = ?
        order by dmf_key, field_name""",
        [as_of],
    )
    load_id = facts.load["load_id"] if facts.load else None
    facts.signals = rows(
        con,
        f"""
        select signal_id, is_gate, fired, severity, observed, baseline, baseline_text,
               window_text, context, description
        from {marts}.dmf_signals where as_of_date = ? and (? is null or load_id = ?)
        order by signal_id""",
        [as_of, load_id, load_id],
    )
    # ingredient terms only: the alias section picks among candidate ingredient names, and the
    # mart offers none for applicant and manufacturer terms (there is no alias to propose)
    facts.unmatched = rows(
        con,
        f"""
        select watch_term, term_kind, candidates from {marts}.dmf_watchlist_unmatched
        where as_of_date = ? and term_kind = 'ingredient' order by watch_term""",
        [as_of],
    )
    return facts


def render_briefing_prompt(as_of: date, payload: DailyPayload, schema: dict) -> RenderedPrompt:
    """The daily briefing prompt for agy (not the xlsx: that is dmf_watch.reports.daily_report.render_daily)."""
    omitted = dict(payload.omitted)
    values = {
        "RUN_DATE": as_of.isoformat(),
        "COUNTS_JSON": json_block(payload.counts),
        "EVENTS_JSON": json_block(payload.events),
        "EVENTS_COUNT": str(len(payload.events)),
        "OMITTED_JSON": json_block(
            {"by_type_severity": omitted, "sentence": omitted_sentence(omitted)} if omitted else {}
        ),
        "SIGNALS_JSON": json_block(payload.signals),
        "WATCHLIST_JSON": json_block(payload.watchlist_unmatched),
        "SCHEMA_JSON": schema_text(schema),
    }
    return render(PROMPT, values)


def build_prompt(as_of: date, facts: DayFacts, schema: dict, cfg: AiConfig) -> tuple[RenderedPrompt, DailyPayload]:
    """Render with up to `max_events_in_prompt` events, shrinking the list until the prompt fits
    the command-line-safe size (the rest is summarised as counts)."""
    limit = max(0, cfg.max_events_in_prompt)
    while True:
        payload = build_daily_payload(
            facts.summary, facts.events, facts.changes, facts.signals, facts.unmatched, max_events=limit
        )
        prompt = render_briefing_prompt(as_of, payload, schema)
        if len(prompt.text) <= cfg.cmdline_safe_chars or limit <= MIN_EVENTS_IN_PROMPT:
            return prompt, payload
        limit = max(MIN_EVENTS_IN_PROMPT, int(limit * 0.8))


def enrich_day(settings: Settings, as_of: date) -> EnrichOutcome:
    """Brief one day. Never raises: every failure is an `EnrichOutcome` with a skip_reason."""
    cfg: AiConfig | None = None
    try:
        cfg = load_ai_config(settings)
        return _enrich_day(settings, as_of, cfg)
    except Exception as exc:  # the last net: the pipeline must go on to the report
        detail = f"unexpected error in enrich_day: {type(exc).__name__}"
        outcome = EnrichOutcome(None, as_of, KIND, "FAILED", "internal_error", detail=detail)
        try:
            outcome = finish_without_call(settings, as_of, KIND, "internal_error", cfg, detail)
        except Exception:
            pass
        _log_traceback(settings, as_of)
        return outcome


def _log_traceback(settings: Settings, as_of: date) -> None:
    try:
        path = settings.state_dir / "agy_runs" / f"{as_of:%Y%m%d}-internal_error.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8")
    except OSError:
        pass


def _enrich_day(settings: Settings, as_of: date, cfg: AiConfig) -> EnrichOutcome:
    facts, stopped = read_marts(settings, as_of, KIND, cfg, lambda con: read_day(con, as_of))
    if stopped is not None:
        return stopped
    if not cfg.enabled:
        why = "DMF_AI_DISABLED is set." if cfg.disabled_by_env else "enabled = false in dmf_watch/enrich/agy.toml."
        return finish_without_call(settings, as_of, KIND, "disabled", cfg, why)
    if facts.load is None:
        return finish_without_call(
            settings, as_of, KIND, "no_load", cfg, f"no load is recorded for {as_of.isoformat()}."
        )
    if str(facts.load.get("verdict")) != "accepted":
        return finish_without_call(
            settings,
            as_of,
            KIND,
            "load_rejected",
            cfg,
            "the day's load was rejected (incomplete, failed or stopped by a gate); nothing to brief.",
        )
    if not facts.events and not facts.fired:
        return finish_without_call(
            settings, as_of, KIND, "diff_empty", cfg, "no events and no fired signal today; agy not called."
        )

    schema = load_schema(SCHEMA)
    prompt, payload = build_prompt(as_of, facts, schema, cfg)

    latest = _latest(settings, as_of)
    if latest and latest["status"] == "OK" and latest["prompt_sha256"] == prompt.identity_sha256:
        return EnrichOutcome(
            latest["run_id"],
            as_of,
            KIND,
            "OK",
            headline=latest["headline"],
            reused=True,
            detail="same data as an earlier successful run",
            prompt_chars=len(prompt.text),
        )

    run_id = new_run_id(as_of, KIND)
    tools = Tools(settings, cfg, run_id)
    result = tools.client.call("daily_briefing", prompt, schema, SCHEMAS_DIR / SCHEMA, tools.log_dir)
    if not result.ok:
        return finish_after_failed_call(settings, as_of, KIND, cfg, prompt.identity_sha256, result, tools, run_id)

    answer = parse_daily(result.obj, payload.key_map, payload.known_signal_ids, payload.offered)
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
    return _store_answer(settings, as_of, cfg, run_id, prompt, result, answer, tools)


def _latest(settings: Settings, as_of: date) -> dict[str, Any] | None:
    opened, _ = open_warehouse(settings)
    if opened is None:
        return None
    with opened as con:
        store.ensure_schema(con)
        return store.latest_run(con, as_of, KIND)


def _store_answer(
    settings: Settings,
    as_of: date,
    cfg: AiConfig,
    run_id: str,
    prompt: RenderedPrompt,
    result,
    answer: DailyAnswer,
    tools: Tools,
) -> EnrichOutcome:
    now = store.utc_now()
    items: list[dict[str, Any]] = []
    for c in answer.comments:
        items.append(
            {
                "run_id": run_id,
                "as_of_date": as_of,
                "kind": "event_comment",
                "item_key": c.dmf_key,
                "importance": c.importance,
                "content": c.comment,
                "detail_json": store.dumps({"importance_changed_reason": c.importance_changed_reason})
                if c.importance_changed_reason
                else None,
                "applied": 0,
                "created_at": now,
            }
        )
    for a in answer.anomalies:
        items.append(
            {
                "run_id": run_id,
                "as_of_date": as_of,
                "kind": "anomaly_hypothesis",
                "item_key": a.signal_id,
                "importance": a.verdict,
                "content": a.hypothesis,
                "detail_json": store.dumps(
                    {"verdict": a.verdict, "suggested_action": a.suggested_action, "confidence": a.confidence}
                ),
                "applied": 0,
                "created_at": now,
            }
        )
    for p in answer.aliases:
        items.append(
            {
                "run_id": run_id,
                "as_of_date": as_of,
                "kind": "ingredient_alias",
                "item_key": p.watch_term,
                "importance": None,
                "content": p.candidate_ingredient_name,
                "detail_json": store.dumps(
                    {"base_form": p.base_form, "salt_form": p.salt_form, "confidence": p.confidence, "reason": p.reason}
                ),
                "applied": 0,
                "created_at": now,
            }
        )
    proposal_rows = proposal_queue.new_alias_rows(
        settings, as_of, run_id, cfg.model, prompt.identity_sha256, answer.aliases
    )
    dropped_note = answer.dropped.note()
    run = base_run(
        run_id,
        as_of,
        KIND,
        "OK",
        None,
        cfg,
        dropped_note,
        headline=answer.headline,
        summary_md=answer.summary_md,
        risk_note=answer.risk_note,
        prompt_sha256=prompt.identity_sha256,
        agy_call_count=result.attempts,
        total_tokens=result.tokens,
        cache_hit=result.cache_hit,
        dropped_json=store.dumps(answer.dropped.as_dict()) if answer.dropped.total else None,
    )
    problem = write_run(settings, run, items, tools.call_rows(run_id, as_of, dropped_note), proposal_rows)
    if problem:
        return EnrichOutcome(
            None,
            as_of,
            KIND,
            status_for("storage_error"),
            "storage_error",
            detail=problem,
            agy_calls=result.attempts,
            tokens=result.tokens,
        )
    proposal_queue.write_alias_file(settings, as_of, run_id, cfg.model, prompt.identity_sha256, proposal_rows)
    return EnrichOutcome(
        run_id,
        as_of,
        KIND,
        "OK",
        headline=answer.headline,
        detail=dropped_note,
        agy_calls=result.attempts,
        tokens=result.tokens,
        cache_hit=result.cache_hit,
        comments=len(answer.comments),
        anomaly_notes=len(answer.anomalies),
        proposals_queued=len(proposal_rows),
        dropped=answer.dropped.as_dict(),
        prompt_chars=len(prompt.text),
    )
