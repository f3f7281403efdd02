"""The day's action items (dmf_watch.reports.actions.day_actions) in the workbook: the first
lines on the dashboard, all of them on the action items sheet, each linked to its event's row.
The weekly dashboard words its lines with the same tag and subject."""

from __future__ import annotations

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.actions import Action
from dmf_watch.reports.layout import (
    EVENT_LABEL,
    SEVERITY_LABEL,
    Col,
    Formats,
    back_link,
    label,
    merged_text,
    text_lines,
    write_sheet_title,
    write_table,
)
from dmf_watch.reports.sheets import ACTIONS, CHANGED, DASHBOARD, NEW, WITHDRAWN
from dmf_watch.reports.sheets.events import status_note

#: How many action lines the dashboard shows before "외 N건" (the rest is on the ACTIONS sheet).
DASHBOARD_ACTIONS = 8
#: First table row (0-based) of every event sheet: write_sheet_title's table row + the header.
FIRST_DATA_ROW = 4
EVENT_SHEET = {"NEW": NEW, "REINSTATED": NEW, "CHANGED": CHANGED, "WITHDRAWN": WITHDRAWN}

ACTION_COLS = [
    Col("중요도", "tag", "text", 12),
    Col("성분명", "ingredient_name", "text", 24),
    Col("등록번호", "permit_no", "text", 22),
    Col("신청인", "applicant", "text", 22),
    Col("무엇이 바뀌었나", "what", "wrap", 60),
    Col("사유", "reason", "wrap", 40),
    Col("담당", "owners", "text", 10),
    Col("바로가기", "link_label", "text", 10),
    Col("구분", "event_type", "text", 10),
    Col("dmf_key", "dmf_key", "text", 18),
]
LINK_COL = next(i for i, col in enumerate(ACTION_COLS) if col.key == "link_label")


def action_tag(action: Action) -> str:
    return label(SEVERITY_LABEL, action.severity) + (" · 관심" if action.on_watchlist else "")


def action_subject(action: Action) -> str:
    """'암로디핀베실산염 · 20190801-211-J-399 · (주)삼오제약' — who the line is about."""
    return " · ".join(v for v in (action.ingredient_name, action.permit_no or "(등록번호 없음)", action.applicant) if v)


def _row_link(data: dict, action: Action) -> str | None:
    """`internal:'변경'!A7` — the event's first row on its sheet (the rows the sheets write, in
    the same order), or None when the event type has no sheet of its own."""
    sheet = EVENT_SHEET.get(action.event_type)
    rows = {NEW: data["new"], CHANGED: data["changes"], WITHDRAWN: data["withdrawn"]}.get(sheet)
    if not rows:
        return None
    for i, row in enumerate(rows):
        if row["dmf_key"] == action.dmf_key:
            return f"internal:'{sheet}'!A{FIRST_DATA_ROW + i + 1}"
    return None


def write_action_block(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    """'오늘 조치할 항목' on the dashboard: one line per CRITICAL/HIGH/watchlist event, most
    severe first, each linked to its row; the first DASHBOARD_ACTIONS, then '외 N건' linking to
    the full list. Returns the next free row."""
    actions: list[Action] = data["actions"]
    ws.write_string(r, 0, f"오늘 조치할 항목 — 긴급·높음·관심목록, 표기 변경 제외 ({len(actions)}건)", f.section)
    r += 1
    if data["verdict"] != "accepted":
        merged_text(ws, r, 0, r, 7, "오늘은 이벤트를 발행하지 않아 조치할 항목이 없습니다(위 적재 상태 참고).", f.badge)
        return r + 2
    if not actions:
        merged_text(ws, r, 0, r, 7, "조치할 항목 없음 — 긴급·높음 이벤트와 관심목록 해당 이벤트가 없습니다.", f.ok)
        return r + 2
    for action in actions[:DASHBOARD_ACTIONS]:
        ws.write_string(r, 0, action_tag(action), f.severity.get(action.severity, f.key))
        text = f"{action_subject(action)} — {action.what} (사유: {action.reason})"
        merged_text(ws, r, 1, r, 6, text, f.action)
        ws.set_row(r, 15 * text_lines(text, 100))
        link = _row_link(data, action)
        if link:
            ws.write_url(r, 7, link, f.link, string="행 보기 →")
        r += 1
    more = len(actions) - DASHBOARD_ACTIONS
    if more > 0:
        merged_text(ws, r, 0, r, 6, f"외 {more}건 — 전체 목록은 조치항목 시트에 있습니다", f.note)
        ws.write_url(r, 7, f"internal:'{ACTIONS}'!A1", f.link, string="조치항목 시트 →")
        r += 1
    return r + 1


def write_actions_sheet(ws: Worksheet, f: Formats, data: dict) -> None:
    actions: list[Action] = data["actions"]
    top = write_sheet_title(
        ws,
        f,
        "오늘 조치할 항목 — 긴급·높음 이벤트와 관심목록 해당 이벤트 전체(표기만 바뀐 변경은 변경 시트에)",
        status_note(data) or "중요도 순. '행 보기'는 신규·변경·취하 시트의 해당 행으로 갑니다.",
    )
    back_link(ws, f, 5, DASHBOARD)
    rows = [
        dict(
            tag=action_tag(a),
            ingredient_name=a.ingredient_name,
            permit_no=a.permit_no or "(등록번호 없음)",
            applicant=a.applicant,
            what=a.what,
            reason=a.reason,
            owners=", ".join(a.owners) or None,
            event_type=label(EVENT_LABEL, a.event_type),
            dmf_key=a.dmf_key,
        )
        for a in actions
    ]
    write_table(ws, f, top, ACTION_COLS, rows, empty_text="조치할 항목 없음")
    for i, action in enumerate(actions):
        row = top + 1 + i
        ws.write_string(row, 0, action_tag(action), f.severity.get(action.severity, f.text))
        link = _row_link(data, action)
        if link:
            ws.write_url(row, LINK_COL, link, f.link, string="행 보기 →")
        ws.set_row(row, 15 * max(text_lines(action.what, 60), text_lines(action.reason, 40)))
