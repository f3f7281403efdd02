"""The dashboard, the sheet the workbook opens on: the load's verdict, the action items, the day's
counts with their 30-day sparklines, the AI briefing marked as AI, a chart of the last 30 days and
links to every sheet. The hidden trend sheet holds the series the sparklines and the chart draw."""

from __future__ import annotations

from datetime import date

from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import FONT, Formats, ai_reader_badge, merged_text, plain_markdown, write_value
from dmf_watch.reports.sheets import ACTIONS, CHANGED, NEW, PROPOSALS, SHEETS, SIGNALS, TREND_DATA, WATCHLIST, WITHDRAWN
from dmf_watch.reports.sheets.action_items import write_action_block
from dmf_watch.reports.sheets.load_status import write_load_status

TREND_SERIES = [
    # (summary column, dashboard label, link target, severity style)
    ("new_count", "신규 (NEW)", NEW, None),
    ("changed_count", "변경 (CHANGED)", CHANGED, None),
    ("withdrawn_count", "취하 (WITHDRAWN)", WITHDRAWN, "HIGH"),
    ("critical_count", "긴급 (CRITICAL)", ACTIONS, "CRITICAL"),
    ("watchlist_hit_count", "관심목록 해당", WATCHLIST, None),
    ("fired_signal_count", "무결성 신호 발생", SIGNALS, None),
]
SEVERITY_COUNTS = [
    ("critical_count", "CRITICAL", "긴급"),
    ("high_count", "HIGH", "높음"),
    ("medium_count", "MEDIUM", "보통"),
    ("info_count", "INFO", "정보"),
    ("cosmetic_count", "COSMETIC", "표기"),
]


def write_dashboard(ws: Worksheet, f: Formats, wb: Workbook, as_of: date, data: dict) -> None:
    ws.set_column(0, 0, 24)
    ws.set_column(1, 1, 12)
    ws.set_column(2, 2, 30)
    ws.set_column(3, 3, 14)
    ws.set_column(4, 7, 16)
    ws.write_string(0, 0, f"DMF 일일 리포트  {as_of:%Y-%m-%d}", f.title)
    ws.set_row(0, 26)
    ws.write_string(
        1,
        0,
        "식약처 원료의약품 등록(DMF) 목록의 전일 대비 변동. 모든 숫자는 데이터 웨어하우스의 SQL 집계입니다.",
        f.subtitle,
    )
    r = write_load_status(ws, f, 3, as_of, data)
    r = write_action_block(ws, f, r, data)
    trend_rows = _write_trend_data(wb.get_worksheet_by_name(TREND_DATA), f, data["trend"])
    last_col = len(data["trend"])
    r = _write_counts(ws, f, r, data, trend_rows, last_col)
    r = _ai_block(ws, f, r, data)
    r = _proposal_badge(ws, f, r, data)
    r = _trend_chart(ws, wb, r, trend_rows, last_col)
    ws.write_string(r, 0, "시트 바로가기", f.section)
    r += 1
    for name in SHEETS[1:-1]:
        ws.write_url(r, 0, f"internal:'{name}'!A1", f.link, string=name)
        r += 1


def _write_trend_data(ws: Worksheet, f: Formats, trend: list[dict]) -> dict[str, int]:
    """The hidden series: row 0 = dates, one row per metric. Returns metric → row index."""
    ws.write_string(0, 0, "지표", f.header)
    for c, day in enumerate(trend, start=1):
        write_value(ws, 0, c, day["day"], "date", f)
    rows = {}
    for r, (key, caption, _, _) in enumerate(TREND_SERIES, start=1):
        ws.write_string(r, 0, caption, f.text)
        for c, day in enumerate(trend, start=1):
            write_value(ws, r, c, day.get(key), "int", f)
        rows[key] = r
    return rows


