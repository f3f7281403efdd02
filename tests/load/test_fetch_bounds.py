"""Every fetch is bounded: by the clock per page and per load, and in requests by what the last
accepted list needed. Real loads over loopback HTTP from the simulator."""

from __future__ import annotations

import dataclasses
import time

import pytest

from dmf_watch.pipelines.mfds.helpers import fetch_registry
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.pipelines.mfds.settings import MAX_PLAUSIBLE_TOTAL
from support.mfds import SERVICE_KEY, START_DATE, pointed_at


@pytest.mark.fault("a server that sends one byte at a time")
def test_a_dripping_server_is_cut_off_by_the_page_and_load_deadlines(tmp_settings, start_simulator):
    """one byte every 0.05 s: the load ends failed within its deadline, with a line naming the setting"""
    server = start_simulator(faults="drip:0.05")
    settings = dataclasses.replace(pointed_at(tmp_settings, server), page_deadline_s=1.0, load_deadline_s=4.0)
    started = time.monotonic()

    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY)

    elapsed = time.monotonic() - started
    assert outcome.fetch_status == "failed"
    assert "(DMF_PAGE_DEADLINE_S)" in outcome.reason or "(DMF_LOAD_DEADLINE_S)" in outcome.reason
    assert "the load was still going after 4 s" in outcome.reason
    assert elapsed < 10, elapsed  # 4 s of load deadline, plus one page's second of overrun at most


def test_a_page_past_its_deadline_is_retried_and_named(start_simulator, fast_policy):
    server = start_simulator(faults="drip:0.05")
    policy = dataclasses.replace(fast_policy, page_deadline_s=0.5, max_retries=1)

    result = fetch_registry(server.base_url, SERVICE_KEY, policy)

    assert result.status == "failed" and result.requests == 2
    assert result.reason == "page 1 was still arriving after 0.5 s (DMF_PAGE_DEADLINE_S) (page 1, 2 tries)"


@pytest.mark.fault("totalCount ×1000 (a request storm)")
def test_an_implausible_total_count_is_refused_after_page_one(start_simulator, fast_policy):
    """totalCount ×1000: refused after 1 request, on a first load (absolute cap) and after one (2× the last)"""
    server = start_simulator(size=770, faults="total_count_scale:1000")

    first = fetch_registry(server.base_url, SERVICE_KEY, fast_policy)

    assert first.status == "incomplete" and first.requests == 1
    assert first.reason.startswith(f"the MFDS API reported 770,000 records, more than the {MAX_PLAUSIBLE_TOTAL:,}")

    server.set_faults("total_count_scale:3")
    later = fetch_registry(server.base_url, SERVICE_KEY, fast_policy, previous_total=770)

    assert later.status == "incomplete" and later.requests == 1
    assert "2,310 records, more than the 1,770" in later.reason


def test_a_total_count_within_bounds_pages_as_before(start_simulator, fast_policy):
    server = start_simulator(size=770)

    result = fetch_registry(server.base_url, SERVICE_KEY, fast_policy, previous_total=760)

    assert result.status == "complete" and result.requests == 4  # two passes of two pages


@pytest.mark.fault("totalCount ×1000 (a request storm)")
def test_paging_stops_at_the_first_empty_page(start_simulator, fast_policy):
    """an empty page 2 of 3: each pass stops there, so 3 passes ask 6 pages, not 9"""
    server = start_simulator(size=1200, faults="empty_page:2")

    result = fetch_registry(server.base_url, SERVICE_KEY, fast_policy)

    assert result.status == "incomplete" and result.reason.startswith("page 2 came back empty")
    assert result.requests == 2 * fast_policy.max_list_attempts


def test_the_load_takes_its_bound_from_the_last_accepted_load(sim_settings, simulator):
    """the first load stores 1,200; a count of 3,600 the next day is refused after page 1"""
    assert load_day(sim_settings, START_DATE, service_key=SERVICE_KEY).fetch_status == "complete"
    simulator.set_faults("total_count_scale:3")

    outcome = load_day(sim_settings, START_DATE.replace(day=30), service_key=SERVICE_KEY)

    assert outcome.fetch_status == "incomplete" and outcome.requests == 1
    assert "3,600 records, more than the 2,400" in outcome.reason
