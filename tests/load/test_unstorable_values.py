"""Raw values the warehouse cannot store as text (a lone surrogate, a NUL) are stored escaped and
come back exactly; the load is judged like any other instead of failing every morning. Real
loads over loopback HTTP, a real `run_day` with its build."""

from __future__ import annotations

import dataclasses

import pytest

from dmf_watch.commands.run import run_day
from dmf_watch.pipelines.mfds.helpers import ESCAPE_MARK, received, storable
from dmf_watch.simulator.server import SimulatorServer, StaticSource
from support.mfds import SERVICE_KEY, START_DATE, small_registry
from support.scenarios import query

HOSTILE = {"INGR_KOR_NAME": "암로디핀\ud800베실산염", "MNFCTR_NAME": "Zhejiang\x00Huahai"}


@pytest.mark.parametrize(
    "value",
    ["plain", "", "암로디핀", "\ud800", "a\x00b", ESCAPE_MARK + "looks escaped", "\\u241b", '"quoted"', "\udcff"],
)
def test_storable_values_come_back_exactly(value):
    stored = storable(value)
    stored.encode("utf-8")  # whatever was received, what is stored is UTF-8 text without NUL
    assert "\x00" not in stored
    assert received(stored) == value


def test_ordinary_values_are_stored_untouched():
    assert [storable(v) for v in ("plain", "", "암로디핀", None)] == ["plain", "", "암로디핀", None]


@pytest.mark.e2e
@pytest.mark.fault("a lone surrogate or a NUL in one record")
def test_a_record_with_a_lone_surrogate_and_a_nul_is_stored_escaped_and_the_day_is_accepted(tmp_settings):
    """a lone surrogate and a NUL in one record: stored escaped, read back exactly, the record
    quarantined (nothing to diff it as), the day accepted, exit 0"""
    items = [dict(item) for item in small_registry(40).items_for(1)]
    items[3].update(HOSTILE)
    with SimulatorServer(StaticSource(items), service_key=SERVICE_KEY) as server:
        settings = dataclasses.replace(tmp_settings, api_base_url=server.base_url)
        outcome = run_day(settings, START_DATE, service_key=SERVICE_KEY, echo=lambda line: None)

    assert outcome.exit_code == 0 and outcome.verdict == "accepted"
    stored = query(
        settings,
        "select ingr_kor_name, mnfctr_name from mfds_raw.dmf_items where dmf_permit_no = ?",
        [items[3]["DMF_PERMIT_NO"]],
    )
    assert [tuple(received(v) for v in row) for row in stored] == [tuple(HOSTILE.values())]
    assert query(settings, "select fetch_status, distinct_count from mfds_raw.load_runs") == [("complete", 40)]
    assert query(
        settings,
        "select item_position, quarantine_kind, quarantine_detail from intermediate.int_load_items_quarantined",
    ) == [(3, "unreadable_text", "ingredient_name: 짝 없는 서로게이트, manufacturer: NUL 문자")]
