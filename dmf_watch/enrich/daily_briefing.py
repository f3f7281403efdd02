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

from datetime import date
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import Connection, rows
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich import proposals as proposal_queue
from dmf_watch.enrich.ai_config import AiConfig
from dmf_watch.enrich.parse import DailyAnswer, parse_daily
from dmf_watch.enrich.payload import DailyPayload, build_daily_payload, omitted_sentence
from dmf_watch.enrich.render import RenderedPrompt, json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    Ask,
    EnrichOutcome,
    Kept,
    ask_agy,
    finish_without_call,
    hypothesis_item,
    item_row,
    never_raises,
    read_marts,
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
    return never_raises(settings, as_of, KIND, lambda cfg: _enrich_day(settings, as_of, cfg))


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
    ask = Ask(
        KIND,
        "daily_briefing",
        prompt,
        SCHEMA,
        schema,
        parse=lambda obj: parse_daily(obj, payload.key_map, payload.known_signal_ids, payload.offered),
        keep=lambda answer, run_id: _kept(settings, as_of, cfg, prompt, answer, run_id),
        reused="same data as an earlier successful run",
    )
    return ask_agy(settings, as_of, cfg, ask)


def _kept(
    settings: Settings, as_of: date, cfg: AiConfig, prompt: RenderedPrompt, answer: DailyAnswer, run_id: str
) -> Kept:
    items = [
        item_row(
            run_id,
            as_of,
            "event_comment",
            c.dmf_key,
            c.comment,
            importance=c.importance,
            detail_json=store.dumps({"importance_changed_reason": c.importance_changed_reason})
            if c.importance_changed_reason
            else None,
        )
        for c in answer.comments
    ]
    items += [hypothesis_item(run_id, as_of, a) for a in answer.anomalies]
    items += [
        item_row(
            run_id,
            as_of,
            "ingredient_alias",
            p.watch_term,
            p.candidate_ingredient_name,
            detail_json=store.dumps(
                {"base_form": p.base_form, "salt_form": p.salt_form, "confidence": p.confidence, "reason": p.reason}
            ),
        )
        for p in answer.aliases
    ]
    sha = prompt.identity_sha256
    proposals = proposal_queue.new_alias_rows(settings, as_of, run_id, cfg.model, sha, answer.aliases)
    return Kept(
        items,
        {"headline": answer.headline, "summary_md": answer.summary_md, "risk_note": answer.risk_note},
        proposals,
        counts={
            "comments": len(answer.comments),
            "anomaly_notes": len(answer.anomalies),
            "proposals_queued": len(proposals),
        },
        after_stored=lambda: proposal_queue.write_alias_file(settings, as_of, run_id, cfg.model, sha, proposals),
    )
