"""A load that breaks what the models assume of it, or holds a few unreadable records, never stops
the morning and never publishes a false event: real `dmf run` days over the simulator (a
few hundred synthetic records, the simulator's own ground truth), each fault on one day between
two honest ones.

Before: registrations without a number sent as "-" failed the build on a duplicate event_id and
bricked every later morning; one number on two rows published a false NEW, then a false HIGH
WITHDRAWN; one record in CP949 bytes or with a lone surrogate published a mojibake CHANGED and its
undoing; one record with every field empty, or one listed twice at the same place in both passes,
rejected every morning while MFDS kept it in the list.

The DuckDB tests replay one registry (SEED, SIZE), so their honest first day is built once a
session and copied (support/replays.py). The registry is the one whose third day brings new
registrations without a number (what the placeholder test needs); every other fault is applied
to whatever record the registry serves, so it matters to none of the others which one it is."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import openpyxl
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.core import warehouse
from dmf_watch.notify.messages import daily_message
from dmf_watch.reports.daily_report import SIGNALS, report_path
from dmf_watch.simulator.registry import SyntheticRegistry
from support.mfds import SERVICE_KEY
from support.postgres import drop_schemas, on_postgres
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # whole days through dbt: the slow tier

START = date(2026, 11, 16)
SEED, SIZE = 41, 400  # day 3 brings 3 new registrations without a number: 3 "-" among the NEW


def _replay(tmp_settings, faults: list[str | None]):
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=SEED, size=SIZE, start_date=START)
    days = [START + timedelta(days=n) for n in range(len(faults))]
    outcomes = run_days(settings, registry, list(zip(days, faults, strict=True)), SERVICE_KEY)
    comparisons = [compare_day(settings, registry, day) for day in days]
    return settings, days, outcomes, comparisons


def _integrity_sheet(settings, day: date) -> list[str]:
    """Every text cell of the day's integrity sheet (무결성신호), read back from the xlsx."""
    sheet = openpyxl.load_workbook(report_path(settings.reports_dir, day))[SIGNALS]
    return [str(cell) for row in sheet.iter_rows(values_only=True) for cell in row if cell is not None]


def _quarantine(settings, day: date) -> list[tuple]:
    return query(
        settings,
        "select quarantine_kind, quarantine_detail, replacement_row_hash is not null "
        "from intermediate.int_load_items_quarantined where as_of_date = ? order by item_position",
        [day],
    )


def _fired(settings, day: date, signal_id: str) -> bool:
    ((fired,),) = query(
        settings, "select fired from marts.dmf_signals where as_of_date = ? and signal_id = ?", [day, signal_id]
    )
    return fired


def _assert_truthful_days(outcomes, comparisons, exit_codes):
    assert [o.exit_code for o in outcomes] == exit_codes, [o.verdict for o in outcomes]
    for comparison in comparisons:  # false events 0, missed events 0, every day
        assert comparison.matches, (comparison.as_of, comparison.missing, comparison.extra, comparison.wrong_fields)


def _assert_listed_on_the_integrity_sheet(settings, day: date, detail: str, alert_detail: str | None = None):
    """The record on the day's integrity sheet (xlsx read back) and in the day's summary message."""
    cells = _integrity_sheet(settings, day)
    listing = [cell for cell in cells if cell.startswith("비교에서 뺀 기록 ")]
    assert listing and detail in listing[0], cells
    with warehouse.connect(settings) as con:
        message = daily_message(con, day, None)
    assert message is not None and "격리(무결성신호 시트): 비교에서 뺀 기록 " in message.text, message
    assert (alert_detail or detail) in message.text, message.text


