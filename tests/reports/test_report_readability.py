"""What a reader stumbles on, checked on the rendered xlsx read back with openpyxl: links that go
nowhere or hide a title, quiet signals painted as alarms, wrapped text in one-line rows, AI badges
that mean nothing to an RA reader, a weekly growth "from zero", a dashboard on several pages."""

from __future__ import annotations

from datetime import date

import duckdb
import openpyxl
import pytest

from dmf_watch.core.config import load_settings
from dmf_watch.reports import daily_report as daily
from dmf_watch.reports import weekly_report as weekly
from dmf_watch.reports.daily_report import render_daily
from dmf_watch.reports.layout import SEVERITY_COLOURS, text_lines
from dmf_watch.reports.sheets.signals import SIGNAL_COLS
from dmf_watch.reports.weekly_report import render_weekly
from support.report_warehouse import build_warehouse
from support.xlsx import latin_words, registry_words, resolve

EARLY_MONDAY = date(2026, 10, 26)  # its comparison week (10-12..10-18) is before the first load


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, openpyxl.Workbook]:
    root = tmp_path_factory.mktemp("readable")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    s = build_warehouse(settings.duckdb_path)
    paths = {
        "rich": render_daily(settings, s.rich_day),
        "rejected": render_daily(settings, s.rejected_day),
        "auth": render_daily(settings, s.last_day),
        "weekly": render_weekly(settings, s.weekly_day),
        "early_weekly": render_weekly(settings, EARLY_MONDAY),
    }
    return {name: openpyxl.load_workbook(path) for name, path in paths.items()}


@pytest.fixture(scope="module")
def warehouse_words(reports, tmp_path_factory) -> set[str]:
    """The registry's own Latin-script words (company, site and ingredient names as filed) and
    the watch terms: names, which stay as they are written."""
    path = next(tmp_path_factory.getbasetemp().glob("readable*/dmf.duckdb"))
    with duckdb.connect(str(path), read_only=True) as con:
        return registry_words(
            con,
            [
                "select ingredient_name, applicant, manufacturer, manufacture_place, watch_terms, notice_code "
                "from marts.dmf_events",
                "select before_value, after_value from marts.dmf_event_field_changes",
                "select watch_term from marts.dmf_watchlist_unmatched",
            ],
        )


