"""Nothing false from a list that moved while it was paged, or whose items drifted below the
gates: real `dmf run` days over the simulator, each published day held against its truth.

Before: a record withdrawn (or edited and moved to the end) between two pages, a last page
repeating page 1's records, a key dropped from every 7th item, a list sent as a JSON array,
dates with a time part or a record with every field empty were all "complete" and published
false WITHDRAWN, NEW and CHANGED events with exit 0. (A record with every field empty, and one
listed twice at the same places in both passes, are now quarantined and the day published:
tests/load/test_quarantined_records.py.)

Both tests replay the same registry (SEED): their honest first day is built once a session and
copied (support/replays.py), and tests/load/test_poisoned_raw.py starts from it too. Each fault is
applied to whatever the registry serves that day, so which synthetic registry it is matters to
neither test."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import openpyxl
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.reports.daily_report import report_path
from dmf_watch.simulator.registry import SyntheticRegistry
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # whole days through dbt: the slow tier

START = date(2026, 11, 9)
DAYS = [START + timedelta(days=n) for n in range(6)]
SEED = 43  # its second day serves 1,201 items: the key dropped from every 7th is missing in 172


def _replay(tmp_settings, faults: list[str | None]):
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=SEED, size=1200, start_date=START)
    outcomes = run_days(settings, registry, list(zip(DAYS, faults, strict=False)), SERVICE_KEY)
    comparisons = [compare_day(settings, registry, day) for day in DAYS[: len(faults)]]
    return settings, outcomes, comparisons


def _reasons(settings) -> dict[date, str]:
    rows = query(settings, "select as_of_date, reason from marts.dmf_day_decisions where verdict = 'rejected'")
    return dict(rows)


def _events(settings, day: date) -> int:
    return query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [day])[0][0]


@pytest.mark.fault("a list that moved while it was paged")
def test_a_list_that_moved_while_paged_publishes_nothing_false(tmp_settings):
    """moved once: read again and published true; moving on every pass: rejected in one line;
    repeating page 1 on its last page (5 records in place of others, the same in both passes):
    rejected by the quarantine share gate; 0 events; every published day matches the truth"""
    settings, outcomes, comparisons = _replay(
        tmp_settings,
        faults=[None, "list_moves:withdraw", "list_moves:to_end@times=3", "repeat_first:5", None],
    )

    assert [o.exit_code for o in outcomes] == [0, 0, 2, 2, 0]
    for comparison in comparisons:  # false events 0 and missed events 0, rejected days included
        assert comparison.matches, (comparison.as_of, comparison.missing, comparison.extra)
    assert query(settings, "select attempts from marts.dmf_loads where as_of_date = ?", [DAYS[1]]) == [(3,)]
    reasons = _reasons(settings)
    assert "the list changed while it was read: " in reasons[DAYS[2]] and "(3 passes)" in reasons[DAYS[2]]
    # the same 5 repeats at the same places in both passes: the load is complete, the repeats are
    # quarantined, and 5 of 1,200 is above the share (the larger of 3 and 0.1%): rejected as before
    ((status, duplicates, gates),) = query(
        settings,
        "select fetch_status, duplicate_count, rejected_gates from marts.dmf_loads where as_of_date = ?",
        [DAYS[3]],
    )
    assert (status, duplicates) == ("complete", 5) and "quarantine_share" in gates.split(","), gates
    assert "\n" not in reasons[DAYS[3]]
    assert _events(settings, DAYS[2]) == _events(settings, DAYS[3]) == 0
    # the next honest morning is compared with the last accepted day and publishes its truth
    assert query(settings, "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[4]]) == [
        (DAYS[1],)
    ]
    assert _events(settings, DAYS[4]) > 0


@pytest.mark.fault("items that drift below the gates (a missing key, an array, a date with a time)")
def test_items_that_drift_below_the_gates_are_rejected_naming_the_field(tmp_settings):
    """each drift: exit 2, one line naming the field, the shape and how many items, 0 events;
    an empty record among them is no drift any more (quarantined, the day published true);
    the next honest morning matches the truth"""
    settings, outcomes, comparisons = _replay(
        tmp_settings,
        faults=[
            None,
            "item_shape:missing_key",
            "item_shape:array",
            "item_shape:datetime",
            "item_shape:empty_record",
            None,
        ],
    )

    assert [o.exit_code for o in outcomes] == [0, 2, 2, 2, 0, 0]
    for comparison in comparisons:
        assert comparison.matches, (comparison.as_of, comparison.missing, comparison.extra)
    reasons = _reasons(settings)
    assert "MNFCTR_NAME key missing in 172 of 1,2" in reasons[DAYS[1]]
    assert "MANUF_COUNTRY_CODE_NM sent as a JSON array in " in reasons[DAYS[2]]
    assert "DMF_PERMIT_DATE as 9999-99-99 99:99:99.9 in " in reasons[DAYS[3]]
    assert DAYS[4] not in reasons  # the empty record is quarantined (tests/load/test_quarantined_records.py)
    for day in DAYS[1:4]:
        assert _events(settings, day) == 0
        assert "\n" not in reasons[day]
    summary = openpyxl.load_workbook(report_path(settings.reports_dir, DAYS[1]))["요약"]
    cells = [str(cell) for row in summary.iter_rows(values_only=True) for cell in row if cell]
    assert any(cell.startswith("MNFCTR_NAME 키 없음 172건") for cell in cells), cells
    assert _events(settings, DAYS[5]) > 0
