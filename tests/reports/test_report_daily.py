"""The daily xlsx report, read back with openpyxl from a real DuckDB warehouse."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import duckdb
import openpyxl
import pytest

from dmf_watch.core.config import Settings
from dmf_watch.reports import daily_report as daily
from dmf_watch.reports.daily_report import render_daily
from support.report_warehouse import (
    AI_HEADLINE,
    AT_INGREDIENT,
    FORMULA_MANUFACTURER,
    MINUS_COMMENT,
    PLUS_PLACE,
    Scenario,
    build_warehouse,
)
from support.xlsx import EVENT_HEADER_ROW, table


@pytest.fixture
def warehouse(tmp_settings: Settings) -> tuple[Settings, Scenario]:
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    return tmp_settings, build_warehouse(tmp_settings.duckdb_path)


@pytest.fixture
def bare_warehouse(tmp_settings: Settings) -> tuple[Settings, Scenario]:
    """AI never ran: no enrichment schema at all."""
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    return tmp_settings, build_warehouse(tmp_settings.duckdb_path, enrichment=False)


def sql_one(settings: Settings, sql: str, params: list) -> object:
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        return con.execute(sql, params).fetchone()[0]


def dashboard_counts(ws) -> dict[str, object]:
    """Label in column A → value in column B, for the dashboard's count rows."""
    return {row[0].value: row[1].value for row in ws.iter_rows(max_col=2) if row[0].value}