@pytest.mark.fault("registrations without a permit number sent as `-`")
def test_registrations_without_a_number_sent_as_a_dash_are_registrations_without_a_number(tmp_settings):
    """'-'/'N/A' numbers read as no number: exit 0 x5, build never fails, false 0 / missed 0, next morning recovers

    New ones are NEW without a number; the honest morning after gives no event for them."""
    settings, days, outcomes, comparisons = _replay(
        tmp_settings,
        [None, "permit_placeholder:-", "permit_placeholder:-", "permit_placeholder:N/A", None],
    )

    _assert_truthful_days(outcomes, comparisons, [0, 0, 0, 0, 0])
    assert [o.verdict for o in outcomes] == ["accepted"] * 5
    sent = query(
        settings,
        "select as_of_date, count(*) from mfds_raw.dmf_items where dmf_permit_no in ('-', 'N/A') group by all order by 1",
    )
    assert [n for _, n in sent] == [1, 4, 5], sent  # several "-" in one load
    published = query(settings, "select permit_no from marts.dmf_events where as_of_date > ?", [days[0]])
    assert all(number not in ("-", "N/A") for (number,) in published)
    assert query(settings, "select count(*) from marts.dmf_registrations where permit_no in ('-', 'N/A')") == [(0,)]
    assert not _quarantine(settings, days[1])  # normalized, not held out


@pytest.mark.fault("one permit number on two rows")
def test_one_permit_number_on_two_rows_is_held_out_and_the_registration_keeps_its_version(tmp_settings):
    """listed on two rows mid-update: exit 0, false 0 / missed 0, both rows on the sheet and alert, next morning recovers

    No false NEW today and no false WITHDRAWN when one row goes; the registration keeps its version."""
    settings, days, outcomes, comparisons = _replay(tmp_settings, [None, "permit_no_twice", None])

    _assert_truthful_days(outcomes, comparisons, [0, 0, 0])
    kinds = _quarantine(settings, days[1])
    assert [kind for kind, _, _ in kinds] == ["permit_no_on_several_rows"] * 2
    assert sum(kept for _, _, kept in kinds) == 1  # the registration keeps its last version, once
    _assert_listed_on_the_integrity_sheet(settings, days[1], "개 행에 있음")
    assert _fired(settings, days[1], "records_quarantined") and not _fired(settings, days[2], "records_quarantined")


@pytest.mark.fault("a name sent as CP949 bytes")
def test_a_name_sent_as_cp949_bytes_is_quarantined_and_the_day_published(tmp_settings):
    """applicant in CP949 bytes: exit 0, no mojibake CHANGED (false 0 / missed 0), on the sheet and alert, next morning recovers

    The honest morning after gives no undoing CHANGED."""
    settings, days, outcomes, comparisons = _replay(tmp_settings, [None, "bad_text:cp949", None])

    _assert_truthful_days(outcomes, comparisons, [0, 0, 0])
    assert _quarantine(settings, days[1]) == [("unreadable_text", "applicant: UTF-8 이 아닌 바이트(CP949 등)", True)]
    _assert_listed_on_the_integrity_sheet(
        settings, days[1], "신청인: UTF-8 이 아닌 바이트(CP949 등)", "applicant: UTF-8 이 아닌 바이트(CP949 등)"
    )
    assert _fired(settings, days[1], "undecodable_text")
    changed = query(settings, "select count(*) from marts.dmf_event_field_changes where after_value like '␛%'")
    assert changed == [(0,)]
    assert not _fired(settings, days[2], "records_quarantined")


@pytest.mark.fault("a lone surrogate in one record")
def test_a_lone_surrogate_in_one_record_is_quarantined_and_the_day_published(tmp_settings):
    """applicant with a lone surrogate: exit 0, no CHANGED (false 0 / missed 0), on the sheet and alert, next morning recovers"""
    settings, days, outcomes, comparisons = _replay(tmp_settings, [None, "bad_text:surrogate", None])

    _assert_truthful_days(outcomes, comparisons, [0, 0, 0])
    assert _quarantine(settings, days[1]) == [("unreadable_text", "applicant: 짝 없는 서로게이트", True)]
    _assert_listed_on_the_integrity_sheet(
        settings, days[1], "신청인: 짝 없는 서로게이트", "applicant: 짝 없는 서로게이트"
    )
    assert not _fired(settings, days[2], "records_quarantined")


