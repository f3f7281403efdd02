"""Loads that look complete but are wrong (every page answered, the count is right) are stopped
by gates that need no history: a WITHDRAWN share, an identity churn and a field fill collapse.
Real runs: the simulator over HTTP, dlt into DuckDB, dbt build, the xlsx read back."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import openpyxl
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.server import StaticSource
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

START = date(2026, 11, 2)
DAYS = [START + timedelta(days=n) for n in range(3)]
IDENTITY_BREAK = "permit_no_separator:_,null_field:BIZRNO"
# The simulated registry of the identity break and of the normal week: their first day is the
# same day, replayed once (support/replays.py).
REGISTRY = {"seed": 5, "size": 1500, "start_date": START}


def _sheet_text(path) -> str:
    sheet = openpyxl.load_workbook(path, read_only=True)["요약"]
    return "\n".join(str(cell) for row in sheet.iter_rows(values_only=True) for cell in row if cell is not None)


@pytest.fixture(scope="module")
def identity_break(tmp_path_factory):
    """Day 2 serves every number with `_` for `-` and no BIZRNO; days 1 and 3 are normal."""
    root = tmp_path_factory.mktemp("identity_break")
    from dmf_watch.core.config import load_settings

    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(**REGISTRY)
    outcomes = run_days(settings, registry, [(DAYS[0], None), (DAYS[1], IDENTITY_BREAK), (DAYS[2], None)], SERVICE_KEY)
    return settings, registry, outcomes


@pytest.mark.fault("every registration number changes format (`-` → `_`) and BIZRNO turns null")
def test_reformatted_numbers_and_missing_bizrno_are_rejected_by_the_new_gates(identity_break):
    """Rejected with exit 2 and 0 events; withdrawn_share, identity_churn and field_fill_collapse named."""
    settings, _, outcomes = identity_break
    assert [o.exit_code for o in outcomes] == [0, 2, 0]
    verdict, gates = query(
        settings, "select verdict, rejected_gates from marts.dmf_loads where as_of_date = ?", [DAYS[1]]
    )[0]
    assert verdict == "rejected"
    assert {"withdrawn_share", "identity_churn", "field_fill_collapse"} <= set(gates.split(","))
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAYS[1]]) == [(0,)]
    observed, baseline, text = query(
        settings,
        "select observed, baseline, baseline_text from marts.dmf_signals where as_of_date = ? and signal_id = 'field_fill_collapse'",
        [DAYS[1]],
    )[0]
    assert (observed, baseline) == (0.0, 100.0)
    assert "applicant_bizrno" in text


@pytest.mark.fault("every registration number changes format (`-` → `_`) and BIZRNO turns null")
def test_the_normal_day_after_an_identity_break_matches_the_truth_without_false_withdrawals(identity_break):
    """The next normal day is compared with the last accepted one: exactly the simulator's truth, no false WITHDRAWN."""
    settings, registry, _ = identity_break
    assert query(settings, "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[2]]) == [
        (DAYS[0],)
    ]
    day = compare_day(settings, registry, DAYS[2])
    assert day.matches, (day.missing, day.extra, day.wrong_fields)
    assert sum(day.published.values()) > 0
    assert day.published["WITHDRAWN"] == day.expected["WITHDRAWN"] < 10


def test_the_rejected_days_report_names_the_new_gates_in_korean_with_observed_and_baseline(identity_break):
    settings, _, outcomes = identity_break
    text = _sheet_text(outcomes[1].reports[0])
    for gate in ("withdrawn_share", "identity_churn", "field_fill_collapse"):
        assert gate in text
    assert "취하 건수가 마지막 반영 적재 등록의 1%를 넘었습니다" in text
    assert "채움률" in text