def all_cells(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            yield from row


def test_daily_report_has_the_korean_sheets(warehouse):
    settings, s = warehouse
    path = render_daily(settings, s.rich_day)
    assert path == settings.reports_dir / "dmf_daily_20261120.xlsx"
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == list(daily.SHEETS)
    assert wb[daily.TREND_DATA].sheet_state == "hidden"


def test_dashboard_counts_equal_the_sql_counts(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    counts = dashboard_counts(wb[daily.DASHBOARD])
    count = "select count(*) from marts.dmf_events where as_of_date = ? "
    assert counts["신규 (NEW)"] == sql_one(settings, count + "and event_type = 'NEW'", [s.rich_day])
    assert counts["변경 (CHANGED)"] == sql_one(settings, count + "and event_type = 'CHANGED'", [s.rich_day])
    assert counts["취하 (WITHDRAWN)"] == sql_one(settings, count + "and event_type = 'WITHDRAWN'", [s.rich_day])
    assert counts["긴급 (CRITICAL)"] == sql_one(settings, count + "and severity = 'CRITICAL'", [s.rich_day])
    assert counts["관심목록 해당"] == sql_one(settings, count + "and on_watchlist", [s.rich_day])
    assert counts["무결성 신호 발생"] == sql_one(
        settings, "select count(*) from marts.dmf_signals where as_of_date = ? and fired", [s.rich_day]
    )
    assert counts["등록 현황(건)"] == sql_one(
        settings, "select registry_count from marts.dmf_daily_summary where as_of_date = ?", [s.rich_day]
    )
    assert all(isinstance(counts[k], int) for k in ("신규 (NEW)", "변경 (CHANGED)", "취하 (WITHDRAWN)"))


def test_one_row_per_event_and_per_field_change(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    for sheet, event_type in ((daily.NEW, "NEW"), (daily.WITHDRAWN, "WITHDRAWN")):
        expected = sql_one(
            settings,
            "select count(*) from marts.dmf_events where as_of_date = ? and event_type = ?",
            [s.rich_day, event_type],
        )
        assert len(table(wb[sheet])) == expected > 0
    changes = sql_one(settings, "select count(*) from marts.dmf_event_field_changes where as_of_date = ?", [s.rich_day])
    rows = table(wb[daily.CHANGED])
    assert len(rows) == changes == 5
    fields = {(r["변경 항목"].value, r["변경 전"].value, r["변경 후"].value) for r in rows}
    assert ("제조소명", "Inke, S.A(Grupo vita)", "Zhejiang Huahai Pharmaceutical co., ltd") in fields
    assert {r["변경 종류"].value for r in rows} == {"실질 변경", "표기 변경"}
    watch = sql_one(
        settings, "select count(*) from marts.dmf_events where as_of_date = ? and on_watchlist", [s.rich_day]
    )
    assert len(table(wb[daily.WATCHLIST])) == watch


def test_severities_dates_and_numbers_are_typed(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    withdrawn = table(wb[daily.WITHDRAWN])
    assert [r["중요도"].value for r in withdrawn] == ["긴급", "높음"]  # Korean, ordered by severity
    critical = withdrawn[0]["중요도"]
    assert critical.fill.fgColor.rgb.endswith("FFC7CE")
    date_cell = withdrawn[0]["등록일자"]
    assert date_cell.is_date and isinstance(date_cell.value, datetime)
    assert date_cell.number_format == "yyyy-mm-dd"
    ops = wb[daily.OPERATIONS]
    headers = [c.value for c in ops[EVENT_HEADER_ROW]]
    first = {h: c for h, c in zip(headers, ops[EVENT_HEADER_ROW + 1])}
    assert first["API 총건수"].data_type == "n" and isinstance(first["API 총건수"].value, int)
    assert first["시작(KST)"].is_date
    assert first["시작(KST)"].value == datetime(2026, 11, 20, 9, 30)  # 00:30 UTC shown in KST
    signals = wb[daily.SIGNALS]
    headers = [c.value for c in signals[EVENT_HEADER_ROW]]
    fired = {h: c for h, c in zip(headers, signals[EVENT_HEADER_ROW + 1])}
    assert fired["신호"].value == "취하 폭증" and fired["신호 ID"].value == "withdrawn_burst"
    assert fired["발생"].value == "발생"
    assert fired["관측값"].data_type == "n"
    assert "209-J" in fired["상위 등록그룹"].value
    assert fired["AI 가설 (AI 생성·참고용)"].value.startswith("같은 등록그룹")


def test_hostile_text_comes_back_as_plain_strings(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    new = {r["성분명"].value: r for r in table(wb[daily.NEW])}
    hostile = new["'" + AT_INGREDIENT]
    assert hostile["제조소명"].value == "'" + FORMULA_MANUFACTURER
    assert hostile["제조소 소재지"].value == "'" + PLUS_PLACE
    assert hostile["AI 코멘트 (AI 생성·참고용)"].value == "'" + MINUS_COMMENT
    for cell in (hostile["성분명"], hostile["제조소명"], hostile["제조소 소재지"]):
        assert cell.data_type == "s"
    texts = [c.value for c in all_cells(wb) if isinstance(c.value, str)]
    assert "'" + AI_HEADLINE in texts
    assert not [c for c in all_cells(wb) if c.data_type == "f"]
    assert not [t for t in texts if t[:1] in ("=", "+", "-", "@", "\t", "\r")]
    for ws in wb.worksheets:  # no external link survived anywhere
        assert not [h for h in ws._hyperlinks if h.target]


def test_ai_comment_column_stays_when_ai_never_ran(bare_warehouse):
    settings, s = bare_warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    rows = table(wb[daily.NEW])
    assert rows and all(r["AI 코멘트 (AI 생성·참고용)"].value is None for r in rows)
    texts = [c.value for c in all_cells(wb) if isinstance(c.value, str)]
    assert any("AI 실행 기록 없음" in t for t in texts)
    assert wb.sheetnames == list(daily.SHEETS)


@pytest.mark.parametrize(
    "day_attr, badge",
    [
        ("quiet_day", "변경 없음(호출 생략)"),
        ("last_day", "재로그인 필요"),
    ],
)
def test_skip_reason_badge_replaces_the_briefing(warehouse, day_attr, badge):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, getattr(s, day_attr)))
    texts = [c.value for c in wb[daily.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    assert any(badge in t for t in texts)


def test_briefing_uses_the_latest_run_and_is_marked_as_ai(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.rich_day))
    texts = [c.value for c in wb[daily.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    assert "'" + AI_HEADLINE in texts
    assert any(t.startswith("AI 브리핑") and "AI 생성" in t for t in texts)
    assert not any("시간 초과" in t for t in texts)  # the earlier, failed run is not shown
    assert any("7일 넘게 대기" in t for t in texts)  # the overdue proposal badge
    proposals = table(wb[daily.PROPOSALS])
    assert [r["제안 ID"].value for r in proposals] == ["p-old", "p-new"]
    assert proposals[0]["7일 초과"].value == "7일 초과" and proposals[0]["경과 일수"].value == 10


def test_rejected_day_says_why_and_lists_no_events(warehouse):
    settings, s = warehouse
    previous = render_daily(settings, s.quiet_day)
    before = previous.read_bytes()
    wb = openpyxl.load_workbook(render_daily(settings, s.rejected_day))
    dash = wb[daily.DASHBOARD]
    texts = [c.value for c in dash._cells.values() if isinstance(c.value, str)]
    assert any(t.startswith("적재 거부") for t in texts)
    assert "총건수 급감 (total_count_drop)" in texts  # Korean name, the id kept for filters
    assert any("API totalCount" in t for t in texts)  # what to check
    numbers = [c.value for c in dash._cells.values() if isinstance(c.value, (int, float))]
    observed, baseline = (
        sql_one(
            settings,
            f"select {col} from marts.dmf_signals where as_of_date = ? and fired and is_gate",
            [s.rejected_day],
        )
        for col in ("observed", "baseline")
    )
    assert observed in numbers and baseline in numbers
    assert dashboard_counts(dash)["신규 (NEW)"] == "미발행"
    for sheet in (daily.NEW, daily.CHANGED, daily.WITHDRAWN, daily.WATCHLIST):
        assert table(wb[sheet]) == []
    assert previous.read_bytes() == before


def test_baseline_day_says_the_baseline_was_set(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.baseline_day))
    dash = wb[daily.DASHBOARD]
    texts = [c.value for c in dash._cells.values() if isinstance(c.value, str)]
    registry = sql_one(
        settings, "select registry_count from marts.dmf_daily_summary where as_of_date = ?", [s.baseline_day]
    )
    assert any(t.startswith("기준선 설정") and f"{registry:,}건" in t for t in texts)
    assert dashboard_counts(dash)["등록 현황(건)"] == registry
    assert table(wb[daily.NEW]) == []


def test_day_without_a_load_still_renders(warehouse):
    settings, s = warehouse
    wb = openpyxl.load_workbook(render_daily(settings, s.no_load_day))
    texts = [c.value for c in wb[daily.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    assert any("적재 기록이 없습니다" in t for t in texts)


def test_rendering_twice_gives_identical_bytes(warehouse):
    settings, s = warehouse
    first = hashlib.sha256(render_daily(settings, s.rich_day).read_bytes()).hexdigest()
    second = hashlib.sha256(render_daily(settings, s.rich_day).read_bytes()).hexdigest()
    assert first == second
    props = openpyxl.load_workbook(settings.reports_dir / "dmf_daily_20261120.xlsx").properties
    assert props.created == datetime(2026, 11, 20)


def test_report_opens_the_warehouse_read_only(warehouse):
    settings, s = warehouse
    with duckdb.connect(str(settings.duckdb_path), read_only=True):
        render_daily(settings, s.rich_day)  # a concurrent reader does not block it
    assert not list(Path(settings.reports_dir).glob("*.tmp"))


def test_a_ratio_gate_on_a_rejected_day_shows_its_decimals_and_a_count_gate_stays_whole(warehouse):
    settings, s = warehouse
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute(
            "update marts.dmf_signals set fired = (signal_id = 'all_changed'), "
            "observed = case when signal_id = 'all_changed' then 0.9964 else observed end "
            "where as_of_date = ? and is_gate",
            [s.rejected_day],
        )
        con.execute("update marts.dmf_loads set rejected_gates = 'all_changed' where as_of_date = ?", [s.rejected_day])
    dash = openpyxl.load_workbook(render_daily(settings, s.rejected_day))[daily.DASHBOARD]
    cells = {c.value: c for c in dash._cells.values() if isinstance(c.value, float)}
    # 0.9964 against 0.3 must not print as "1" against "0"
    assert "." in cells[0.9964].number_format and "." in cells[0.3].number_format
    count_dash = openpyxl.load_workbook(render_daily(*_count_gate_day(settings, s)))[daily.DASHBOARD]
    counts = [c for c in count_dash._cells.values() if c.value in (8012, 8012.0, 9168, 9168.0)]
    assert counts and all(c.number_format == "#,##0" for c in counts)


def _count_gate_day(settings: Settings, s: Scenario) -> tuple[Settings, object]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute(
            "update marts.dmf_signals set fired = (signal_id = 'total_count_drop'), "
            "observed = case when signal_id = 'total_count_drop' then 8012.0 else observed end "
            "where as_of_date = ? and is_gate",
            [s.rejected_day],
        )
        con.execute(
            "update marts.dmf_loads set rejected_gates = 'total_count_drop' where as_of_date = ?", [s.rejected_day]
        )
    return settings, s.rejected_day


def _has_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


def test_every_signal_of_the_catalog_has_a_korean_name_in_the_report(warehouse):
    import csv

    settings, s = warehouse
    catalog = Path(__file__).resolve().parents[2] / "seeds" / "signal_catalog.csv"
    ids = [row["signal_id"] for row in csv.DictReader(catalog.open(encoding="utf-8"))]
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute(
            "update marts.dmf_loads set rejected_gates = 'withdrawn_share' where as_of_date = ?", [s.rejected_day]
        )
        con.executemany(
            "insert into marts.dmf_signals (as_of_date, load_id, signal_id, is_gate, fired, severity, observed,"
            " baseline) select as_of_date, load_id, ?, false, false, 'INFO', 0, 0 from marts.dmf_loads "
            "where as_of_date = ? and not exists (select 1 from marts.dmf_signals x where x.signal_id = ? "
            "and x.as_of_date = ?)",
            [[i, s.rejected_day, i, s.rejected_day] for i in ids],
        )
    wb = openpyxl.load_workbook(render_daily(settings, s.rejected_day))
    texts = [c.value for c in wb[daily.DASHBOARD]._cells.values() if isinstance(c.value, str)]
    reason = next(t for t in texts if t.startswith("무결성 게이트가 거부: "))
    assert _has_hangul(reason.removeprefix("무결성 게이트가 거부: ")), reason
    sheet = wb[daily.SIGNALS]
    header = [c.value for c in sheet[EVENT_HEADER_ROW]]
    name_col, id_col = header.index("신호"), header.index("신호 ID")
    shown = {
        row[id_col].value: row[name_col].value
        for row in sheet.iter_rows(min_row=EVENT_HEADER_ROW + 1)
        if row[id_col].value
    }
    assert set(ids) <= set(shown)
    assert [i for i in ids if not _has_hangul(shown[i] or "")] == []