def links(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.hyperlink is not None:
                    yield ws, cell


@pytest.mark.parametrize("name", ["rich", "rejected", "auth", "weekly", "early_weekly"])
def test_every_internal_link_lands_on_an_existing_sheet_and_none_covers_a_title(reports, name):
    wb = reports[name]
    found = list(links(wb))
    assert found
    for ws, cell in found:
        assert cell.hyperlink.location, (ws.title, cell.coordinate)
        resolve(wb, cell.hyperlink.location)  # KeyError for a sheet that does not exist
        assert cell.row != 1 or ws.title in (daily.DASHBOARD, weekly.DASHBOARD), (ws.title, cell.coordinate)


def test_signals_that_did_not_fire_are_not_painted_in_alarm_colours(reports):
    ws = reports["rich"][daily.SIGNALS]
    header = [c.value for c in ws[4]]
    alarm_fills = {bg.lstrip("#").upper() for _, bg in SEVERITY_COLOURS.values()}
    quiet = fired = 0
    for row in ws.iter_rows(min_row=5):
        values = dict(zip(header, row))
        if values["발생"].value is None:
            break
        fill = (values["중요도"].fill.fgColor.rgb or "")[-6:].upper()
        if values["발생"].value == "정상":
            quiet += 1
            assert fill not in alarm_fills, values["신호 ID"].value
        else:
            fired += 1
            assert fill in alarm_fills
    assert quiet and fired


def test_wrapped_text_gets_rows_tall_enough_to_show_it(reports):
    ws = reports["rich"][daily.SIGNALS]
    header = [c.value for c in ws[4]]
    col = header.index("설명과 확인할 것")
    width = SIGNAL_COLS[col].width
    checked = 0
    for row in ws.iter_rows(min_row=5):
        text = row[col].value
        if not text:
            break
        needed = text_lines(text, width)
        if needed > 1:
            checked += 1
            assert ws.row_dimensions[row[0].row].height >= 15 * needed
    assert checked


def test_a_missing_ai_text_tells_the_reader_the_facts_are_fine_and_who_acts(reports):
    ws = reports["auth"][daily.DASHBOARD]
    texts = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    badge = next(t for t in texts if t.startswith("AI 요약 없음"))
    assert "리포트의 사실·숫자는 모두 정상입니다" in badge and "담당자" in badge and "agy" in badge


def test_weekly_comparison_with_a_week_without_loads_says_no_data(reports):
    ws = reports["early_weekly"][weekly.DASHBOARD]
    header_row = next(c.row for c in ws["A"] if c.value == "지표")
    header = [c.value for c in ws[header_row]]
    rows = [dict(zip(header, (c.value for c in r))) for r in ws.iter_rows(min_row=header_row + 1) if r[0].value]
    new = next(r for r in rows if r["지표"] == "신규 (NEW)")
    assert new["지난 주"] == "데이터 없음" and new["증감"] == "데이터 없음"
    assert isinstance(new["이번 주"], int)


def test_weekly_comparison_with_loads_in_both_weeks_shows_numbers(reports):
    ws = reports["weekly"][weekly.DASHBOARD]
    header_row = next(c.row for c in ws["A"] if c.value == "지표")
    header = [c.value for c in ws[header_row]]
    new = next(
        dict(zip(header, (c.value for c in r)))
        for r in ws.iter_rows(min_row=header_row + 1)
        if r[0].value == "신규 (NEW)"
    )
    assert isinstance(new["지난 주"], int) and isinstance(new["증감"], int)


@pytest.mark.parametrize(
    "name,sheet", [("rich", daily.DASHBOARD), ("rejected", daily.DASHBOARD), ("weekly", weekly.DASHBOARD)]
)
def test_the_dashboard_prints_on_one_page(reports, name, sheet):
    ws = reports[name][sheet]
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    # An absent attribute is the OOXML default, 1; the other sheets say 0 (as many pages as needed).
    page = ws.page_setup
    assert (page.fitToWidth or 1, 1 if page.fitToHeight is None else page.fitToHeight) == (1, 1)
    other = reports[name].worksheets[1].page_setup
    assert other.fitToHeight == 0


def column_width(ws, col: int) -> float:
    """openpyxl keeps XlsxWriter's <col min max> ranges under the first letter of each range."""
    for dim in ws.column_dimensions.values():
        if dim.min and dim.max and dim.min <= col <= dim.max:
            return dim.width
    return 8.43


def test_no_number_or_date_column_is_too_narrow_for_its_values(reports):
    """Excel shows ### when a number or a date does not fit its column."""
    for wb in reports.values():
        for ws in wb.worksheets:
            if ws.sheet_state == "hidden":
                continue
            for row in ws.iter_rows():
                for cell in row:
                    if (
                        cell.value is None
                        or isinstance(cell.value, bool)
                        or not (cell.data_type == "n" or cell.is_date)
                    ):
                        continue
                    if cell.coordinate in ws.merged_cells:
                        continue
                    width = column_width(ws, cell.column)
                    if cell.is_date:
                        shown = "2026-11-20 09:30" if "hh" in cell.number_format else "2026-11-20"
                    else:
                        shown = f"{cell.value:,.2f}" if isinstance(cell.value, float) else f"{cell.value:,}"
                    scale = 1.4 if cell.font and cell.font.sz and cell.font.sz > 11 else 1.0
                    assert len(shown) * scale <= width, (ws.title, cell.coordinate, shown, width)


@pytest.mark.parametrize("name", ["rich", "rejected", "auth", "weekly"])
def test_every_cell_a_reader_meets_is_korean_except_names_codes_and_commands(reports, warehouse_words, name):
    found = latin_words(reports[name], warehouse_words)
    assert found == [], "\n".join(f"{where}: {word!r} in {text!r}" for where, word, text in found)
