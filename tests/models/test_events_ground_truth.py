"""Simulated days through the whole pipeline, compared with the simulator's own ground truth:
a truncated load in the middle is rejected and the next day is compared with the last accepted
one; re-running a day and rebuilding from the raw loads change nothing."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import pytest

from dmf_watch.commands.ground_truth import compare_days, table
from dmf_watch.commands.run import run_day
from dmf_watch.core.config import load_settings
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY
from support.scenarios import DaysSource, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

START = date(2026, 11, 2)
DAYS = [START + timedelta(days=n) for n in range(6)]
FAULTS = {DAYS[2]: "truncate_last_page"}
# The simulated registry of the six days and of the count drop: their first day is the same day,
# replayed once (support/replays.py).
REGISTRY = {"seed": 7, "size": 2500, "start_date": START}
EVENT_COLUMNS = (
    "event_id, as_of_date, dmf_key, permit_no, event_type, severity, on_watchlist, "
    "changed_fields, change_kind, ingredient_name, applicant, manufacturer"
)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    root = tmp_path_factory.mktemp("simulated")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(**REGISTRY)
    outcomes = run_days(settings, registry, [(day, FAULTS.get(day)) for day in DAYS], SERVICE_KEY)
    return settings, registry, outcomes


def test_every_day_matches_the_simulators_ground_truth(simulated):
    settings, registry, _ = simulated
    comparisons = compare_days(settings, registry, DAYS[0], len(DAYS))
    print("\n" + table(comparisons))
    assert [day.as_of for day in comparisons if not day.matches] == []
    assert sum(sum(day.published.values()) for day in comparisons) > 20  # the days really had events


def test_a_truncated_load_is_rejected_and_publishes_nothing(simulated):
    settings, _, outcomes = simulated
    assert [o.exit_code for o in outcomes] == [0, 0, 2, 0, 0, 0]
    verdict, reason = query(settings, "select verdict, reason from marts.dmf_loads where as_of_date = ?", [DAYS[2]])[0]
    assert verdict == "rejected"
    assert reason.startswith("incomplete:")
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAYS[2]]) == [(0,)]


def test_the_day_after_a_rejection_is_compared_with_the_last_accepted_day(simulated):
    settings, _, _ = simulated
    assert query(
        settings,
        "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ? and verdict = 'accepted'",
        [DAYS[3]],
    ) == [(DAYS[1],)]


def test_running_a_day_again_and_rebuilding_from_raw_change_nothing(simulated):
    settings, registry, _ = simulated
    events_sql = f"select {EVENT_COLUMNS} from marts.dmf_events order by event_id"
    changes_sql = "select * from marts.dmf_event_field_changes order by all"
    before = query(settings, events_sql), query(settings, changes_sql)
    report = settings.reports_dir / f"dmf_daily_{DAYS[-1]:%Y%m%d}.xlsx"
    report_bytes = report.read_bytes()
    loads_before = query(settings, "select count(*) from marts.dmf_loads")

    with SimulatorServer(registry, service_key=SERVICE_KEY, day=DAYS[-1]) as simulator:
        again = run_day(
            dataclasses.replace(settings, api_base_url=simulator.base_url),
            DAYS[-1],
            service_key=SERVICE_KEY,
            echo=lambda line: None,
        )
        assert simulator.requests == 0  # the day was already loaded: no API call
    assert again.exit_code == 0
    assert (query(settings, events_sql), query(settings, changes_sql)) == before
    assert query(settings, "select count(*) from marts.dmf_loads") == loads_before
    assert report.read_bytes() == report_bytes

    assert build(settings, full_refresh=True).success
    assert (query(settings, events_sql), query(settings, changes_sql)) == before


def test_a_count_drop_is_rejected_by_the_gate_and_later_days_compare_with_the_last_accepted(tmp_settings):
    registry = SyntheticRegistry(**REGISTRY)  # any registry; this one's first day is replayed already
    day_1, day_2 = registry.items_for(1), registry.items_for(2)
    truncated = day_2[: int(len(day_2) * 0.9)]  # complete as served, but 10% smaller
    days = {DAYS[0]: day_1, DAYS[1]: truncated, DAYS[2]: day_2}
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")

    outcomes = run_days(settings, DaysSource(days), [(day, None) for day in DAYS[:3]], SERVICE_KEY)

    assert [o.exit_code for o in outcomes] == [0, 2, 0]
    verdict, reason, gates = query(
        settings, "select verdict, reason, rejected_gates from marts.dmf_loads where as_of_date = ?", [DAYS[1]]
    )[0]
    # a 10% shortfall is also 10% WITHDRAWN: both gates name it
    assert (verdict, gates) == ("rejected", "total_count_drop,withdrawn_share")
    assert "total_count_drop" in reason
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAYS[1]]) == [(0,)]
    assert query(
        settings,
        "select fired from marts.dmf_signals where as_of_date = ? and signal_id = 'total_count_drop'",
        [DAYS[1]],
    ) == [(True,)]
    # day 3 against day 1: exactly the simulator's day-2 changes, no false withdrawal
    published = query(
        settings,
        "select event_type, count(*) from marts.dmf_events where as_of_date = ? group by 1 order by 1",
        [DAYS[2]],
    )
    expected = {}
    for entry in registry.truth_for(2):
        if entry["event_type"] != "NONE":
            expected[entry["event_type"]] = expected.get(entry["event_type"], 0) + 1
    assert dict(published) == expected
