"""Every fault the simulator can inject gets the right verdict from `load_day`.

Transient failures are retried and the load is accepted; a refused key fails at once; anything
that would make a partial list look whole (a short page, a moving count, a shifting list, an
empty page) rejects the load. Real simulator on loopback, real dlt load, real DuckDB file.
"""

from __future__ import annotations

import time

import duckdb
import pytest

from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.server import StaticSource
from support.mfds import SERVICE_KEY, START_DATE, pointed_at


def _load(settings, server, policy, **kwargs):
    return load_day(pointed_at(settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=policy, **kwargs)


def _runs(settings) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute(
            "select fetch_status, reason, total_count, fetched_count, distinct_count, duplicate_count, "
            "pages, requests, retries, attempts, result_codes from mfds_raw.load_runs order by started_at"
        ).fetchall()


def _item_count(settings) -> int:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute("select count(*) from mfds_raw.dmf_items").fetchone()[0]


def test_clean_load_of_three_pages_is_complete(tmp_settings, start_simulator, fast_policy):
    server = start_simulator()
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert (outcome.total_count, outcome.fetched_count, outcome.distinct_count) == (1200, 1200, 1200)
    # two passes, the second paged by 499: both read the same 1,200 records at the same places
    assert (outcome.requests, outcome.retries, outcome.duplicate_count) == (6, 0, 0)
    assert server.requests == 6
    assert _runs(tmp_settings) == [("complete", None, 1200, 1200, 1200, 0, 3, 6, 0, 2, "00:6")]
    assert _item_count(tmp_settings) == 1200


@pytest.mark.parametrize("faults", ["http500:2", "http503:2", "http500:1,http503:1"])
def test_server_errors_are_retried_and_the_load_completes(tmp_settings, start_simulator, fast_policy, faults):
    server = start_simulator(faults=faults)
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.retries == 2
    assert outcome.requests == server.requests == 8  # 2 passes of 3 pages, and 2 retries
    assert outcome.distinct_count == 1200


def test_too_many_requests_waits_for_retry_after_and_completes(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="http429:1@retry_after=1")
    started = time.monotonic()
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.retries == 1
    assert outcome.duration_s >= 0.9  # waited the second Retry-After asked for, not the 0.01 s backoff
    assert time.monotonic() - started >= 0.9


def test_answers_slower_than_the_client_timeout_are_retried(tmp_settings, start_simulator, fast_policy):
    from dataclasses import replace

    server = start_simulator(faults="slow:1.5@times=2")
    outcome = _load(tmp_settings, server, replace(fast_policy, read_timeout_s=0.3))
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.retries == 2
    assert "timeout:2" in _runs(tmp_settings)[0][-1]


def test_dropped_connections_are_retried(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="drop:2")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.retries == 2
    assert "connection:2" in _runs(tmp_settings)[0][-1]


def test_unreachable_api_fails_the_load_after_bounded_retries(tmp_settings, start_simulator, fast_policy):
    server = start_simulator()
    settings = pointed_at(tmp_settings, server)
    server.stop()  # nothing listens on that port any more
    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "failed"
    assert "connection to the MFDS API failed" in outcome.reason
    assert outcome.requests == fast_policy.max_retries + 1
    assert _runs(tmp_settings)[0][0] == "failed"


def test_persistent_server_errors_fail_the_load(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="http500:100")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "failed"
    assert outcome.reason == "the MFDS API kept answering HTTP 500 (page 1, 4 tries)"
    assert outcome.requests == server.requests == 4


def test_unknown_service_key_fails_at_once_naming_the_code(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="xml_code:30")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "failed"
    assert server.requests == outcome.requests == 1
    assert outcome.retries == 0
    assert "does not know this service key (code 30)" in outcome.reason
    assert SERVICE_KEY not in outcome.reason and SERVICE_KEY not in outcome.summary()
    assert _item_count(tmp_settings) == 0


def test_wrong_key_is_refused_by_the_simulator_itself(tmp_settings, start_simulator, fast_policy):
    server = start_simulator()
    outcome = load_day(
        pointed_at(tmp_settings, server), START_DATE, service_key="not-the-key", retry_policy=fast_policy
    )
    assert outcome.fetch_status == "failed"
    assert "(code 30)" in outcome.reason
    assert server.requests == 1


@pytest.mark.parametrize("code", ["20", "22", "31", "32"])
def test_refused_key_codes_are_never_retried(tmp_settings, start_simulator, fast_policy, code):
    server = start_simulator(faults=f"xml_code:{code}")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "failed"
    assert f"(code {code})" in outcome.reason
    assert server.requests == 1


def test_transient_portal_error_code_is_retried(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="xml_code:01@times=2")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.retries == 2


def test_truncated_last_page_rejects_load(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="truncate_last_page")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert outcome.reason.startswith("received 1,100 of the 1,200 records the API reported")
    assert outcome.fetched_count == 1100
    status, reason, total, fetched, *_ = _runs(tmp_settings)[0]
    assert (status, total, fetched) == ("incomplete", 1200, 1100)
    assert _item_count(tmp_settings) == 1100  # what was received is kept for the audit trail


def test_moving_total_count_rejects_load(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="total_count_shift:5")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert "totalCount moved from 1,200 to 1,205 during the load" in outcome.reason


def test_a_record_listed_twice_at_the_same_places_in_both_passes_is_kept_once(
    tmp_settings, start_simulator, fast_policy
):
    """The list holds one record twice at the same places on every pass (a stable duplicate): two
    passes agree, the load is complete and the record is stored once with its repeat count (the
    models list it and a share gates a day with too many)."""
    server = start_simulator(faults="duplicate_across_pages")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete" and outcome.reason is None
    status, _, total, fetched, distinct, duplicates, *_rest = _runs(tmp_settings)[0]
    assert (status, total, fetched, distinct, duplicates) == ("complete", 1201, 1201, 1200, 1)
    assert _runs(tmp_settings)[0][9] == 2
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        assert con.execute(
            "select item_position, repeat_count from mfds_raw.dmf_load_items where repeat_count > 1"
        ).fetchall() == [(7, 2)]


def test_shifting_repeats_reject_load(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="duplicate_shifting")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert outcome.reason.startswith("the API reported 1,200 records but listed 1,199 distinct ones")
    assert _runs(tmp_settings)[0][9] == 3  # bounded: three passes, then give up
    assert server.requests == 9


def test_list_that_shifts_only_once_is_accepted_on_the_next_pass(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="duplicate_shifting")
    settings = pointed_at(tmp_settings, server)
    # The list moves during the first pass only: afterwards it holds still.
    original_shift = server._state.shift

    def shift_once() -> None:
        if server._state.shift_count == 0:
            original_shift()

    server._state.shift = shift_once
    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.duplicate_count == 0 and outcome.distinct_count == 1200


def test_empty_page_rejects_load(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="empty_page:2")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert outcome.reason.startswith("page 2 came back empty although the API reported 1,200 records")


@pytest.mark.parametrize("shape", ["single", "list", "empty_string", "object"])
def test_every_tolerated_items_shape_is_accepted(tmp_settings, start_simulator, fast_policy, shape):
    server = start_simulator(faults=f"items_shape:{shape}", size=1001)  # last page holds one item
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert outcome.distinct_count == 1001


def test_empty_registry_is_a_complete_load_of_zero_records(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(StaticSource([]), faults="items_shape:empty_string")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete"  # the zero_records gate in dbt rejects it
    assert (outcome.total_count, outcome.distinct_count) == (0, 0)


def test_a_list_that_moved_once_while_paged_is_read_again_and_complete(tmp_settings, start_simulator, fast_policy):
    """Pass 1 misses the record after page 1 and sees a newcomer; passes 2 and 3 agree."""
    server = start_simulator(faults="list_moves:withdraw")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert _runs(tmp_settings)[0][9] == 3
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        names = {row[0] for row in con.execute("select ingr_kor_name from mfds_raw.dmf_items").fetchall()}
    assert "시뮬레이션이동신규원료" not in names and _item_count(tmp_settings) == 1200


@pytest.mark.parametrize("move", ["withdraw", "to_end"])
def test_a_list_that_keeps_moving_is_rejected(tmp_settings, start_simulator, fast_policy, move):
    server = start_simulator(faults=f"list_moves:{move}@times=3")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert outcome.reason == (
        "the list changed while it was read: 1 of 1,200 places hold another record in the next pass "
        "from position 499 (3 passes)"
    )


def test_a_last_page_repeating_page_one_in_every_pass_is_left_to_the_quarantine_share_gate(
    tmp_settings, start_simulator, fast_policy
):
    """The same 5 records repeated at the same places in both passes cannot be told from
    duplicates the registry holds by the loader: the load is complete with 5 duplicates, and the
    models' gate quarantine_share rejects the day (tests/load/test_consistent_lists.py)."""
    server = start_simulator(faults="repeat_first:5")
    outcome = _load(tmp_settings, server, fast_policy)
    assert outcome.fetch_status == "complete"
    status, _, total, fetched, distinct, duplicates, *_rest = _runs(tmp_settings)[0]
    assert (status, total, fetched, distinct, duplicates) == ("complete", 1200, 1200, 1195, 5)
