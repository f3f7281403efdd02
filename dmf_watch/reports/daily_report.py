"""The daily xlsx report RA staff open every morning.

`render_daily(settings, as_of)` reads only the warehouse (marts, and the optional enrichment
tables) and writes `dmf_daily_YYYYMMDD.xlsx`. It never calls the API or `agy`, so any past day
can be re-rendered, and the same warehouse gives the same bytes. This module collects the day's
data and calls each sheet's writer in the workbook's order; the sheets are written by the
modules of `dmf_watch.reports.sheets`, which also names them.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from xlsxwriter.workbook import Workbook

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.reports import queries as q
from dmf_watch.reports.actions import day_actions
from dmf_watch.reports.history import timeline
from dmf_watch.reports.layout import AI_COMMENT_HEADER, Formats, one_page, print_setup, workbook, write_truncation_note
from dmf_watch.reports.sheets import (
    ACTIONS,
    CHANGED,
    DASHBOARD,
    HISTORY,
    NEW,
    OPERATIONS,
    PROPOSALS,
    SHEETS,
    SIGNALS,
    TREND_DATA,
    WATCHLIST,
    WITHDRAWN,
)
from dmf_watch.reports.sheets.action_items import write_actions_sheet
from dmf_watch.reports.sheets.dashboard import write_dashboard
from dmf_watch.reports.sheets.events import write_changed_sheet, write_event_sheet
from dmf_watch.reports.sheets.operations import write_daily_operations
from dmf_watch.reports.sheets.proposals import write_proposals
from dmf_watch.reports.sheets.signals import write_signals_sheet
from dmf_watch.reports.sheets.timelines import write_history_sheet
from dmf_watch.reports.sheets.watchlist import write_watchlist_sheet

# The sheet names and the AI column's header, for whoever reads the workbook back (the tests):
# the module that renders the workbook is where a reader looks for them.
__all__ = [
    "ACTIONS",
    "AI_COMMENT_HEADER",
    "CHANGED",
    "DASHBOARD",
    "HISTORY",
    "NEW",
    "OPERATIONS",
    "PROPOSALS",
    "SHEETS",
    "SIGNALS",
    "TREND_DATA",
    "WATCHLIST",
    "WITHDRAWN",
    "render_daily",
    "report_path",
]


def report_path(reports_dir: Path, as_of: date) -> Path:
    return Path(reports_dir) / f"dmf_daily_{as_of:%Y%m%d}.xlsx"


def render_daily(settings: Settings, as_of: date) -> Path:
    """Render the daily report for `as_of` from the warehouse and return its path."""
    path = report_path(settings.reports_dir, as_of)
    with warehouse.connect(settings, read_only=True) as con:
        data = _collect(con, as_of)
    with workbook(path, as_of, f"DMF 일일 리포트 {as_of:%Y-%m-%d}") as wb:
        _write(wb, as_of, data)
    return path


# --- data -------------------------------------------------------------------------------------


def _collect(con: warehouse.Connection, as_of: date) -> dict[str, Any]:
    """Every SELECT the report needs, run before any cell is written."""
    tables = q.Tables.probe(con)
    summary = q.day_summary(con, as_of)
    load = q.day_load(con, as_of)
    bounds = q.week_bounds(con, as_of)
    verdict = (summary or load or {}).get("verdict")
    load_id = (summary or load or {}).get("load_id")
    publishes = verdict == "accepted"
    data: dict[str, Any] = {
        "tables": tables,
        "summary": summary,
        "load": load,
        "verdict": verdict,
        "is_baseline": bool((summary or load or {}).get("is_baseline")),
        "trend": q.trend(con, as_of),
        "gates": q.gate_signals(con, load_id) if load_id and verdict == "rejected" else [],
        "signals": q.signals(con, tables, as_of, load_id) if load_id else [],
        "loads": q.loads(con, bounds["trend_start"], as_of),
        "ai_run": q.ai_run(con, tables, as_of, "daily"),
        "drift_run": q.ai_run(con, tables, as_of, "drift"),
        "ai_calls": q.ai_calls(con, tables, as_of, as_of),
        "ai_totals": q.ai_call_totals(con, tables, as_of, as_of),
        "alerts": q.notify_alerts(con, bounds["trend_start"], as_of),
        "deliveries": q.notify_deliveries(con, bounds["trend_start"], as_of),
        "proposals": q.pending_proposals(con, tables, as_of),
        "proposal_counts": q.pending_proposal_counts(con, tables, as_of),
        "unmatched": q.watchlist_unmatched(con, tables, as_of) if publishes else None,
    }
    # A rejected load publishes nothing: its events are not read even if some exist.
    # A registration back after a withdrawal is reported beside the new ones: both are
    # registrations present today that were not yesterday.
    data["new"] = q.events(con, tables, as_of, "NEW") + q.events(con, tables, as_of, "REINSTATED") if publishes else []
    data["withdrawn"] = q.events(con, tables, as_of, "WITHDRAWN") if publishes else []
    data["changes"] = q.field_changes(con, tables, as_of) if publishes else []
    data["watch"] = q.watchlist_events(con, tables, as_of) if publishes else []
    data["actions"] = day_actions(con, as_of) if publishes else []
    # Cut at as_of so that re-rendering an old day gives the same timelines.
    watched_keys = list(dict.fromkeys(row["dmf_key"] for row in data["watch"]))
    data["timelines"] = [timeline(con, key, as_of) for key in watched_keys]
    return data


# --- sheets -----------------------------------------------------------------------------------


def _write(wb: Workbook, as_of: date, data: dict[str, Any]) -> None:
    """Every sheet of the workbook. The history sheet comes before the watchlist sheet, whose
    links point at its blocks, and the truncation note last, once every cut cell is counted."""
    f = Formats(wb)
    sheets = {name: wb.add_worksheet(name) for name in SHEETS}
    for ws in sheets.values():
        ws.hide_gridlines(2)
        print_setup(ws)
    sheets[TREND_DATA].hide()
    one_page(sheets[DASHBOARD])
    write_dashboard(sheets[DASHBOARD], f, wb, as_of, data)
    write_actions_sheet(sheets[ACTIONS], f, data)
    write_event_sheet(
        sheets[NEW], f, "신규 등록 (NEW) · 재등장 (REINSTATED: 취하됐다가 다시 나타난 등록)", data["new"], data
    )
    write_changed_sheet(sheets[CHANGED], f, data["changes"], data)
    write_event_sheet(sheets[WITHDRAWN], f, "등록 취하 (WITHDRAWN) — 목록에서 사라진 등록", data["withdrawn"], data)
    timeline_rows = write_history_sheet(sheets[HISTORY], f, data["timelines"])
    write_watchlist_sheet(sheets[WATCHLIST], f, data, timeline_rows)
    write_signals_sheet(sheets[SIGNALS], f, data["signals"])
    write_daily_operations(sheets[OPERATIONS], f, data)
    write_proposals(sheets[PROPOSALS], f, data["proposals"])
    write_truncation_note(sheets[OPERATIONS], f)
    sheets[DASHBOARD].activate()
