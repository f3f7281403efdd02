"""A value longer than Excel's cell limit is cut visibly, counted, and kept whole in the warehouse.

XlsxWriter cuts a string over 32,767 characters silently; an RA reader would take the cut value
for the whole one. Here a 1 MB manufacturer (a NEW registration) and a 40,000-character one (a
CHANGED manufacturer) go through the real pipeline: simulator → load → dbt → report.
"""

from __future__ import annotations

import re
from datetime import timedelta

import openpyxl
import pytest

from dmf_watch.reports import daily_report as daily
from dmf_watch.reports.layout import EXCEL_CELL_MAX
from support.mfds import SERVICE_KEY, START_DATE
from support.scenarios import DaysSource, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

MARKER = re.compile(r" … \(전체 ([0-9,]+)자, 원문은 warehouse(의 [a-z_.]+|에 그대로 있음)\)$")
HUGE = 1_000_000
LONG = 40_000


def _days(real_sample: list[dict]):
    day1 = [dict(item) for item in real_sample]
    day2 = [dict(item) for item in real_sample]
    day2[0]["MNFCTR_NAME"] = "L" * LONG  # CHANGED: the manufacturer becomes 40,000 characters
    new = dict(real_sample[1], DMF_PERMIT_NO="20261130-999-I-1-01", MNFCTR_NAME="M" * HUGE)
    day2.append(new)
    return {START_DATE: day1, START_DATE + timedelta(days=1): day2}


@pytest.mark.fault("a 1 MB (or 40,000-character) field")
def test_cells_over_the_excel_limit_end_with_a_marker_are_counted_and_the_warehouse_keeps_them_whole(
    tmp_settings, real_sample
):
    """Cells over 32,767 characters end with a marker and are counted; the warehouse keeps them whole."""
    day2 = START_DATE + timedelta(days=1)
    outcomes = run_days(tmp_settings, DaysSource(_days(real_sample)), [(START_DATE, None), (day2, None)], SERVICE_KEY)
    assert [o.exit_code for o in outcomes] == [0, 0]

    wb = openpyxl.load_workbook(outcomes[1].reports[0])
    cut = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and len(cell.value) > 1000:
                    cut.append((ws.title, cell.value))
    assert cut, "the long values are in the report"
    for title, value in cut:
        assert len(value) <= EXCEL_CELL_MAX
        assert MARKER.search(value), (title, value[-80:])
    totals = sorted(int(MARKER.search(value).group(1).replace(",", "")) for _, value in cut)
    assert HUGE in totals and LONG in totals
    new_cells = [value for title, value in cut if title == daily.NEW]
    assert len(new_cells) == 1 and new_cells[0].startswith("M" * 30_000)
    assert "원문은 warehouse의 marts.dmf_events.manufacturer" in new_cells[0]
    changed = [value for title, value in cut if title == daily.CHANGED]
    assert any(value.startswith("L" * 30_000) and "전체 40,000자" in value for value in changed)

    note = wb[daily.OPERATIONS]["A3"].value
    assert note.startswith(f"잘린 셀 {len(cut)}") and len(cut) >= 2

    assert query(tmp_settings, "select max(length(mnfctr_name)) from mfds_raw.dmf_items") == [(HUGE,)]
    assert query(
        tmp_settings,
        "select length(manufacturer) from marts.dmf_events where event_type = 'NEW' and as_of_date = ?",
        [day2],
    ) == [(HUGE,)]
    assert query(
        tmp_settings, "select max(length(after_value)) from marts.dmf_event_field_changes where as_of_date = ?", [day2]
    ) == [(LONG,)]


def test_a_report_without_long_values_says_no_cell_was_cut(tmp_settings, real_sample):
    outcomes = run_days(tmp_settings, DaysSource({START_DATE: real_sample}), [(START_DATE, None)], SERVICE_KEY)
    wb = openpyxl.load_workbook(outcomes[0].reports[0])
    assert wb[daily.OPERATIONS]["A3"].value == "잘린 셀 0"