@pytest.mark.fault("a record with every field empty")
def test_a_record_with_every_field_empty_is_quarantined_and_the_day_published(tmp_settings):
    """an empty record on two mornings: exit 0 both, false 0 / missed 0, on the sheet and alert, next morning recovers"""
    settings, days, outcomes, comparisons = _replay(
        tmp_settings, [None, "item_shape:empty_record", "item_shape:empty_record", None]
    )

    _assert_truthful_days(outcomes, comparisons, [0, 0, 0, 0])
    for day in days[1:3]:
        assert _quarantine(settings, day) == [("empty_record", "모든 필드가 빈 레코드", False)]
        _assert_listed_on_the_integrity_sheet(settings, day, "번호 없음 — 모든 필드가 빈 레코드")
    assert not _fired(settings, days[3], "records_quarantined")


@pytest.mark.fault("a record listed twice at the same place in both passes")
def test_a_record_listed_twice_at_the_same_place_in_both_passes_is_kept_once(tmp_settings):
    """stable duplicate kept once: exit 0, false 0 / missed 0, on the sheet; 5 repeated in place of others: exit 2

    The load is complete in 2 passes; repeat_first:5 is rejected by the share gate with 0 events;
    the honest morning after publishes its truth."""
    settings, days, outcomes, comparisons = _replay(
        tmp_settings, [None, "duplicate_across_pages", "repeat_first:5", None]
    )

    _assert_truthful_days(outcomes, comparisons, [0, 0, 2, 0])
    assert query(
        settings, "select fetch_status, attempts, duplicate_count from marts.dmf_loads where as_of_date = ?", [days[1]]
    ) == [("complete", 2, 1)]
    assert _quarantine(settings, days[1]) == [("listed_twice", "같은 자리에 2번 나열됨(한 번만 반영)", True)]
    _assert_listed_on_the_integrity_sheet(settings, days[1], "같은 자리에 2번 나열됨")
    ((reason, gates),) = query(
        settings, "select reason, rejected_gates from marts.dmf_day_decisions where as_of_date = ?", [days[2]]
    )
    assert "quarantine_share" in gates, (reason, gates)
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [days[2]]) == [(0,)]
    assert not _fired(settings, days[3], "records_quarantined")


@pytest.mark.postgres
@pytest.mark.fault("unreadable records and shared or placeholder numbers, on PostgreSQL")
def test_on_postgresql_the_same_loads_are_quarantined_and_published_true(postgres, tmp_settings):
    """PostgreSQL: CP949 name + its number on a 2nd row + '-' numbers: exit 0, false 0 / missed 0, listed, next morning recovers"""
    settings = on_postgres(dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy"), "quarantine")
    registry = SyntheticRegistry(seed=41, size=300, start_date=START)
    days = [START + timedelta(days=n) for n in range(3)]
    faults = [None, "bad_text:cp949,permit_no_twice,permit_placeholder:-", None]
    try:
        outcomes = run_days(settings, registry, list(zip(days, faults, strict=True)), SERVICE_KEY)
        comparisons = [compare_day(settings, registry, day) for day in days]
        _assert_truthful_days(outcomes, comparisons, [0, 0, 0])
        with warehouse.connect(settings) as con:
            s = con.schemas
            kinds = con.execute(
                f"select quarantine_kind, replacement_row_hash is not null from {s.intermediate}.int_load_items_quarantined "
                "where as_of_date = ? order by item_position",
                [days[1]],
            ).fetchall()
            listing = con.execute(
                f"select baseline_text from {s.marts}.dmf_signals where as_of_date = ? and signal_id = 'records_quarantined'",
                [days[1]],
            ).fetchall()
        assert kinds == [("unreadable_text", True), ("permit_no_on_several_rows", False)]
        assert "applicant: UTF-8 이 아닌 바이트(CP949 등)" in listing[0][0] and "개 행에 있음" in listing[0][0]
    finally:
        drop_schemas(settings)
