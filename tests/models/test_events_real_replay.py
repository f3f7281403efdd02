"""The real tails of two MFDS dumps 13 days apart, replayed through the whole pipeline."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, query, run_days
from support.worlds import REAL_TAILS, REAL_TAILS_DAYS

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2 = date(2026, 9, 25), date(2026, 10, 8)


def test_real_tails_give_22_new_1_renumbered_and_no_withdrawal(real_data_dir, shelf, tmp_path):
    tail_a = [r for r in read_jsonl(real_data_dir / "tail_A_2026-09-23.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    tail_b = [r for r in read_jsonl(real_data_dir / "tail_B_2026-10-08.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    assert (len(tail_a), len(tail_b)) == (143, 165)
    assert REAL_TAILS_DAYS == (DAY_1, DAY_2)

    # the two days through the real daily job, each accepted (support/worlds.py), copied here
    with shelf.copied(REAL_TAILS, tmp_path / "tails") as settings:
        assert query(settings, "select as_of_date, fetched_count from mfds_raw.load_runs order by 1") == [
            (DAY_1, len(tail_a)),
            (DAY_2, len(tail_b)),
        ]
    counts = dict(query(settings, "select event_type, count(*) from marts.dmf_events group by 1"))
    assert counts == {"NEW": 22, "CHANGED": 1}
    assert query(settings, "select count(*) from marts.dmf_events where event_type = 'NEW' and permit_no is null") == [
        (4,)
    ]
    assert query(settings, "select as_of_date from marts.dmf_events group by 1") == [(DAY_2,)]
    assert query(
        settings,
        "select field_name, before_value, after_value, change_kind, change_detail from marts.dmf_event_field_changes",
    ) == [("permit_no", "20130329-190-I-83-01(1)", "20260922-190-I-769-04", "substantive", "renumbered")]
    assert query(settings, "select is_baseline, verdict from marts.dmf_loads order by as_of_date") == [
        (True, "accepted"),
        (False, "accepted"),
    ]


def test_every_real_registration_number_parses(real_data_dir, tmp_settings):
    """The 367-record real sample: every number falls into a known generation."""
    sample = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")

    run_days(settings, DaysSource({DAY_2: sample}), [(DAY_2, None)], SERVICE_KEY)

    statuses = dict(query(settings, "select permit_parse_status, count(*) from staging.stg_mfds__items group by 1"))
    assert statuses == {"five_part": 164, "four_part": 107, "su_nd": 76, "nd": 20}
    assert query(settings, "select fired from marts.dmf_signals where signal_id = 'permit_parse_fail_surge'") == [
        (False,)
    ]
