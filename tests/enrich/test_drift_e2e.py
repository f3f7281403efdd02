"""The real sample served with camelCase keys, end to end: `dmf run`'s day job rejects the load
naming the schema change, publishes nothing, runs the UC2b drift diagnosis with the (fake) agy
once, shows it on that day's report, and the next normal day is accepted with no false WITHDRAWN.

Each test starts from the same baseline day, replayed with the AI off before the fake agy is set
up (`baseline`): it is built once for the session (support/replays.py shares a replay with
nothing outside the warehouse to show, and other modules start from the real sample as DAY_1
too) instead of once per test. A first day has no events, so agy has nothing to brief on it
either way; the days after it run with the fake agy, as each test sets them up.
"""

from __future__ import annotations

import json
from datetime import date

import openpyxl
import pytest

from dmf_watch.enrich.daily_briefing import enrich_day
from dmf_watch.pipelines.mfds.settings import SOURCE_FIELDS
from dmf_watch.reports.drift_block import AI_TITLE, DRIFT_NO_GATE
from dmf_watch.simulator.server import StaticSource
from fake_agy.support import fake_calls, fake_env
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days, settings_in, settings_with_fake_agy

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 10, 8), date(2026, 10, 9), date(2026, 10, 10)
RENAMED = [name for name in SOURCE_FIELDS if "_" in name]  # BIZRNO stays BIZRNO in camelCase


def dashboard_text(path) -> str:
    sheet = openpyxl.load_workbook(path)["요약"]
    return "\n".join(str(cell.value) for row in sheet.iter_rows() for cell in row if cell.value is not None)


def baseline(real_sample, tmp_path):
    """The real sample accepted as DAY_1 through the daily job, the AI off: a copy of the replay
    the module shares; the settings with the fake agy for the days that follow."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DMF_AI_DISABLED", "1")
        (first,) = run_days(settings_in(tmp_path), StaticSource(real_sample, DAY_1), [(DAY_1, None)], SERVICE_KEY)
    return settings_with_fake_agy(tmp_path), first


def events_of(settings, as_of) -> dict[str, int]:
    return dict(
        query(
            settings,
            "select event_type, count(*) from marts.dmf_events where as_of_date = ? group by event_type",
            [as_of],
        )
    )


@pytest.mark.fault("the API renames its fields (camelCase keys)")
def test_real_sample_with_camelcase_keys_is_rejected_diagnosed_and_the_next_day_is_clean(
    real_sample, tmp_path, monkeypatch
):
    """real sample with camelCase keys: exit 2, reason names the schema change, 0 events, AI diagnosis on the report"""
    settings, first = baseline(real_sample, tmp_path)
    log = fake_env(monkeypatch, tmp_path, "ok")
    assert enrich_day(settings, DAY_1).skip_reason == "diff_empty"  # agy on: still no call for a baseline
    source = StaticSource(real_sample, DAY_1)

    drifted, rerun, after = run_days(
        settings,
        source,
        [(DAY_2, "camelcase_keys"), (DAY_2, "camelcase_keys"), (DAY_3, None)],
        SERVICE_KEY,
    )

    assert (first.verdict, first.exit_code) == ("accepted", 0)
    assert (drifted.verdict, drifted.exit_code) == ("rejected", 2)
    assert "the API's item schema changed: missing DMF_PERMIT_NO" in drifted.reason
    assert "unknown " in drifted.reason and "dmfPermitNo" in drifted.reason
    assert events_of(settings, DAY_2) == {}  # nothing of any kind published for the drifted day
    assert (rerun.verdict, rerun.exit_code) == ("rejected", 2)

    # The diagnosis ran once: the re-run of the same drift called agy zero more times.
    calls = fake_calls(log)
    assert len(calls) == 1
    [(status, summary)] = query(
        settings, "select status, summary_md from enrichment.enrichment_run where kind = 'drift' and status = 'OK'"
    )
    assert status == "OK" and summary
    proposal = json.loads((settings.state_dir / "proposals" / f"{DAY_2:%Y%m%d}_uc2b_drift.json").read_text())
    assert proposal["status"] == "PENDING" and proposal["diagnosis"] == summary
    # The fake proposes one path it can quote from the samples; its invented one was dropped.
    assert [i["json_path"] for i in proposal["items"]] == ["response.body.items.item[].dmfPermitNo"]
    assert proposal["items"][0]["field"] in RENAMED

    report = settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"
    text = dashboard_text(report)
    assert "거부" in text and "item schema changed" in text
    assert ", ".join(RENAMED) in text  # the fields that went missing
    assert "dmfPermitNo" in text  # the keys that appeared
    assert AI_TITLE in text and summary in text  # the AI text, marked as AI
    assert DRIFT_NO_GATE in text  # the banner says the loader's schema check stopped the day

    assert (after.verdict, after.exit_code) == ("accepted", 0)
    assert events_of(settings, DAY_3) == {}  # same registry as DAY_1: no false WITHDRAWN, nothing new
    assert query(settings, "select count(*) from marts.dmf_events where event_type = 'WITHDRAWN'") == [(0,)]


@pytest.mark.fault("the API renames its fields (camelCase keys)")
def test_without_agy_the_drift_day_report_shows_the_fields_and_a_badge(real_sample, tmp_path, monkeypatch):
    """AI off: the drifted day is still rejected and its report names the fields with a badge instead of AI text"""
    settings, _ = baseline(real_sample, tmp_path)
    fake_env(monkeypatch, tmp_path, "ok")
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    (drifted,) = run_days(settings, StaticSource(real_sample, DAY_1), [(DAY_2, "camelcase_keys")], SERVICE_KEY)
    assert (drifted.verdict, drifted.exit_code) == ("rejected", 2)
    text = dashboard_text(settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx")
    assert ", ".join(RENAMED) in text and "AI 진단: 사용 안 함(설정)" in text


@pytest.mark.fault("the API grows an unknown item field")
def test_one_extra_unknown_key_is_rejected_naming_it_with_no_events(real_sample, tmp_path, monkeypatch):
    """an item with one extra unknown key: exit 2, reason names the key, 0 events"""
    settings, _ = baseline(real_sample, tmp_path)
    fake_env(monkeypatch, tmp_path, "ok")
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    (grown,) = run_days(settings, StaticSource(real_sample, DAY_1), [(DAY_2, "extra_key:remarkText")], SERVICE_KEY)
    assert (grown.verdict, grown.exit_code) == ("rejected", 2)
    assert "unknown remarkText" in grown.reason
    assert events_of(settings, DAY_2) == {}
