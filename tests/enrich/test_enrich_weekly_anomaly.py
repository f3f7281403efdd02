"""Weekly commentary (off by default), standalone anomaly explanation, dormant drift diagnosis."""

from __future__ import annotations

import json
from datetime import date, timedelta

import duckdb
import pytest

from dmf_watch.enrich.anomaly import explain_anomaly
from dmf_watch.enrich.drift import diagnose_api_drift
from dmf_watch.enrich.weekly_briefing import enrich_week
from fake_agy.support import Marts, fake_calls, fake_env, make_settings, query, sample_events, signal
from support.report_warehouse import build_reporting_models

# the weekly and anomaly runs ask the fake agy, a child process: the integration tier.
pytestmark = pytest.mark.integration

DAY = date(2026, 10, 8)


def week(tmp_path, config=""):
    settings = make_settings(tmp_path, config=config)
    marts = Marts(settings.duckdb_path)
    for offset in range(7):
        d = DAY - timedelta(days=offset)
        marts.add_day(d, sample_events(d, 3), [signal()] if offset == 0 else [])
    with duckdb.connect(str(settings.duckdb_path)) as con:
        build_reporting_models(con)  # the weekly models the workbook and the weekly AI read
    return settings


def test_weekly_is_off_by_default(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = week(tmp_path)
    outcome = enrich_week(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "disabled")
    assert fake_calls(log) == []


def test_weekly_commentary_when_enabled(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "invent")
    settings = week(tmp_path, "weekly_enabled = true\n")
    outcome = enrich_week(settings, DAY)
    assert outcome.ok, outcome.summary()
    call = fake_calls(log)[0]
    assert (call["model"], call["effort"]) == ("gemini-3.1-pro-high", "high")
    headline, commentary, kind = query(settings, "select headline, commentary, kind from enrichment.enrichment_run")[0]
    assert kind == "weekly" and "(모델 추정)" in commentary
    keys = [
        r[0] for r in query(settings, "select item_key from enrichment.enrichment where kind = 'weekly_commentary'")
    ]
    assert "00000000-000-X-000" not in keys and outcome.dropped == {"notable_unknown_key": 1}
    assert enrich_week(settings, DAY).reused and len(fake_calls(log)) == 1


def test_explain_anomaly_keeps_only_fired_signals(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "invent")
    settings = week(tmp_path)
    outcome = explain_anomaly(settings, DAY)
    assert outcome.ok and outcome.anomaly_notes == 1 and outcome.dropped == {"anomaly_unknown_signal": 1}
    assert query(settings, "select overall_assessment from enrichment.enrichment_run where kind = 'anomaly'") == [
        ("MONITOR",)
    ]
    [(importance, detail)] = query(
        settings, "select importance, detail_json from enrichment.enrichment where kind = 'anomaly_hypothesis'"
    )
    assert importance == "SOURCE_SIDE" and json.loads(detail) == {
        "verdict": "SOURCE_SIDE",
        "suggested_action": "상위 신청인의 건수를 원천 화면과 대조하십시오.",
        "alternative_hypothesis": "부분 응답일 수 있습니다.",
        "confidence": 0.6,
    }
    assert explain_anomaly(settings, DAY).reused and len(fake_calls(log)) == 1


def test_explain_anomaly_without_signals_makes_no_call(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = week(tmp_path)
    assert explain_anomaly(settings, DAY - timedelta(days=1)).skip_reason == "no_signals"
    assert fake_calls(log) == []


def test_drift_diagnosis_is_off_when_drift_enabled_is_false(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path, config="drift_enabled = false\n")
    Marts(settings.duckdb_path)
    outcome = diagnose_api_drift(
        settings,
        DAY,
        expected_fields={"DMF_PERMIT_NO": "body.items.item[].DMF_PERMIT_NO"},
        samples=[{"permitNo": "20190801-211-J-399"}],
    )
    assert outcome.skip_reason == "disabled" and fake_calls(log) == []


def test_drift_diagnosis_queues_only_evidenced_candidates(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)  # on by default: a drift rejection must be diagnosed
    Marts(settings.duckdb_path)
    samples = [{"response": {"body": {"items": {"item": [{"permitNo": "20190801-211-J-399"}]}}}}]
    outcome = diagnose_api_drift(
        settings, DAY, expected_fields={"DMF_PERMIT_NO": "body.items.item[].DMF_PERMIT_NO"}, samples=samples
    )
    assert outcome.ok and outcome.proposals_queued == 1
    assert outcome.dropped == {"candidate_without_evidence": 1}
    data = json.loads((settings.state_dir / "proposals" / "20261008_uc2b_drift.json").read_text())
    assert data["items"][0]["json_path"].endswith("permitNo") and data["status"] == "PENDING"
