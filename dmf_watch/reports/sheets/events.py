"""The NEW, CHANGED and WITHDRAWN sheets: one row per event, or per changed field.

The event columns and their Korean labels are shared with the watchlist sheet and with the
weekly workbook's withdrawal and watchlist sheets, so an event reads the same everywhere.
"""

from __future__ import annotations

from typing import Any

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.actions import describe_change
from dmf_watch.reports.layout import (
    AI_COMMENT_HEADER,
    CHANGE_KIND_LABEL,
    EVENT_LABEL,
    FIELD_LABEL,
    YES_NO,
    Col,
    Formats,
    back_link,
    field_list_label,
    label,
    watch_matches_label,
    write_sheet_title,
    write_table,
)
from dmf_watch.reports.sheets import DASHBOARD

EVENT_COLS = [
    Col("구분", "event_label", "text", 7),
    Col("중요도", "severity", "severity", 11),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 26),
    Col("신청인", "applicant", "text", 22),
    Col("사업자등록번호", "applicant_bizrno", "text", 13),
    Col("제조소명", "manufacturer", "text", 30),
    Col("제조소 소재지", "manufacture_place", "text", 40),
    Col("제조국", "countries", "text", 12),
    Col("등록일자", "permit_date", "date", 11),
    Col("고시구분", "notice_code", "text", 9),
    Col("관심목록", "watch", "text", 8),
    Col("관심 키워드", "watch_terms", "text", 16),
    Col("부재 일수", "absent_days", "int", 9),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
]
CHANGED_COLS = [
    Col("중요도", "severity", "severity", 11),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 24),
    Col("신청인", "applicant", "text", 20),
    Col("변경 항목", "field_label", "text", 13),
    Col("무엇이 바뀌었나", "change_text", "wrap", 40),
    Col("변경 전", "before_value", "wrap", 36),
    Col("변경 후", "after_value", "wrap", 36),
    Col("변경 종류", "change_kind_label", "text", 10),
    Col("관심목록", "watch", "text", 8),
    Col("관심 키워드", "watch_terms", "text", 16),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
    Col("코드(필터용)", "change_code", "text", 14),
]


def status_note(data: dict[str, Any]) -> str | None:
    """Why a sheet of the day's events is empty, when the day published none."""
    if data["load"] is None:
        return "이 날짜의 적재 기록이 없어 이벤트가 없습니다."
    if data["verdict"] == "rejected":
        return "적재가 거부된 날입니다: 이벤트를 발행하지 않았습니다(요약 시트 참고)."
    if data["is_baseline"]:
        return "기준선을 설정한 날입니다: 비교할 이전 적재가 없어 이벤트가 없습니다."
    return None


def labelled_events(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Event or field-change rows with the Korean columns the sheets show beside the codes."""
    out = []
    for row in rows:
        row = dict(row)
        row["watch"] = YES_NO.get(bool(row.get("on_watchlist")))
        row["event_label"] = label(EVENT_LABEL, row.get("event_type"))
        row["changed_fields_label"] = field_list_label(row.get("changed_fields"))
        row["watch_matches_label"] = watch_matches_label(row.get("watch_matches"))
        row["change_kind_label"] = label(CHANGE_KIND_LABEL, row.get("change_kind"))
        row["field_label"] = label(FIELD_LABEL, row.get("field_name"))
        if row.get("field_name"):
            row["change_text"] = describe_change(
                row["field_name"],
                row.get("change_detail"),
                row.get("before_value"),
                row.get("after_value"),
                row.get("removed_entries"),
                row.get("added_entries"),
            )
            row["change_code"] = f"{row['field_name']}/{row.get('change_detail') or '-'}"
        out.append(row)
    return out


def write_event_sheet(ws: Worksheet, f: Formats, title: str, rows: list[dict], data: dict) -> None:
    """The NEW sheet (with the reinstatements) or the WITHDRAWN sheet."""
    top = write_sheet_title(ws, f, title, status_note(data))
    back_link(ws, f, 3, DASHBOARD)
    write_table(ws, f, top, EVENT_COLS, labelled_events(rows), source="marts.dmf_events")


def write_changed_sheet(ws: Worksheet, f: Formats, rows: list[dict], data: dict) -> None:
    top = write_sheet_title(
        ws,
        f,
        "등록 변경 (CHANGED) — 변경된 항목마다 한 행",
        status_note(data) or "같은 등록의 여러 항목이 바뀌면 항목 수만큼 행이 있습니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    write_table(ws, f, top, CHANGED_COLS, labelled_events(rows), source="marts.dmf_event_field_changes")