def _write_counts(ws: Worksheet, f: Formats, r: int, data: dict, trend_rows: dict[str, int], last_col: int) -> int:
    """'오늘의 변동': each count with its 30-day sparkline and a link to its sheet, the counts by
    severity beside them. Returns the next free row."""
    summary = data["summary"] or {}
    rejected = data["verdict"] == "rejected"  # a rejected load publishes no events: not "0"
    ws.write_string(r, 0, "오늘의 변동", f.section)
    r += 1
    for c, caption in enumerate(["구분", "건수", "최근 30일 추세", "바로가기"]):
        ws.write_string(r, c, caption, f.header)
    counts_top = r
    r += 1
    for key, caption, target, sev in TREND_SERIES:
        ws.write_string(r, 0, caption, f.count_label_sev[sev] if sev else f.count_label)
        if rejected and key != "fired_signal_count":
            ws.write_string(r, 1, "미발행", f.big_int)
        else:
            write_value(ws, r, 1, summary.get(key), "int", f, f.big_int)
        series_row = trend_rows[key] + 1
        ws.add_sparkline(
            r,
            2,
            {
                "range": f"'{TREND_DATA}'!{xl_col_to_name(1)}{series_row}:{xl_col_to_name(last_col)}{series_row}",
                "type": "column",
                "high_point": True,
                "series_color": "#1F3864",
                "high_color": "#C00000",
                "empty_cells": "zero",
            },
        )
        ws.write_url(r, 3, f"internal:'{target}'!A1", f.link, string=f"{target} 시트 →")
        ws.set_row(r, 22)
        r += 1
    ws.write_string(counts_top, 5, "중요도", f.header)
    ws.write_string(counts_top, 6, "건수", f.header)
    for i, (key, sev, caption) in enumerate(SEVERITY_COUNTS, start=1):
        ws.write_string(counts_top + i, 5, f"{caption} ({sev})", f.count_label_sev[sev])
        if rejected:
            ws.write_string(counts_top + i, 6, "미발행", f.big_int)
        else:
            write_value(ws, counts_top + i, 6, summary.get(key), "int", f, f.big_int)
    return r + 1


def _ai_block(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    run = data["ai_run"]
    merged_text(ws, r, 0, r, 7, "AI 브리핑 — AI 생성 문장(참고용). 사실·숫자·판정은 위 표가 기준입니다.", f.ai_title)
    r += 1
    if run and run.get("status") == "OK" and run.get("headline"):
        merged_text(ws, r, 0, r, 7, run.get("headline"), f.ai_head)
        ws.set_row(r, 36)
        r += 1
        summary = plain_markdown(run.get("summary_md")) or ""
        lines = max(2, min(14, summary.count("\n") + 1 + len(summary) // 110))
        merged_text(ws, r, 0, r + lines - 1, 7, summary, f.ai_body)
        r += lines
        if run.get("risk_note"):
            ws.write_string(r, 0, "위험 메모 (AI)", f.ai_label)
            merged_text(ws, r, 1, r + 1, 7, run.get("risk_note"), f.ai_body)
            r += 2
        ws.write_string(
            r, 0, "모델: " + (run.get("model") or "-") + "  ·  실행: " + (run.get("run_id") or "-"), f.subtitle
        )
        r += 1
    else:
        badge = ai_reader_badge(run.get("skip_reason") if run else None, run.get("status") if run else None)
        merged_text(ws, r, 0, r + 1, 7, badge, f.badge)
        ws.set_row(r, 18)
        ws.set_row(r + 1, 18)
        r += 2
    return r + 1


def _proposal_badge(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    counts = data["proposal_counts"]
    if not counts.get("pending"):
        return r
    text = f"AI 별칭 제안 {counts['pending']}건이 승인을 기다립니다"
    fmt = f.badge
    if counts.get("overdue"):
        text += f" — 그중 {counts['overdue']}건은 7일 넘게 대기 중"
        fmt = f.warn
    merged_text(ws, r, 0, r, 6, text, fmt)
    ws.write_url(r, 7, f"internal:'{PROPOSALS}'!A1", f.link, string="AI제안 시트 →")
    return r + 2


def _trend_chart(ws: Worksheet, wb: Workbook, r: int, trend_rows: dict[str, int], last_col: int) -> int:
    """A stacked column chart of the last 30 days (visible in viewers without sparklines)."""
    chart = wb.add_chart({"type": "column", "subtype": "stacked"})
    colours = {"new_count": "#2E75B6", "changed_count": "#F4B183", "withdrawn_count": "#C00000"}
    for key, caption, _, _ in TREND_SERIES[:3]:
        row = trend_rows[key]
        chart.add_series(
            {
                "name": caption,
                "categories": [TREND_DATA, 0, 1, 0, last_col],
                "values": [TREND_DATA, row, 1, row, last_col],
                "fill": {"color": colours[key]},
                "gap": 40,
            }
        )
    chart.set_title({"name": "최근 30일 이벤트", "name_font": {"size": 11, "name": FONT}})
    chart.set_x_axis({"date_axis": True, "num_format": "mm-dd", "num_font": {"size": 8}})
    chart.set_y_axis({"num_font": {"size": 8}, "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
    chart.set_legend({"position": "bottom", "font": {"name": FONT, "size": 9}})
    chart.show_hidden_data()
    chart.set_size({"width": 760, "height": 240})
    ws.insert_chart(r, 0, chart)
    return r + 13
