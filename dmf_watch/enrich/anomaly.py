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
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.ai_config import AiConfig, load_ai_config
from dmf_watch.enrich.daily_briefing import read_day
from dmf_watch.enrich.parse import parse_anomaly
from dmf_watch.enrich.payload import build_daily_payload
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
    cfg: AiConfig | None = None
    try:
        cfg = load_ai_config(settings)
        return _explain(settings, as_of, cfg.for_purpose(cfg.anomaly_model, cfg.effort))
    except Exception as exc:
        return EnrichOutcome(
            None,
            as_of,
            KIND,
            "FAILED",
            "internal_error",
            detail=f"unexpected error in explain_anomaly: {type(exc).__name__}",
        )


def _explain(settings: Settings, as_of: date, cfg: AiConfig) -> EnrichOutcome:
    def read(con) -> tuple[Any, list[dict[str, Any]], Any]:
        history = rows(
            con,
            f"""
            select {", ".join(HISTORY_COLUMNS)} from {con.schemas.marts}.dmf_daily_summary
            where as_of_date between ? and ? order by as_of_date""",
            [as_of - timedelta(days=13), as_of],
        )
        return read_day(con, as_of), history, store.latest_run(con, as_of, KIND)

    found, stopped = read_marts(settings, as_of, KIND, cfg, read)
    if stopped is not None:
        return stopped
    facts, history, latest = found
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
    if latest and latest["status"] == "OK" and latest["prompt_sha256"] == prompt.identity_sha256:
        return EnrichOutcome(
            latest["run_id"], as_of, KIND, "OK", reused=True, detail="same signals as an earlier successful run"
        )
    run_id = new_run_id(as_of, KIND)
    tools = Tools(settings, cfg, run_id)
    result = tools.client.call("anomaly_explanation", prompt, schema, SCHEMAS_DIR / SCHEMA, tools.log_dir)
    if not result.ok:
        return finish_after_failed_call(settings, as_of, KIND, cfg, prompt.identity_sha256, result, tools, run_id)
    answer = parse_anomaly(result.obj, payload.known_signal_ids)
    now = store.utc_now()
    items = [
        {
            "run_id": run_id,
            "as_of_date": as_of,
            "kind": "anomaly_hypothesis",
            "item_key": a.signal_id,
            "importance": a.verdict,
            "content": a.hypothesis,
            "detail_json": store.dumps(
                {
                    "verdict": a.verdict,
                    "suggested_action": a.suggested_action,
                    "alternative_hypothesis": a.alternative_hypothesis,
                    "confidence": a.confidence,
                }
            ),
            "applied": 0,
            "created_at": now,
        }
        for a in answer.anomalies
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
        prompt_sha256=prompt.identity_sha256,
        agy_call_count=result.attempts,
        total_tokens=result.tokens,
        cache_hit=result.cache_hit,
        overall_assessment=answer.overall_assessment,
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
        detail=note,
        agy_calls=result.attempts,
        tokens=result.tokens,
        cache_hit=result.cache_hit,
        anomaly_notes=len(answer.anomalies),
        dropped=answer.dropped.as_dict(),
        prompt_chars=len(prompt.text),
    )
