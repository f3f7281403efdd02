"""The weekly xlsx report (normally rendered on Monday for the 7 days before it).

Every number is a column of a `rpt_weekly_*` dbt model or a row of the marts; the AI weekly
commentary (enrichment_run kind='weekly') is shown only as marked AI text, with a badge when
there is none. Like the daily report it reads only the warehouse and is byte-reproducible.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.reports import queries as q
from dmf_watch.reports.actions import Action, week_actions
from dmf_watch.reports.layout import (
    NO_WEEKLY_RUN_BADGE,
    SEVERITY_LABEL,
    YES_NO,
    Col,
    Formats,
    ai_reader_badge,
    back_link,
    merged_text,
    one_page,
    plain_markdown,
    print_setup,
    text_lines,
    workbook,
    write_sheet_title,
    write_table,
    write_truncation_note,
    write_value,
)
from dmf_watch.reports.sheets.action_items import action_subject, action_tag
from dmf_watch.reports.sheets.events import EVENT_COLS, labelled_events
from dmf_watch.reports.sheets.operations import write_operations

DASHBOARD = "주간요약"
APPLICANTS = "신규_신청인"
COUNTRIES = "신규_국가"
GROUPS = "등록그룹"
WITHDRAWALS = "취하상세"
WATCHLIST = "관심목록활동"
SINGLE_SOURCE = "단일제조소"
OPERATIONS = "운영"
#: Who follows each watched event and why its severity matters, beside the event's columns.
WATCH_EXTRA_COLS = [Col("담당", "watch_owners", "text", 10), Col("사유", "rationale_ko", "wrap", 36)]
SHEETS = (DASHBOARD, APPLICANTS, COUNTRIES, GROUPS, WITHDRAWALS, WATCHLIST, SINGLE_SOURCE, OPERATIONS)
TOP = 20

METRIC_LABEL = {
    "new_count": "신규 (NEW)",
    "changed_count": "변경 (CHANGED)",
    "withdrawn_count": "취하 (WITHDRAWN)",
    "event_count": "전체 이벤트",
    "critical_count": "긴급 (CRITICAL)",
    "high_count": "높음 (HIGH)",
    "watchlist_hit_count": "관심목록 해당",
    "fired_signal_count": "무결성 신호 발생",
    "accepted_load_days": "반영된 적재일",
    "rejected_load_days": "거부된 적재일",
}


def report_path(reports_dir: Path, as_of: date) -> Path:
    return Path(reports_dir) / f"dmf_weekly_{as_of:%Y%m%d}.xlsx"


def render_weekly(settings: Settings, as_of: date) -> Path:
    """Render the weekly report for the 7 days before `as_of` and return its path."""
    path = report_path(settings.reports_dir, as_of)
    with warehouse.connect(settings, read_only=True) as con:
        data = _collect(con, as_of)
    with workbook(path, as_of, f"DMF 주간 리포트 {as_of:%Y-%m-%d}") as wb:
        _write(wb, as_of, data)
    return path


def _collect(con: warehouse.Connection, as_of: date) -> dict[str, Any]:
    tables = q.Tables.probe(con)
    bounds = q.week_bounds(con, as_of)
    return {
        "tables": tables,
        "bounds": bounds,
        "totals": q.weekly_totals(con, as_of),
        "applicants": q.weekly_ranked(con, "rpt_weekly_new_applicants", "applicant_rank", as_of, TOP),
        "countries": q.weekly_ranked(con, "rpt_weekly_new_countries", "country_rank", as_of, TOP),
        "groups": q.weekly_ranked(con, "rpt_weekly_registration_groups", "group_rank", as_of, TOP),
        "single_source": q.weekly_single_source(con, as_of),
        "withdrawn": q.weekly_events(con, tables, as_of, event_type="WITHDRAWN"),
        "watch": q.weekly_events(con, tables, as_of, watchlist_only=True),
        "actions": _week_actions(con, bounds["period_start"], bounds["period_end"]),
        "loads": q.week_loads(con, as_of),
        "ai_calls": q.ai_calls(con, tables, bounds["period_start"], bounds["period_end"]),
        "ai_totals": q.ai_call_totals(con, tables, bounds["period_start"], bounds["period_end"]),
        "ai_run": q.ai_run(con, tables, as_of, "weekly"),
    }


APPLICANT_COLS = [
    Col("순위", "applicant_rank", "int", 6),
    Col("신청인", "applicant", "text", 30),
    Col("신규 건수", "new_count", "int", 10),
    Col("성분 수", "ingredient_count", "int", 9),
]
COUNTRY_COLS = [
    Col("순위", "country_rank", "int", 6),
    Col("제조국", "country", "text", 20),
    Col("신규 건수", "new_count", "int", 10),
]
GROUP_COLS = [
    Col("순위", "group_rank", "int", 6),
    Col("등록그룹", "registration_group", "text", 16),
    Col("전체", "event_count", "int", 8),
    Col("신규", "new_count", "int", 8),
    Col("변경", "changed_count", "int", 8),
    Col("취하", "withdrawn_count", "int", 8),
]
#: The daily event columns after the day each event happened on.
WEEK_EVENT_COLS = [Col("기준일", "as_of_date", "date", 11)] + EVENT_COLS
WEEK_WATCH_COLS = [Col("기준일", "as_of_date", "date", 11)] + EVENT_COLS[:2] + WATCH_EXTRA_COLS + EVENT_COLS[2:]
SINGLE_SOURCE_COLS = [
    Col("중요도", "top_severity", "severity", 11),
    Col("성분명", "ingredient_name", "text", 28),
    Col("현재 제조소 수", "manufacturer_count", "int", 10),
    Col("현재 등록 수", "registration_count", "int", 10),
    Col("제조소명", "manufacturer", "text", 32),
    Col("이벤트", "event_count", "int", 8),
    Col("신규", "new_count", "int", 7),
    Col("변경", "changed_count", "int", 7),
    Col("취하", "withdrawn_count", "int", 7),
    Col("마지막 이벤트일", "last_event_date", "date", 12),
    Col("관심목록", "watch", "text", 8),
]


def _write(wb: Workbook, as_of: date, data: dict[str, Any]) -> None:
    f = Formats(wb)
    sheets = {name: wb.add_worksheet(name) for name in SHEETS}
    for ws in sheets.values():
        ws.hide_gridlines(2)
        print_setup(ws)
    one_page(sheets[DASHBOARD])
    _dashboard(sheets[DASHBOARD], f, as_of, data)
    _ranked(sheets[APPLICANTS], f, "신규 등록 상위 신청인", APPLICANT_COLS, data["applicants"])
    _ranked(sheets[COUNTRIES], f, "신규 등록 상위 제조국", COUNTRY_COLS, data["countries"])
    _ranked(sheets[GROUPS], f, "이벤트가 많은 등록그룹 (등록번호의 '일련-알파벳' 구간)", GROUP_COLS, data["groups"])
    _ranked(sheets[WITHDRAWALS], f, "이번 주 취하 상세", WEEK_EVENT_COLS, labelled_events(data["withdrawn"]))
    _ranked(sheets[WATCHLIST], f, "이번 주 관심목록 활동", WEEK_WATCH_COLS, labelled_events(data["watch"]))
    single_rows = [dict(row, watch=YES_NO[bool(row.get("on_watchlist"))]) for row in data["single_source"]]
    _ranked(
        sheets[SINGLE_SOURCE],
        f,
        "제조소가 하나뿐인 성분 중 이번 주 변동이 있는 성분 (대체 공급처 없음)",
        SINGLE_SOURCE_COLS,
        single_rows,
        note="제조소 수는 현재 등록 현황(마지막 반영 적재) 기준입니다.",
    )
    write_operations(
        sheets[OPERATIONS],
        f,
        "운영 — 이번 주 적재와 AI 사용량",
        data["loads"],
        data["ai_calls"],
        data["ai_totals"],
        data["tables"].agy_calls,
        DASHBOARD,
    )
    write_truncation_note(sheets[OPERATIONS], f)
    sheets[DASHBOARD].activate()


def _ranked(ws: Worksheet, f: Formats, title: str, cols: list[Col], rows: list[dict], note: str | None = None) -> None:
    top = write_sheet_title(ws, f, title, note)
    back_link(ws, f, 4, DASHBOARD)
    write_table(ws, f, top, cols, rows)


NO_DATA = "데이터 없음"
TOTAL_COLS = [
    Col("지표", "metric_label", "text", 22),
    Col("이번 주", "this_week", "int_or_text", 11),
    Col("지난 주", "previous_week", "int_or_text", 11),
    Col("증감", "week_over_week_change", "signed_or_text", 11),
    Col("이번 주 일평균", "this_week_daily_avg", "float", 12),
    Col("최근 30일 일별 중앙값", "median_30d_daily", "float", 14),
    Col("집계 일수", "this_week_days", "int", 9),
]


def _dashboard(ws: Worksheet, f: Formats, as_of: date, data: dict) -> None:
    bounds = data["bounds"]
    ws.write_string(0, 0, f"DMF 주간 리포트  {as_of:%Y-%m-%d}", f.title)
    ws.set_row(0, 26)
    ws.write_string(
        1, 0, "지난 7일 동안의 식약처 DMF 목록 변동. 모든 숫자는 dbt 모델(rpt_weekly_*)의 SQL 집계입니다.", f.subtitle
    )
    ws.write_string(3, 0, "기간 시작", f.key)
    write_value(ws, 3, 1, bounds["period_start"], "date", f, f.value_date)
    ws.write_string(4, 0, "기간 끝", f.key)
    write_value(ws, 4, 1, bounds["period_end"], "date", f, f.value_date)
    rows = []
    for row in data["totals"]:
        row = dict(row)
        row["metric_label"] = METRIC_LABEL.get(row["metric"], row["metric"])
        if row.get("previous_week") is None:  # no load that week: not a growth from zero
            row["previous_week"] = row["week_over_week_change"] = NO_DATA
        if not row.get("this_week_days"):
            row["this_week"] = row["week_over_week_change"] = NO_DATA
        rows.append(row)
    ws.write_string(6, 0, "주간 합계와 비교", f.section)
    r = write_table(ws, f, 7, TOTAL_COLS, rows, main=False, empty_text="이 기간의 집계가 없습니다(적재 기록 없음)")
    for c, col in enumerate(TOTAL_COLS):
        ws.set_column(c, c, col.width)
    r += 1
    r = _action_block(ws, f, r, data["actions"])
    r = _commentary(ws, f, r, data["ai_run"])
    ws.write_string(r, 0, "시트 바로가기", f.section)
    r += 1
    for name in SHEETS[1:]:
        ws.write_url(r, 0, f"internal:'{name}'!A1", f.link, string=name)
        r += 1


#: How many of the week's action items the first sheet lists before "외 N건".
DASHBOARD_ACTIONS = 15


def _week_actions(con: warehouse.Connection, first_day: date, last_day: date) -> list[tuple[date, Action]]:
    """The week's action items, most severe first, then by day (each day's order kept)."""
    rank = {severity: i for i, severity in enumerate(SEVERITY_LABEL)}
    return sorted(week_actions(con, first_day, last_day), key=lambda item: (rank.get(item[1].severity, 9), item[0]))


def _action_block(ws: Worksheet, f: Formats, r: int, actions: list[tuple[date, Action]]) -> int:
    """'이번 주 조치할 항목': the daily action lists of the week in one, the most severe first."""
    ws.write_string(r, 0, f"이번 주 조치할 항목 — 긴급·높음·관심목록, 표기 변경 제외 ({len(actions)}건)", f.section)
    r += 1
    if not actions:
        merged_text(
            ws, r, 0, r, 6, "조치할 항목 없음 — 이번 주 긴급·높음 이벤트와 관심목록 해당 이벤트가 없습니다.", f.ok
        )
        return r + 2
    for day, action in actions[:DASHBOARD_ACTIONS]:
        write_value(ws, r, 0, day, "date", f, f.value_date)
        ws.write_string(r, 1, action_tag(action), f.severity.get(action.severity, f.key))
        text = f"{action_subject(action)} — {action.what} (사유: {action.reason})"
        merged_text(ws, r, 2, r, 6, text, f.action)
        ws.set_row(r, 15 * text_lines(text, 70))
        r += 1
    more = len(actions) - DASHBOARD_ACTIONS
    if more > 0:
        merged_text(
            ws, r, 0, r, 6, f"외 {more}건 — 관심목록 항목은 {WATCHLIST} 시트, 취하는 {WITHDRAWALS} 시트에", f.note
        )
        r += 1
    return r + 1


def _commentary(ws: Worksheet, f: Formats, r: int, run: dict | None) -> int:
    merged_text(ws, r, 0, r, 6, "AI 주간 코멘터리 — AI 생성 문장(참고용). 숫자는 위 표가 기준입니다.", f.ai_title)
    r += 1
    text = plain_markdown((run or {}).get("commentary") or (run or {}).get("summary_md"))
    if run and run.get("status") == "OK" and text:
        if run.get("headline"):
            merged_text(ws, r, 0, r, 6, run.get("headline"), f.ai_head)
            ws.set_row(r, 30)
            r += 1
        lines = max(3, min(16, text.count("\n") + 1 + len(text) // 100))
        merged_text(ws, r, 0, r + lines - 1, 6, text, f.ai_body)
        r += lines
        ws.write_string(r, 0, "모델: " + (run.get("model") or "-"), f.subtitle)
        r += 1
    else:
        badge = (
            NO_WEEKLY_RUN_BADGE
            if run is None
            else ai_reader_badge(run.get("skip_reason"), run.get("status")).replace(
                "AI 요약 없음", "AI 코멘터리 없음", 1
            )
        )
        merged_text(ws, r, 0, r + 1, 6, badge, f.badge)
        r += 2
    return r + 1
