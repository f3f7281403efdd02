"""Whatever a failed, incomplete or half-written load left in the raw layer never breaks a later
build: staging and every test read only usable loads (complete, every item row stored), and the
rejected load stays in mfds_raw for inspection. Real runs over the simulator.

Every test starts from the same honest first day (one registry, SEED), so the day is built once a
session and copied (support/replays.py); which synthetic registry it is matters to none of them."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import duckdb
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

START = date(2026, 11, 9)
DAYS = [START + timedelta(days=n) for n in range(4)]
SEED = 43  # tests/load/test_consistent_lists.py's registry too: the first day is shared with it


@pytest.mark.fault("a page of 1,000 items when 500 were asked")
def test_an_oversized_page_is_rejected_and_the_good_days_after_it_build_and_match_the_truth(tmp_settings):
    """Rejected as incomplete, kept in raw; the good days after it build (exit 0) and match the truth."""
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=SEED, size=1200, start_date=START)

    outcomes = run_days(
        settings,
        registry,
        [(DAYS[0], None), (DAYS[1], "oversized_page"), (DAYS[2], None), (DAYS[3], None)],
        SERVICE_KEY,
    )

    assert [o.exit_code for o in outcomes] == [0, 2, 0, 0]
    ((bad_load, status, reason),) = query(
        settings, "select load_id, fetch_status, reason from marts.dmf_loads where as_of_date = ?", [DAYS[1]]
    )
    assert status == "incomplete" and reason.startswith("incomplete:")
    # kept in raw, positions colliding, and never read by staging
    raw_rows, distinct_positions = query(
        settings, "select count(*), count(distinct item_position) from mfds_raw.dmf_items where load_id = ?", [bad_load]
    )[0]
    assert raw_rows > distinct_positions > 0
    assert query(settings, "select count(*) from staging.stg_mfds__items where load_id = ?", [bad_load]) == [(0,)]
    for day in DAYS[2:]:
        comparison = compare_day(settings, registry, day)
        assert comparison.matches, (day, comparison.missing, comparison.extra)
    assert query(settings, "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[2]]) == [
        (DAYS[0],)
    ]


def test_a_complete_load_with_missing_item_rows_is_never_built_on(tmp_settings):
    """A crash while dlt wrote the package: load_runs says complete, part of the rows is missing."""
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=SEED, size=1200, start_date=START)
    run_days(settings, registry, [(DAYS[0], None)], SERVICE_KEY)
    with SimulatorServer(registry, service_key=SERVICE_KEY, day=DAYS[1]) as simulator:
        loaded = load_day(
            dataclasses.replace(settings, api_base_url=simulator.base_url), DAYS[1], service_key=SERVICE_KEY
        )
    assert loaded.fetch_status == "complete"
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("delete from mfds_raw.dmf_load_items where load_id = ? and item_position >= 700", [loaded.load_id])

    outcome = build(settings)

    assert outcome.success, outcome.failures
    verdict, reason = query(
        settings, "select verdict, reason from marts.dmf_loads where load_id = ?", [loaded.load_id]
    )[0]
    assert verdict == "rejected"
    assert reason.startswith("incomplete: only 700 of ")
    assert query(settings, "select count(*) from marts.dmf_events") == [(0,)]  # no false WITHDRAWN

    outcomes = run_days(settings, registry, [(DAYS[2], None)], SERVICE_KEY)
    assert outcomes[0].exit_code == 0
    assert compare_day(settings, registry, DAYS[2]).matches
