"""Scripted identity cases through the whole pipeline (simulator on loopback, real dbt), with the
simulator's ground truth: registrations withdrawn and back after 1, 7 and 400 days, and a
renumbering on the same day as a manufacturer edit. Loads are taken on days 1, 2, 3, 9 and 402
only: the absence is measured between the as-of dates of accepted loads."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import pytest

from dmf_watch.commands.ground_truth import compare_dates, table
from dmf_watch.simulator.evolution import IdentityCases
from dmf_watch.simulator.registry import SyntheticRegistry
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

START = date(2026, 11, 2)
LOAD_DAYS = (1, 2, 3, 9, 402)
DATES = [START + timedelta(days=day - 1) for day in LOAD_DAYS]
CASES = IdentityCases(day=2, returns_after=(1, 7, 400), renumbered_with_manufacturer=1, calm_after=9)


@pytest.fixture(scope="module")
def identity_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("identity")
    from dmf_watch.core.config import load_settings

    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=5, size=1200, start_date=START, cases=CASES)
    outcomes = run_days(settings, registry, [(as_of, None) for as_of in DATES], SERVICE_KEY)
    return settings, registry, outcomes


def _returned(registry: SyntheticRegistry) -> dict[int, str]:
    """absent days -> permit number of the scripted returns, from the simulator's truth."""
    return {
        entry["absent_days"]: entry["permit_no"]
        for day in range(1, LOAD_DAYS[-1] + 1)
        for entry in registry.truth_for(day)
        if entry["event_type"] == "REINSTATED"
    }


def test_identity_cases_match_the_ground_truth_with_nothing_missing_or_extra(identity_run):
    settings, registry, outcomes = identity_run
    assert [o.exit_code for o in outcomes] == [0] * len(DATES)
    comparisons = compare_dates(settings, registry, DATES)
    print("\n" + table(comparisons))
    assert [(day.as_of, day.missing, day.extra, day.wrong_fields) for day in comparisons if not day.matches] == []
    assert sum(day.published["REINSTATED"] for day in comparisons) == 2


def test_a_registration_back_after_1_or_7_days_is_reinstated_under_its_old_key(identity_run):
    settings, registry, _ = identity_run
    returned = _returned(registry)
    for absent, as_of in ((1, DATES[2]), (7, DATES[3])):
        rows = query(
            settings,
            "select event_type, dmf_key, absent_days from marts.dmf_events where permit_no = ? order by as_of_date",
            [returned[absent]],
        )
        assert [(r[0], r[2]) for r in rows] == [("WITHDRAWN", None), ("REINSTATED", absent)]
        assert rows[0][1] == rows[1][1]  # the same registration, its WITHDRAWN still published
        assert query(
            settings,
            "select count(distinct dmf_key) from marts.dmf_registration_history where permit_no = ?",
            [returned[absent]],
        ) == [(1,)]
        assert query(
            settings,
            "select as_of_date from marts.dmf_events where permit_no = ? and event_type = 'REINSTATED'",
            [returned[absent]],
        ) == [(as_of,)]


def test_a_registration_back_after_400_days_is_new_with_a_new_key(identity_run):
    settings, registry, _ = identity_run
    number = _returned(registry)[400]
    rows = query(
        settings,
        "select as_of_date, event_type, dmf_key, absent_days from marts.dmf_events "
        "where permit_no = ? order by as_of_date",
        [number],
    )
    assert [(r[0], r[1], r[3]) for r in rows] == [(DATES[1], "WITHDRAWN", None), (DATES[4], "NEW", None)]
    assert rows[0][2] != rows[1][2]


def test_a_same_day_renumbering_and_manufacturer_edit_is_one_changed_event(identity_run):
    settings, registry, _ = identity_run
    scripted = [e for e in registry.truth_for(2) if "manufacturer edited" in e["detail"]]
    assert len(scripted) == 1
    after = scripted[0]["permit_no"]
    events = query(
        settings,
        "select event_type, changed_fields, severity from marts.dmf_events "
        "where as_of_date = ? and permit_no in (?, ?)",
        [DATES[1], after, scripted[0]["permit_no_before"]],
    )
    assert [(e[0], e[1]) for e in events] == [("CHANGED", "manufacturer,permit_no")]
    changes = query(
        settings,
        "select field_name, change_detail from marts.dmf_event_field_changes "
        "where as_of_date = ? and permit_no = ? order by field_name",
        [DATES[1], after],
    )
    assert changes == [("manufacturer", "replaced"), ("permit_no", "renumbered")]
    assert query(
        settings,
        "select fired, observed from marts.dmf_signals where as_of_date = ? and signal_id = 'identity_loose_key'",
        [DATES[1]],
    ) == [(True, 1.0)]
