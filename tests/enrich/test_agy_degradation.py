"""The ten degradation cases of design §2.5: whatever agy does, enrich_day returns a value,
records a run the report can show (status + badge), and never raises."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, date, datetime

import pytest

from dmf_watch.core.config import today_in_seoul
from dmf_watch.enrich.badges import BADGE_TEXT
from dmf_watch.enrich.daily_briefing import enrich_day
from fake_agy.support import Marts, fake_calls, fake_env, make_settings, query, sample_events, signal, unmatched_term

# the fake agy runs as a child process (timeouts, kills, the circuit): the integration tier.
pytestmark = pytest.mark.integration

DAY = date(2026, 10, 8)


@pytest.fixture
def day(tmp_path):
    def build(config: str = "", binary=None):
        kwargs = {} if binary is None else {"binary": binary}
        settings = make_settings(tmp_path, config=config, **kwargs)
        Marts(settings.duckdb_path).add_day(DAY, sample_events(DAY, 6), [signal()], [unmatched_term()])
        return settings

    return build


def latest_run(settings):
    rows = query(
        settings,
        "select status, skip_reason, badge, headline from enrichment.enrichment_run "
        "where as_of_date = ? order by created_at desc limit 1",
        [DAY],
    )
    assert rows, "every outcome must leave a run row for the report"
    return rows[0]


def calls(settings):
    return query(
        settings,
        "select status, error_kind, effort, schema_valid, error, transport "
        "from enrichment.agy_calls order by started_at, attempt",
    )


def test_missing_binary_is_launch_failed(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = day(binary=tmp_path / "no" / "agy")
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "binary_missing")
    assert latest_run(settings)[:3] == ("FAILED", "binary_missing", BADGE_TEXT["binary_missing"])
    assert calls(settings)[0][:2] == ("LAUNCH_FAILED", "launch_failed")
    assert fake_calls(log) == []


def test_exit_one_with_error_envelope_fails_softly(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "error")
    settings = day()
    outcome = enrich_day(settings, DAY)
    assert not outcome.ok and outcome.skip_reason == "agy_error"
    assert latest_run(settings)[0] == "FAILED"
    assert len(fake_calls(log)) == 2  # an unclassified error is retried once, no more
    assert all(c[0] == "ERROR" for c in calls(settings))


def test_timeout_kills_the_process(day, tmp_path, monkeypatch):
    pidfile = tmp_path / "agy.pid"
    fake_env(monkeypatch, tmp_path, "timeout", FAKE_AGY_SLEEP="60", FAKE_AGY_PIDFILE=str(pidfile))
    settings = day('print_timeout = "1s"\nhard_kill_grace_seconds = 1\n')
    started = time.monotonic()
    outcome = enrich_day(settings, DAY)
    assert time.monotonic() - started < 30
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "timeout")
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert calls(settings)[0][:2] == ("TIMEOUT", "timeout")


def test_polluted_answer_is_recovered_and_noise_recorded(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "polluted")
    settings = day()
    outcome = enrich_day(settings, DAY)
    assert outcome.ok and outcome.comments == 6
    assert len(fake_calls(log)) == 1
    status, kind, _, valid, error, _ = calls(settings)[0]
    assert valid == 1 and "noise_keys_stripped" in error and "toolAction" in error


def test_empty_response_is_schema_invalid(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "empty")
    settings = day()
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "schema_invalid")
    assert len(fake_calls(log)) == 2
    assert latest_run(settings)[2] == BADGE_TEXT["schema_invalid"]


def test_enum_violation_gets_one_stricter_retry_then_gives_up(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "enum")
    settings = day()
    outcome = enrich_day(settings, DAY)
    assert outcome.skip_reason == "schema_invalid"
    made = fake_calls(log)
    assert [c["effort"] for c in made] == ["medium", "high"]
    assert [c[3] for c in calls(settings)] == [0, 0]
    retry_stdout = list((settings.state_dir / "agy_runs").glob("*/agy_retry1.stdout.json"))
    assert retry_stdout, "the retry keeps its own stdout file"


def test_enum_violation_then_good_answer_succeeds_on_retry(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "enum,ok")
    settings = day()
    assert enrich_day(settings, DAY).ok
    assert len(fake_calls(log)) == 2


def test_token_cap_prevents_the_call(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = day()
    (settings.state_dir / "agy_budget.json").write_text(
        json.dumps({"day": today_in_seoul().isoformat(), "calls": 0, "tokens": 300_000}), encoding="utf-8"
    )
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "token_cap")
    assert fake_calls(log) == []
    assert latest_run(settings)[2] == BADGE_TEXT["token_cap"]


def test_call_cap_prevents_the_call(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = day()
    (settings.state_dir / "agy_budget.json").write_text(
        json.dumps({"day": today_in_seoul().isoformat(), "calls": 4, "tokens": 0}), encoding="utf-8"
    )
    assert enrich_day(settings, DAY).skip_reason == "call_cap"
    assert fake_calls(log) == []


def test_open_circuit_prevents_the_call(day, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings = day()
    (settings.state_dir / "agy_circuit.json").write_text(
        json.dumps(
            {"state": "OPEN", "failures": 3, "opened_at": datetime.now(UTC).isoformat(), "last_error_kind": "timeout"}
        ),
        encoding="utf-8",
    )
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "circuit_open")
    assert fake_calls(log) == []
    assert latest_run(settings)[2] == BADGE_TEXT["circuit_open"]


def test_non_json_stdout_is_invalid(day, tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "nonjson")
    settings = day()
    outcome = enrich_day(settings, DAY)
    assert outcome.skip_reason == "invalid_output"
    assert calls(settings)[0][0] == "INVALID"


def test_cp949_stdout_is_absorbed_without_exception(day, tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "cp949")
    settings = day()
    outcome = enrich_day(settings, DAY)  # must not raise
    assert outcome.status in ("OK", "FAILED")
    assert latest_run(settings)[0] == outcome.status
    if outcome.ok:
        assert "\ufffd" in latest_run(settings)[3]  # undecodable bytes became U+FFFD


def test_quota_opens_the_circuit_and_next_day_makes_no_call(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "quota,ok")
    settings = make_settings(tmp_path)
    marts = Marts(settings.duckdb_path)
    nxt = date(2026, 10, 9)
    marts.add_day(DAY, sample_events(DAY, 4))
    marts.add_day(nxt, sample_events(nxt, 4))
    first = enrich_day(settings, DAY)
    assert (first.status, first.skip_reason) == ("SKIPPED", "quota")
    assert len(fake_calls(log)) == 1  # quota is never retried
    state = json.loads((settings.state_dir / "agy_circuit.json").read_text())
    assert state["state"] == "OPEN" and state["last_error_kind"] == "quota"
    second = enrich_day(settings, nxt)
    assert second.skip_reason == "circuit_open"
    assert len(fake_calls(log)) == 1


def test_three_failures_open_the_circuit(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "auth")
    settings = make_settings(tmp_path)
    marts = Marts(settings.duckdb_path)
    days = [date(2026, 10, d) for d in (5, 6, 7, 8)]
    for d in days:
        marts.add_day(d, sample_events(d, 3))
    reasons = [enrich_day(settings, d).skip_reason for d in days]
    assert reasons == ["auth", "auth", "auth", "circuit_open"]
    assert len(fake_calls(log)) == 3
