"""The history sheet: one block per watchlist registration of the day, its timeline as
`dmf history` prints it (dmf_watch.reports.history.timeline), cut at the report's date."""

from __future__ import annotations

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.history import Timeline
from dmf_watch.reports.layout import Formats, back_link, merged_text, text_lines, write_sheet_title, write_value
from dmf_watch.reports.sheets import DASHBOARD

HISTORY_COLS = (("날짜", 11), ("구분", 10), ("중요도", 10), ("내용", 90))


def write_history_sheet(ws: Worksheet, f: Formats, timelines: list[Timeline]) -> dict[str, int]:
    """Returns dmf_key → the block's first row, for the watchlist sheet's links."""
    top = write_sheet_title(
        ws,
        f,
        "관심목록 등록의 이력 — 처음 확인 이후의 모든 이벤트와 변경",
        "dmf history --permit-no <등록번호> 가 같은 이력을 보여 줍니다. 이 날짜까지의 이력입니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    for c, (_caption, width) in enumerate(HISTORY_COLS):
        ws.set_column(c, c, width)
    rows: dict[str, int] = {}
    r = top
    if not timelines:
        ws.write_string(r, 0, "오늘 관심목록 해당 이벤트가 없습니다.", f.empty)
        return rows
    for item in timelines:
        rows[item.dmf_key] = r
        merged_text(
            ws, r, 0, r, 3, f"{item.title}   ({'현재 목록에 있음' if item.current else '목록에 없음'})", f.section
        )
        ws.set_row(r, 21)
        r += 1
        for c, (caption, _) in enumerate(HISTORY_COLS):
            ws.write_string(r, c, caption, f.header)
        r += 1
        for entry in item.entries:
            for n, line in enumerate(entry.lines):
                if n == 0:
                    write_value(ws, r, 0, entry.day, "date", f)
                    ws.write_string(r, 1, entry.label, f.text)
                    write_value(ws, r, 2, entry.severity, "severity", f)
                write_value(ws, r, 3, line, "wrap", f)
                if text_lines(line, 90) > 1:
                    ws.set_row(r, 15 * text_lines(line, 90))
                r += 1
        r += 1
    return rows
