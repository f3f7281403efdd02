"""The rejected-day banner's part for an API schema drift: which fields went missing, which keys
appeared, and the AI diagnosis marked as AI (or the badge that says why there is none).

Kept apart from the rest of that banner (`dmf_watch.reports.sheets.load_status`) because it
reads one more record (the load's `schema_drift` JSON) and the drift enrichment run; every value
is API or AI text, so all of it goes through `merged_text` (plain strings, formula leads escaped).
"""

from __future__ import annotations

import json
from typing import Any

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import Formats, ai_badge, merged_text

AI_TITLE = "AI 진단 — AI 생성 문장(참고용). 제안은 자동 반영되지 않으며 사람이 확인한 뒤에만 적재기를 고칩니다."
WHAT_TO_CHECK = (
    "식약처 Open API 공지에서 항목 이름 변경을 확인하고, dmf_watch/pipelines/mfds/settings.py 의 "
    "ITEM_SCHEMA 를 고친 뒤 dmf run 으로 다시 적재하세요. 그 전까지 이 날의 데이터는 반영되지 않습니다."
)
DRIFT_NO_GATE = (
    "게이트 신호 없음 — 적재기가 API 항목 스키마 변경(위의 사라진 필드·새로 나타난 키)을 "
    "감지해 적재를 불완전으로 판정했습니다."
)
MAX_NAMES = 30


def drift_record(value: Any) -> dict[str, Any] | None:
    """The load's `schema_drift` JSON as a dict, or None (no drift, or unreadable)."""
    if not value:
        return None
    try:
        record = json.loads(value)
    except (TypeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _names(values: Any) -> str:
    names = [str(v) for v in values or []]
    text = ", ".join(names[:MAX_NAMES])
    if len(names) > MAX_NAMES:
        text += f" 외 {len(names) - MAX_NAMES}개"
    return text or "없음"


SHAPE_WORDS = {
    "key missing": "키 없음",
    "sent as a JSON array": "JSON 배열",
    "sent as a JSON object": "JSON 객체",
    "sent as a number": "숫자",
    "sent as a boolean": "참/거짓 값",
    "not a calendar date": "없는 날짜",
    "with spaces around it": "앞뒤 공백",
    "with every field empty": "모든 필드가 빈 레코드",
}


def _shapes(values: Any) -> str:
    """`[{"field", "shape", "items"}]` as `MNFCTR_NAME 키 없음 1,314건, ...` (loader's words kept
    for a shape it names by pattern: `형식 9999-99-99 99:99:99.9`)."""
    parts = []
    for shape in (values or [])[:MAX_NAMES]:
        if not isinstance(shape, dict):
            continue
        words = str(shape.get("shape", ""))
        words = SHAPE_WORDS.get(words) or ("형식 " + words[3:] if words.startswith("as ") else words)
        subject = "레코드" if shape.get("field") == "*" else str(shape.get("field", ""))
        count = shape.get("items")
        parts.append(f"{subject} {words} {count:,}건" if isinstance(count, int) else f"{subject} {words}")
    return ", ".join(parts) or "없음"


def drift_rows(ws: Worksheet, f: Formats, r: int, record: dict[str, Any], run: dict[str, Any] | None) -> int:
    """Writes the drift rows from row `r`; returns the next free row."""
    for caption, value, fmt in (
        ("사라진 필드", _names(record.get("missing")), f.value),
        ("새로 나타난 키", _names(record.get("unknown")), f.value),
        ("형태가 다른 값", _shapes(record.get("shapes")), f.value),
        ("확인할 것", WHAT_TO_CHECK, f.warn),
    ):
        ws.write_string(r, 0, caption, f.key)
        merged_text(ws, r, 1, r, 7, value, fmt)
        r += 1
    merged_text(ws, r, 0, r, 7, AI_TITLE, f.ai_title)
    r += 1
    if run and run.get("status") == "OK" and run.get("summary_md"):
        ws.write_string(r, 0, "AI 진단 (AI)", f.ai_label)
        merged_text(ws, r, 1, r + 2, 7, run.get("summary_md"), f.ai_body)
        r += 3
        ws.write_string(
            r,
            0,
            "모델: "
            + (run.get("model") or "-")
            + "  ·  실행: "
            + (run.get("run_id") or "-")
            + "  ·  제안 파일: state/proposals/ 의 _uc2b_drift.json",
            f.subtitle,
        )
        r += 1
    else:
        badge = ai_badge(run.get("skip_reason") if run else None, run.get("status") if run else None)
        merged_text(ws, r, 0, r + 1, 7, badge.replace("AI 요약", "AI 진단", 1), f.badge)
        r += 2
    return r
