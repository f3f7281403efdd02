"""Diagnose MFDS API schema drift (the prompt `prompts/uc2b_api_drift.md`).

Wired into `dmf run` (issue 8): when the loader rejects a load because the item keys did not fit
the declared schema (`mfds_raw.load_runs.schema_drift`), `diagnose_load_drift` runs after the
build. It asks agy where the expected fields now live, keeps only candidates whose quoted
evidence really occurs in the samples we showed, and queues them in
`state/proposals/<date>_uc2b_drift.json`. A person edits the loader's declared schema; nothing
is applied automatically. On by default (`drift_enabled = true`); the same drift of the same day
is diagnosed once (a re-run reuses the stored run and calls agy zero more times). Never raises.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import SEOUL, Settings
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.ai_config import AiConfig
from dmf_watch.enrich.parse import DriftAnswer, parse_drift
from dmf_watch.enrich.render import json_block, load_schema, render, schema_text
from dmf_watch.enrich.runner import (
    Ask,
    EnrichOutcome,
    Kept,
    ask_agy,
    finish_without_call,
    item_row,
    never_raises,
    open_warehouse,
)
from dmf_watch.enrich.sanitize import for_prompt

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


def diagnose_load_drift(settings: Settings, as_of: date, schema_drift: str | None) -> EnrichOutcome:
    """Diagnose a load the loader rejected for schema drift, from its `schema_drift` record.

    The expected fields are the loader's declared schema; the last good sample is one record of
    the latest accepted load, keyed as the API used to send it. Never raises.
    """
    try:
        record = json.loads(schema_drift or "")
        if not isinstance(record, dict):
            raise ValueError("not an object")
    except ValueError:
        return EnrichOutcome(
            None, as_of, KIND, "FAILED", "internal_error", detail="the load's schema_drift record could not be read"
        )
    try:
        from dmf_watch.pipelines.mfds.settings import ITEM_FIELD_PATHS

        drift = {"missing": list(record.get("missing") or []), "unknown": list(record.get("unknown") or [])}
        samples = [s for s in record.get("samples") or [] if isinstance(s, Mapping)]
        # Ask where the missing fields went; with none missing (only new keys), show them all.
        expected = {k: v for k, v in ITEM_FIELD_PATHS.items() if k in drift["missing"]} or ITEM_FIELD_PATHS
        return diagnose_api_drift(
            settings, as_of, expected_fields=expected, samples=samples, last_good=_last_good_item(settings), drift=drift
        )
    except Exception as exc:
        return EnrichOutcome(
            None,
            as_of,
            KIND,
            "FAILED",
            "internal_error",
            detail=f"unexpected error in diagnose_load_drift: {type(exc).__name__}",
        )


def _last_good_item(settings: Settings) -> dict[str, Any] | None:
    """One raw record of the latest accepted load, with the API's key names, or None."""
    from dmf_watch.pipelines.mfds.settings import SOURCE_FIELDS

    opened, _ = open_warehouse(settings)
    if opened is None:
        return None
    try:
        with opened as con:
            s = con.schemas
            row = con.execute(f"""
                select {", ".join(name.lower() for name in SOURCE_FIELDS)}
                from {s.raw}.dmf_items
                where load_id = (select load_id from {s.marts}.dmf_loads where verdict = 'accepted'
                                 order by as_of_date desc, attempt_order desc limit 1)
                order by item_position limit 1""").fetchone()
    except warehouse.Error:
        return None
    return dict(zip(SOURCE_FIELDS, row)) if row else None


def diagnose_api_drift(
    settings: Settings,
    as_of: date,
    *,
    expected_fields: Mapping[str, str],
    samples: Sequence[Mapping[str, Any]],
    last_good: Mapping[str, Any] | None = None,
    drift: Mapping[str, Any] | None = None,
) -> EnrichOutcome:
    return never_raises(
        settings,
        as_of,
        KIND,
        lambda cfg: _diagnose(
            settings, as_of, cfg.for_purpose(cfg.drift_model, "high"), expected_fields, samples, last_good, drift
        ),
    )


def _diagnose(settings, as_of, cfg, expected_fields, samples, last_good, drift) -> EnrichOutcome:
    if not cfg.enabled:
        why = "DMF_AI_DISABLED is set." if cfg.disabled_by_env else "enabled = false in dmf_watch/enrich/agy.toml."
        return finish_without_call(settings, as_of, KIND, "disabled", cfg, why)
    if not cfg.drift_enabled:
        return finish_without_call(
            settings, as_of, KIND, "disabled", cfg, "drift_enabled = false in dmf_watch/enrich/agy.toml."
        )
    shown_samples = [_clean(s) for s in list(samples)[:MAX_SAMPLES]]
    fields = {for_prompt(k, 60): for_prompt(v, 200) for k, v in expected_fields.items()}
    schema = load_schema(SCHEMA)
    prompt = render(
        PROMPT,
        {
            "RUN_DATE": as_of.isoformat(),
            "EXPECTED_FIELDS_JSON": json_block(fields),
            "DRIFT_JSON": json_block(_clean(dict(drift)) if drift else {}),
            "SAMPLES_JSON": json_block(shown_samples),
            "LAST_GOOD_JSON": json_block(_clean(last_good) if last_good else {}),
            "SCHEMA_JSON": schema_text(schema),
        },
    )
    ask = Ask(
        KIND,
        "api_drift",
        prompt,
        SCHEMA,
        schema,
        parse=lambda obj: parse_drift(obj, frozenset(fields), json_block(shown_samples)),
        keep=lambda answer, run_id: _kept(settings, as_of, cfg, prompt.identity_sha256, answer, run_id),
        reused="same drift as an earlier successful diagnosis",
    )
    return ask_agy(settings, as_of, cfg, ask)


def _kept(settings: Settings, as_of: date, cfg: AiConfig, prompt_sha: str, answer: DriftAnswer, run_id: str) -> Kept:
    items = [
        item_row(
            run_id,
            as_of,
            "api_field_path",
            c.field,
            c.json_path,
            importance=c.stability,
            detail_json=store.dumps({"evidence": c.evidence, "rationale": c.rationale, "confidence": c.confidence}),
        )
        for c in answer.candidates
    ]
    return Kept(
        items,
        {"summary_md": answer.diagnosis},
        counts={"proposals_queued": len(answer.candidates)},
        after_stored=lambda: _write_drift_file(settings, as_of, cfg, prompt_sha, answer, run_id),
    )


def _write_drift_file(
    settings: Settings, as_of: date, cfg: AiConfig, prompt_sha: str, answer: DriftAnswer, run_id: str
) -> None:
    """The candidates for a person to review (state/proposals/), never applied by dmf."""
    data = {
        "kind": "api_field_path",
        "run_id": run_id,
        "generated_at": datetime.now(SEOUL).isoformat(timespec="seconds"),
        "model": cfg.model,
        "prompt_sha256": prompt_sha,
        "status": "PENDING",
        "note": "자동 반영되지 않습니다. 사람이 적재기의 필드 매핑을 직접 고친 뒤 dmf load 로 확인하십시오.",
        "diagnosis": answer.diagnosis,
        "needs_human_review": answer.needs_human_review,
        "page_changed_markers": answer.page_changed_markers,
        "items": [
            dict(
                id=i + 1,
                field=c.field,
                json_path=c.json_path,
                evidence=c.evidence,
                rationale=c.rationale,
                stability=c.stability,
                confidence=c.confidence,
                decision="PENDING",
            )
            for i, c in enumerate(answer.candidates)
        ],
    }
    path = drift_file(settings, as_of)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
