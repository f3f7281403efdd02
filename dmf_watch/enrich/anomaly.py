"""`dmf explain-anomaly`: re-explain a past day's fired signals on their own.

The daily briefing already carries the anomaly section; this standalone path is for later
investigation. Only signals that fired that day can be explained; anything else the model
mentions is dropped. Never raises.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import rows
from dmf_watch.enrich.ai_config import AiConfig
from dmf_watch.enrich.daily_briefing import read_day
from dmf_watch.enrich.parse import AnomalyAnswer, parse_anomaly
from dmf_watch.enrich.payload import build_daily_payload
from dmf_watch.enrich.render import json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    Ask,
    EnrichOutcome,
    Kept,
    ask_agy,
    finish_without_call,
    hypothesis_item,
    never_raises,
    read_marts,
)

KIND = "anomaly"
PROMPT = "uc3_anomaly_only.md"
SCHEMA = "uc3_anomaly.schema.json"
HISTORY_COLUMNS = (
    "as_of_date",
    "verdict",
    "registry_count",
    "new_count",
    "changed_count",
    "withdrawn_count",
    "event_count",
    "fired_signal_count",
)


def explain_anomaly(settings: Settings, as_of: date) -> EnrichOutcome:
    return never_raises(
        settings, as_of, KIND, lambda cfg: _explain(settings, as_of, cfg.for_purpose(cfg.anomaly_model, cfg.effort))
    )


def _explain(settings: Settings, as_of: date, cfg: AiConfig) -> EnrichOutcome:
    def read(con) -> tuple[Any, list[dict[str, Any]]]:
        history = rows(
            con,
            f"""
            select {", ".join(HISTORY_COLUMNS)} from {con.schemas.marts}.dmf_daily_summary
            where as_of_date between ? and ? order by as_of_date""",
            [as_of - timedelta(days=13), as_of],
        )
        return read_day(con, as_of), history

    found, stopped = read_marts(settings, as_of, KIND, cfg, read)
    if stopped is not None:
        return stopped
    facts, history = found
    if not cfg.enabled:
        return finish_without_call(settings, as_of, KIND, "disabled", cfg, "the AI layer is switched off.")
    if not facts.fired:
        return finish_without_call(
            settings, as_of, KIND, "no_signals", cfg, f"no signal fired on {as_of.isoformat()}; nothing to explain."
        )
    payload = build_daily_payload(facts.summary, [], [], facts.signals, [], max_events=0)
    for row in history:
        row["as_of_date"] = row["as_of_date"].isoformat()
    schema = load_schema(SCHEMA)
    prompt = render(
        PROMPT,
        {
            "RUN_DATE": as_of.isoformat(),
            "SIGNALS_JSON": json_block(payload.signals),
            "HISTORY_JSON": json_block(history),
            "SCHEMA_JSON": schema_text(schema),
        },
    )
    ask = Ask(
        KIND,
        "anomaly_explanation",
        prompt,
        SCHEMA,
        schema,
        parse=lambda obj: parse_anomaly(obj, payload.known_signal_ids),
        keep=lambda answer, run_id: _kept(as_of, answer, run_id),
        reused="same signals as an earlier successful run",
    )
    return ask_agy(settings, as_of, cfg, ask)


def _kept(as_of: date, answer: AnomalyAnswer, run_id: str) -> Kept:
    items = [hypothesis_item(run_id, as_of, a) for a in answer.anomalies]
    return Kept(
        items, {"overall_assessment": answer.overall_assessment}, counts={"anomaly_notes": len(answer.anomalies)}
    )
