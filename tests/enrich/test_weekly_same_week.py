"""The weekly AI comments on the week its workbook shows: the same seven days, the same totals
and rankings, read from the same rpt_weekly_* models (it once covered the week ending on the
report date itself, one day later than the workbook beside it)."""

from __future__ import annotations

import openpyxl

from dmf_watch.core import warehouse
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.weekly_briefing import weekly_payload
from dmf_watch.reports import weekly_report as weekly
from dmf_watch.reports.weekly_report import render_weekly
from support.report_warehouse import WEEKLY_DAY, build_warehouse

KINDS = {"new": "신규 (NEW)", "changed": "변경 (CHANGED)", "withdrawn": "취하 (WITHDRAWN)"}


def _table(ws, header_row: int) -> list[dict]:
    headers = [c.value for c in ws[header_row]]
    found = []
    for cells in ws.iter_rows(min_row=header_row + 1):
        if all(c.value is None for c in cells):
            break
        found.append({h: c.value for h, c in zip(headers, cells) if h})
    return found


def test_the_weekly_ai_reads_the_days_and_figures_of_the_workbook_it_appears_in(tmp_settings):
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    build_warehouse(tmp_settings.duckdb_path)
    book = openpyxl.load_workbook(render_weekly(tmp_settings, WEEKLY_DAY))
    with warehouse.connect(tmp_settings) as con:
        store.ensure_schema(con)  # as the AI step does before it reads
        payload = weekly_payload(con, WEEKLY_DAY)

    dashboard = book[weekly.DASHBOARD]
    shown = (dashboard["B4"].value.date().isoformat(), dashboard["B5"].value.date().isoformat())
    assert (payload["period"]["from"], payload["period"]["to"]) == shown == ("2026-11-16", "2026-11-22")

    totals = {row["지표"]: row for row in _table(dashboard, 8)}
    for kind, label in KINDS.items():
        assert payload["totals"][kind] == totals[label]["이번 주"], kind
        assert payload["totals"]["prev_week"][kind] == totals[label]["지난 주"], kind
    assert payload["period"]["days_with_accepted_load"] > 0

    applicants = [[row["신청인"], row["신규 건수"]] for row in _table(book[weekly.APPLICANTS], 4)][:5]
    assert payload["top_applicants_new"] == applicants
    groups = [row["등록그룹"] for row in _table(book[weekly.GROUPS], 4)][:5]
    assert [name for name, _ in payload["top_ingredient_groups"]] == groups
