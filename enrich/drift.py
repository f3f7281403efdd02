"""Dormant: diagnose MFDS API schema drift (design §5.7, the JSON-path variant of UC2).

Not wired into the daily run. The loader (or a person) calls it when required item fields have
come back empty twice in a row; it asks agy where those fields now live, keeps only candidates
whose quoted evidence really occurs in the samples we showed, and queues them in
`state/proposals/<date>_uc2b_drift.json`. A person edits the loader's field map; nothing is
applied automatically. Off unless `drift_enabled = true`. Never raises.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from enrich import store
from enrich.client import skip_reason_for
from enrich.config import AiConfig, load_ai_config
from enrich.parse import parse_drift
from enrich.render import SCHEMAS_DIR, json_block, load_schema, render, schema_text
from enrich.runner import (EnrichOutcome, Tools, base_run, call_failure_detail,
                           finish_without_call, new_run_id, write_run)
from enrich.sanitize import for_prompt
from pipelines.config import SEOUL, Settings

KIND = "drift"
PROMPT = "uc2b_api_drift.md"
SCHEMA = "uc2b_api_drift.schema.json"
MAX_SAMPLES = 3


def _clean(value: Any, depth: int = 0) -> Any:
    """Sanitize every string of a sample and keep it small (keys too: they are data)."""
    if depth > 8:
        return None
    if isinstance(value, dict):
        return {for_prompt(k, 60): _clean(v, depth + 1) for k, v in list(value.items())[:40]}
    if isinstance(value, list):
        return [_clean(v, depth + 1) for v in value[:5]]
    if isinstance(value, str):
        return for_prompt(value, 120)
    return value


def drift_file(settings: Settings, as_of: date) -> Path:
    return Path(settings.state_dir) / "proposals" / f"{as_of:%Y%m%d}_uc2b_drift.json"


def diagnose_api_drift(settings: Settings, as_of: date, *, expected_fields: Mapping[str, str],
                       samples: Sequence[Mapping[str, Any]],
                       last_good: Mapping[str, Any] | None = None) -> EnrichOutcome:
    cfg: AiConfig | None = None
    try:
        cfg = load_ai_config(settings)
        return _diagnose(settings, as_of, cfg.for_purpose(cfg.drift_model, "high"),
                         expected_fields, samples, last_good)
    except Exception as exc:
        return EnrichOutcome(None, as_of, KIND, "FAILED", "internal_error",
                             detail=f"unexpected error in diagnose_api_drift: {type(exc).__name__}")


def _diagnose(settings, as_of, cfg, expected_fields, samples, last_good) -> EnrichOutcome:
    if not cfg.enabled or not cfg.drift_enabled:
        return finish_without_call(settings, as_of, KIND, "disabled", cfg,
                                   "drift_enabled = false in enrich/agy.toml (dormant asset).")
    shown_samples = [_clean(s) for s in list(samples)[:MAX_SAMPLES]]
    fields = {for_prompt(k, 60): for_prompt(v, 200) for k, v in expected_fields.items()}
    schema = load_schema(SCHEMA)
    prompt = render(PROMPT, {"RUN_DATE": as_of.isoformat(), "EXPECTED_FIELDS_JSON": json_block(fields),
                             "SAMPLES_JSON": json_block(shown_samples),
                             "LAST_GOOD_JSON": json_block(_clean(last_good) if last_good else {}),
                             "SCHEMA_JSON": schema_text(schema)})
    run_id = new_run_id(as_of, KIND)
    tools = Tools(settings, cfg, run_id)
    result = tools.client.call("api_drift", prompt, schema, SCHEMAS_DIR / SCHEMA, tools.log_dir)
    if not result.ok:
        return finish_without_call(settings, as_of, KIND, skip_reason_for(result.kind), cfg,
                                   call_failure_detail(result), prompt.identity_sha256, result, tools, run_id)
    answer = parse_drift(result.obj, frozenset(fields), json_block(shown_samples))
    now = store.utc_now()
    items = [{"run_id": run_id, "as_of_date": as_of, "kind": "api_field_path", "item_key": c.field,
              "importance": c.stability, "content": c.json_path,
              "detail_json": store.dumps({"evidence": c.evidence, "rationale": c.rationale,
                                          "confidence": c.confidence}),
              "applied": 0, "created_at": now} for c in answer.candidates]
    note = answer.dropped.note()
    run = base_run(run_id, as_of, KIND, "OK", None, cfg, note, summary_md=answer.diagnosis,
                   prompt_sha256=prompt.identity_sha256, agy_call_count=result.attempts,
                   total_tokens=result.tokens,
                   dropped_json=store.dumps(answer.dropped.as_dict()) if answer.dropped.total else None)
    problem = write_run(settings, run, items, tools.call_rows(run_id, as_of, note))
    if problem:
        return EnrichOutcome(None, as_of, KIND, "FAILED", "storage_error", detail=problem)
    data = {"kind": "api_field_path", "run_id": run_id,
            "generated_at": datetime.now(SEOUL).isoformat(timespec="seconds"), "model": cfg.model,
            "prompt_sha256": prompt.identity_sha256, "status": "PENDING",
            "note": "자동 반영되지 않습니다. 사람이 적재기의 필드 매핑을 직접 고친 뒤 dmf load 로 확인하십시오.",
            "diagnosis": answer.diagnosis, "needs_human_review": answer.needs_human_review,
            "page_changed_markers": answer.page_changed_markers,
            "items": [dict(id=i + 1, field=c.field, json_path=c.json_path, evidence=c.evidence,
                           rationale=c.rationale, stability=c.stability, confidence=c.confidence,
                           decision="PENDING") for i, c in enumerate(answer.candidates)]}
    path = drift_file(settings, as_of)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
    return EnrichOutcome(run_id, as_of, KIND, "OK", detail=note, agy_calls=result.attempts,
                         tokens=result.tokens, proposals_queued=len(answer.candidates),
                         dropped=answer.dropped.as_dict(), prompt_chars=len(prompt.text))
