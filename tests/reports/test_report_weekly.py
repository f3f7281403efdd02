"""The weekly xlsx report: every number equals a SQL count over the marts."""

from __future__ import annotations

import hashlib

import duckdb
import openpyxl
import pytest

from dmf_watch.core.config import Settings
from dmf_watch.reports import weekly_report as weekly
from dmf_watch.reports.weekly_report import render_weekly
from support.report_warehouse import Scenario, build_warehouse

HEADER_ROW = 4


@pytest.fixture
def warehouse(tmp_settings: Settings) -> tuple[Settings, Scenario]:
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    return tmp_settings, build_warehouse(tmp_settings.duckdb_path)


def sql(settings: Settings, query: str, params: list) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        return con.execute(query, params).fetchall()


def table(ws, header_row: int = HEADER_ROW) -> list[dict]:
    headers = [c.value for c in ws[header_row]]
    rows = []
    for cells in ws.iter_rows(min_row=header_row + 1):
        if all(c.value is None for c in cells):
            break
        if cells[0].value in ("해당 없음",):
            continue
        rows.append({h: c.value for h, c in zip(headers, cells) if h})
    return rows


def totals(ws) -> dict[str, dict]:
    """The dashboard's totals table (header row 8: 지표 | 이번 주 | 지난 주 | …)."""
    return {row["지표"]: row for row in table(ws, header_row=8)}


def test_weekly_report_sheets_and_period(warehouse):
    settings, s = warehouse
    path = render_weekly(settings, s.weekly_day)
    assert path.name == "dmf_weekly_20261123.xlsx"
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == list(weekly.SHEETS)
    dash = wb[weekly.DASHBOARD]
    assert dash["B4"].value.date().isoformat() == "2026-11-16"
    assert dash["B5"].value.date().isoformat() == "2026-11-22"


def test_weekly_totals_equal_sql_counts_over_the_events(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_weekly(settings, s.weekly_day))
    got = totals(wb[weekly.DASHBOARD])
    window = (
        "select count(*) from marts.dmf_events where event_type = ? and as_of_date "
        "between cast(? as date) - {0} and cast(? as date) - {1}"
    )
    for label, event_type in (("신규 (NEW)", "NEW"), ("변경 (CHANGED)", "CHANGED"), ("취하 (WITHDRAWN)", "WITHDRAWN")):
        this_week = sql(settings, window.format(7, 1), [event_type, s.weekly_day, s.weekly_day])[0][0]
        last_week = sql(settings, window.format(14, 8), [event_type, s.weekly_day, s.weekly_day])[0][0]
        assert got[label]["이번 주"] == this_week
        assert got[label]["지난 주"] == last_week
        assert got[label]["증감"] == this_week - last_week
    median = sql(
        settings,
        """
        select median(new_count) from marts.dmf_daily_summary
        where verdict = 'accepted' and not is_baseline
          and as_of_date between cast(? as date) - 30 and cast(? as date) - 1
    """,
        [s.weekly_day, s.weekly_day],
    )[0][0]
    assert got["신규 (NEW)"]["최근 30일 일별 중앙값"] == pytest.approx(median)
    assert got["거부된 적재일"]["이번 주"] == 0 and got["거부된 적재일"]["지난 주"] == 1


def test_weekly_rankings_withdrawals_and_single_source(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_weekly(settings, s.weekly_day))
    applicants = table(wb[weekly.APPLICANTS])
    assert [r["순위"] for r in applicants] == list(range(1, len(applicants) + 1))
    assert sum(r["신규 건수"] for r in applicants) == totals(wb[weekly.DASHBOARD])["신규 (NEW)"]["이번 주"]
    countries = {r["제조국"]: r["신규 건수"] for r in table(wb[weekly.COUNTRIES])}
    assert countries["중국"] >= 1  # "중국,중국" counted once per registration
    withdrawn = table(wb[weekly.WITHDRAWALS])
    assert (
        len(withdrawn)
        == sql(
            settings,
            "select count(*) from marts.dmf_events where event_type = 'WITHDRAWN' and as_of_date between ? and ?",
            [s.weekly_day.replace(day=16), s.weekly_day.replace(day=22)],
        )[0][0]
    )
    single = {r["성분명"]: r for r in table(wb[weekly.SINGLE_SOURCE])}
    assert "트리메부틴말레산염" in single and single["트리메부틴말레산염"]["현재 제조소 수"] == 1
    assert "에날라프릴말레산염" not in single  # three manufacturers registered
    groups = {r["등록그룹"] for r in table(wb[weekly.GROUPS])}
    assert "209-J" in groups


def test_weekly_commentary_is_ai_marked_and_quarantined(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_weekly(settings, s.weekly_day))
    texts = [c.value for c in wb[weekly.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    assert "'=이번 주 요약" in texts
    assert any(t.startswith("AI 주간 코멘터리") for t in texts)
    assert not [c for ws in wb.worksheets for row in ws.iter_rows() for c in row if c.data_type == "f"]


def test_weekly_without_ai_shows_a_badge_and_is_reproducible(tmp_settings):
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    s = build_warehouse(tmp_settings.duckdb_path, enrichment=False)
    first = render_weekly(tmp_settings, s.weekly_day).read_bytes()
    second = render_weekly(tmp_settings, s.weekly_day).read_bytes()
    assert hashlib.sha256(first).digest() == hashlib.sha256(second).digest()
    wb = openpyxl.load_workbook(tmp_settings.reports_dir / "dmf_weekly_20261123.xlsx")
    texts = [c.value for c in wb[weekly.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    assert any("AI 코멘터리 없음" in t for t in texts)