@pytest.mark.fault("the real 367 records with one field null everywhere")
def test_a_field_null_in_every_real_record_is_a_fill_collapse(real_sample, tmp_settings):
    """field_fill_collapse rejects it (exit 2, 0 events), the field named 100.0% → 0.0%."""
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    assert all(len(record) == 9 and record["MNFCTR_NAME"] for record in real_sample[:5])
    outcomes = run_days(
        settings,
        StaticSource(real_sample, start_date=DAYS[0]),
        [(DAYS[0], None), (DAYS[1], "null_field:MNFCTR_NAME")],
        SERVICE_KEY,
    )
    assert [o.exit_code for o in outcomes] == [0, 2]
    gates = query(settings, "select rejected_gates from marts.dmf_loads where as_of_date = ?", [DAYS[1]])[0][0]
    assert "field_fill_collapse" in gates.split(",")
    assert query(settings, "select count(*) from marts.dmf_events") == [(0,)]
    text = query(
        settings,
        "select baseline_text from marts.dmf_signals where as_of_date = ? and signal_id = 'field_fill_collapse'",
        [DAYS[1]],
    )[0][0]
    assert "manufacturer 100.0% → 0.0%" in text


@pytest.mark.fault("one field changed on a few dozen records, far below all_changed's 30%")
def test_one_field_changing_on_more_records_than_a_real_day_is_a_gate(real_sample, tmp_settings):
    """field_change_surge rejects it (exit 2, 0 events), the field and its count named; the
    real records' usual day (a handful of changes) passes"""
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    edited = [dict(record) for record in real_sample]
    for record in edited[:25]:  # 25 of 367 (7%): all_changed (30%) and the fill gates stay quiet
        record["MNFCTR_PLACE"] = record["MNFCTR_PLACE"] + ", Republic of Testing"
    for record in edited[100:105]:
        record["NOTICE_CODE"] = "기타"
    first = run_days(settings, StaticSource(real_sample, start_date=DAYS[0]), [(DAYS[0], None)], SERVICE_KEY)
    second = run_days(settings, StaticSource(edited, start_date=DAYS[0]), [(DAYS[1], None)], SERVICE_KEY)

    assert [o.exit_code for o in first + second] == [0, 2]
    gates = query(settings, "select rejected_gates from marts.dmf_loads where as_of_date = ?", [DAYS[1]])[0][0]
    assert gates.split(",") == ["field_change_surge"]
    assert query(settings, "select count(*) from marts.dmf_events") == [(0,)]
    observed, baseline, text = query(
        settings,
        "select observed, baseline, baseline_text from marts.dmf_signals "
        "where as_of_date = ? and signal_id = 'field_change_surge'",
        [DAYS[1]],
    )[0]
    assert (observed, baseline) == (25.0, 20.0)
    assert "넘은 항목: manufacture_place 25건" in text and "notice_code" not in text


def test_the_new_gates_stay_quiet_on_a_normal_simulated_week(tmp_settings):
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(**REGISTRY)  # any normal registry; this one's first day is replayed already
    days = [START + timedelta(days=n) for n in range(4)]
    outcomes = run_days(settings, registry, [(day, None) for day in days], SERVICE_KEY)
    assert [o.exit_code for o in outcomes] == [0, 0, 0, 0]
    fired = query(
        settings,
        "select signal_id from marts.dmf_signals where fired and signal_id in "
        "('withdrawn_share', 'identity_churn', 'field_fill_collapse', 'field_change_surge')",
    )
    assert fired == []
    assert query(settings, "select count(*) from marts.dmf_signals where signal_id = 'withdrawn_share'") == [(4,)]


def _has_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


def test_the_rejected_days_reason_and_baselines_are_korean_for_every_fired_gate(identity_break):
    """A reader of the rejected day sees each gate's name and 기준 in Korean, not the SQL's English."""
    settings, _, outcomes = identity_break
    fired = query(
        settings,
        "select signal_id, baseline_text from marts.dmf_signals where as_of_date = ? and fired and is_gate order by 1",
        [DAYS[1]],
    )
    assert {"withdrawn_share", "identity_churn", "field_fill_collapse"} <= {g for g, _ in fired}
    assert [g for g, text in fired if not _has_hangul(text or "")] == []
    text = _sheet_text(outcomes[1].reports[0])
    reason = next(line for line in text.splitlines() if line.startswith("무결성 게이트가 거부: "))
    for part in reason.removeprefix("무결성 게이트가 거부: ").split(", "):
        name, _, gate = part.partition("(")
        assert _has_hangul(name), part
