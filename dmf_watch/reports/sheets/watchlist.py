"""The watchlist sheet: the day's events that touch a watched term, each linked to its timeline
on the history sheet, and the watched terms today's list does not hold at all."""

from __future__ import annotations

import json

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import (
    AI_COMMENT_HEADER,
    TERM_KIND_LABEL,
    UNMATCHED_REASON_LABEL,
    Col,
    Formats,
    back_link,
    label,
    write_sheet_title,
    write_table,
)
from dmf_watch.reports.sheets import DASHBOARD, HISTORY
from dmf_watch.reports.sheets.events import labelled_events, status_note

WATCH_COLS = [
    Col("구분", "event_label", "text", 7),
    Col("중요도", "severity", "severity", 11),
    Col("관심 키워드", "watch_terms", "text", 18),
    Col("담당", "watch_owners", "text", 10),
    Col("일치 방식", "watch_matches_label", "text", 30),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 24),
    Col("신청인", "applicant", "text", 20),
    Col("제조소명", "manufacturer", "text", 30),
    Col("제조국", "countries", "text", 12),
    Col("변경 항목", "changed_fields_label", "text", 20),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
    Col("이력", "history_label", "text", 10),
]
UNMATCHED_COLS = [
    Col("관심 항목", "watch_term", "text"),
    Col("종류", "term_kind_label", "text"),
    Col("찾지 못한 이유", "reason_label", "text"),
    Col("비슷한 이름 후보(규칙 기반)", "candidates_text", "text"),
]


def write_watchlist_sheet(ws: Worksheet, f: Formats, data: dict, timeline_rows: dict[str, int]) -> None:
    """`timeline_rows`: dmf_key → the first row of its block on the history sheet."""
    top = write_sheet_title(ws, f, "관심목록 해당 이벤트", status_note(data))
    back_link(ws, f, 3, DASHBOARD)
    r = write_table(ws, f, top, WATCH_COLS, labelled_events(data["watch"]), source="marts.dmf_events")
    history_col = len(WATCH_COLS) - 1
    for i, row in enumerate(data["watch"]):
        if row["dmf_key"] in timeline_rows:
            ws.write_url(
                top + 1 + i,
                history_col,
                f"internal:'{HISTORY}'!A{timeline_rows[row['dmf_key']] + 1}",
                f.link,
                string="이력 보기 →",
            )
    r += 2
    ws.write_string(r, 0, "오늘 데이터에서 찾지 못한 관심 항목", f.section)
    unmatched = []
    for row in data["unmatched"] or []:
        row = dict(row)
        row["term_kind_label"] = label(TERM_KIND_LABEL, row.get("term_kind"))
        row["reason_label"] = label(UNMATCHED_REASON_LABEL, row.get("unmatched_reason"))
        row["candidates_text"] = _json_list_text(row.get("candidates"))
        unmatched.append(row)
    write_table(
        ws,
        f,
        r + 1,
        UNMATCHED_COLS,
        unmatched,
        main=False,
        empty_text=(
            "없음 — 모든 관심 항목(성분·신청인·제조소)이 오늘 목록의 등록과 일치합니다"
            if data["unmatched"] is not None
            else "확인하지 못함 — 이 날짜의 등록 목록과 대조한 결과가 없습니다(가장 최근 적재 날짜만 대조합니다)"
        ),
    )


def _json_list_text(value: str | None) -> str | None:
    if not value:
        return None
    try:
        items = json.loads(value)
    except ValueError:
        return value
    return ", ".join(str(i) for i in items) if isinstance(items, list) else str(items)
