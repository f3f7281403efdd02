"""The design's AI-failure table (§2.4) mapped to alerts, one test per row: the real enrich step
drives the fake agy into each failure, then the real alert policy judges the day. Alerts come
once on a change of state, never every day the failure stays."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import duckdb
import pytest

from dmf_watch.core import warehouse as boundary
from dmf_watch.core.config import today_in_seoul
from dmf_watch.enrich import enrichment_store as enrich_store
from dmf_watch.enrich.anomaly import explain_anomaly
from dmf_watch.enrich.daily_briefing import enrich_day
from dmf_watch.enrich.runner import base_run, write_run
from dmf_watch.notify.day import notify_day
from fake_agy.support import Marts, fake_env, make_settings, sample_events, signal

# each day asks the fake agy, a child process: the integration tier.
pytestmark = pytest.mark.integration

DAYS = [date(2026, 10, 1) + timedelta(days=n) for n in range(8)]


def warehouse(tmp_path, days=2, config="", **kwargs):
    settings = make_settings(tmp_path, config=config, **kwargs)
    marts = Marts(settings.duckdb_path)
    for day in DAYS[:days]:
        marts.add_day(day, sample_events(day, 4), [signal()])
    return settings


def alerts(settings):
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute("select as_of_date, level, kind from notify.alerts order by as_of_date, kind").fetchall()


def enrich_and_notify(settings, day):
    reason = enrich_day(settings, day).skip_reason
    outcome = notify_day(settings, day, env={})
    return reason, outcome.alerts


def test_binary_missing_raises_one_info_alert_not_one_per_day(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path, binary=tmp_path / "no" / "agy")
    assert enrich_and_notify(settings, DAYS[0]) == ("binary_missing", ["ai_binary_missing"])
    assert enrich_and_notify(settings, DAYS[1]) == ("binary_missing", [])
    assert alerts(settings) == [(DAYS[0], "INFO", "ai_binary_missing")]


def test_login_needed_raises_one_warn_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "auth")
    settings = warehouse(tmp_path)
    assert enrich_and_notify(settings, DAYS[0]) == ("auth", ["ai_auth"])
    assert enrich_and_notify(settings, DAYS[1]) == ("auth", [])
    assert alerts(settings) == [(DAYS[0], "WARN", "ai_auth")]


def test_quota_raises_one_info_alert_when_the_circuit_opens_and_none_while_open(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "quota")
    settings = warehouse(tmp_path)
    assert enrich_and_notify(settings, DAYS[0]) == ("quota", ["ai_quota"])
    assert enrich_and_notify(settings, DAYS[1]) == ("circuit_open", [])
    assert alerts(settings) == [(DAYS[0], "INFO", "ai_quota")]


def test_token_cap_raises_one_info_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path)
    (settings.state_dir / "agy_budget.json").write_text(
        json.dumps({"day": today_in_seoul().isoformat(), "calls": 0, "tokens": 300_000}), encoding="utf-8"
    )
    assert enrich_and_notify(settings, DAYS[0]) == ("token_cap", ["ai_token_cap"])
    assert enrich_and_notify(settings, DAYS[1]) == ("token_cap", [])
    assert alerts(settings) == [(DAYS[0], "INFO", "ai_token_cap")]


def test_timeout_raises_no_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "timeout", FAKE_AGY_SLEEP="30")
    settings = warehouse(tmp_path, days=1, config='print_timeout = "2s"\nhard_kill_grace_seconds = 1\n')
    assert enrich_and_notify(settings, DAYS[0]) == ("timeout", [])
    assert alerts(settings) == []


def test_an_invalid_answer_raises_no_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "empty")
    settings = warehouse(tmp_path)
    assert enrich_and_notify(settings, DAYS[0]) == ("schema_invalid", [])
    assert enrich_and_notify(settings, DAYS[1]) == ("schema_invalid", [])
    assert alerts(settings) == []


def test_invalid_answers_on_five_of_seven_days_raise_one_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "empty")
    # The circuit (three failures) and the caps (one budget for "today") would hide the streak.
    settings = warehouse(
        tmp_path, days=7, config="circuit_failure_threshold = 100\ndaily_call_cap = 100\ndaily_token_cap = 100000000\n"
    )
    raised = [enrich_and_notify(settings, day) for day in DAYS[:7]]
    assert [reason for reason, _ in raised] == ["schema_invalid"] * 7
    assert [kinds for _, kinds in raised] == [[], [], [], [], ["ai_invalid_streak"], [], []]
    assert alerts(settings) == [(DAYS[4], "INFO", "ai_invalid_streak")]


def test_an_open_circuit_raises_no_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path, days=1)
    (settings.state_dir / "agy_circuit.json").write_text(
        json.dumps(
            {"state": "OPEN", "failures": 3, "opened_at": datetime.now(UTC).isoformat(), "last_error_kind": "timeout"}
        ),
        encoding="utf-8",
    )
    assert enrich_and_notify(settings, DAYS[0]) == ("circuit_open", [])
    assert alerts(settings) == []


def test_no_changes_and_disabled_raise_no_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)
    Marts(settings.duckdb_path).add_day(DAYS[0], [])
    assert enrich_and_notify(settings, DAYS[0]) == ("diff_empty", [])
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    Marts(settings.duckdb_path).add_day(DAYS[1], sample_events(DAYS[1], 3))
    assert enrich_and_notify(settings, DAYS[1]) == ("disabled", [])
    assert alerts(settings) == []


def test_action_required_anomaly_raises_the_days_level_to_warn_and_the_day_goes_on(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, FAKE_AGY_ASSESSMENT="ACTION_REQUIRED")
    settings = warehouse(tmp_path, days=1)
    assert enrich_day(settings, DAYS[0]).ok
    assert explain_anomaly(settings, DAYS[0]).ok
    outcome = notify_day(settings, DAYS[0], outbox=tmp_path / "outbox")
    assert outcome.alerts == ["ai_action_required"]
    assert alerts(settings) == [(DAYS[0], "WARN", "ai_action_required")]
    with duckdb.connect(str(settings.duckdb_path)) as con:
        levels = dict(con.execute("select message_kind, level from notify.deliveries").fetchall())
    assert levels == {"daily": "WARN", "alert": "WARN"}  # INFO day raised to WARN
    daily = (tmp_path / "outbox" / f"daily_{DAYS[0]}.txt").read_text(encoding="utf-8")
    assert "조치 필요(ACTION_REQUIRED)" in daily


def test_a_monitor_anomaly_leaves_the_day_at_info(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path, days=1)
    assert explain_anomaly(settings, DAYS[0]).ok
    notify_day(settings, DAYS[0], outbox=tmp_path / "outbox")
    with duckdb.connect(str(settings.duckdb_path)) as con:
        assert con.execute("select level from notify.deliveries").fetchall() == [("INFO",)]
    assert alerts(settings) == []


def test_proposals_pending_seven_days_are_never_an_alert(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path, days=1)
    with boundary.connect(settings) as con:  # the store names its schema from the connection
        enrich_store.ensure_schema(con)
        enrich_store.insert_proposals(
            con,
            [
                {
                    "proposal_id": "p-old",
                    "as_of_date": DAYS[0] - timedelta(days=10),
                    "kind": "ingredient_alias",
                    "watch_term": "Formoterol Fumarate",
                    "candidate_ingredient_name": "포르모테롤푸마르산염",
                    "confidence": 0.9,
                    "status": "PENDING",
                    "created_at": datetime.now(UTC) - timedelta(days=10),
                }
            ],
        )
    write_run(settings, base_run("r-ok", DAYS[0], "daily", "OK", None, None, headline="요약"))
    assert notify_day(settings, DAYS[0], env={}).alerts == []
    assert alerts(settings) == []


def test_a_day_without_events_sends_one_line_or_nothing_when_configured(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)
    Marts(settings.duckdb_path).add_day(DAYS[0], [])
    notify_day(settings, DAYS[0], outbox=tmp_path / "outbox")
    line = (tmp_path / "outbox" / f"daily_{DAYS[0]}.txt").read_text(encoding="utf-8").strip()
    assert line.startswith(f"DMF Watch {DAYS[0]}: 변경 없음") and "\n" not in line
    (settings.state_dir / "notify.toml").write_text('[notify]\nempty_day = "none"\n', encoding="utf-8")
    Marts(settings.duckdb_path).add_day(DAYS[1], [])
    notify_day(settings, DAYS[1], outbox=tmp_path / "outbox")
    assert not (tmp_path / "outbox" / f"daily_{DAYS[1]}.txt").exists()


def test_monday_also_sends_the_weekly_message(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)
    monday = date(2026, 10, 5)
    Marts(settings.duckdb_path).add_day(monday, sample_events(monday, 3))
    notify_day(settings, monday, outbox=tmp_path / "outbox")
    weekly = (tmp_path / "outbox" / f"weekly_{monday}.txt").read_text(encoding="utf-8")
    assert weekly.startswith("DMF Watch 주간 리포트") and f"dmf_weekly_{monday:%Y%m%d}.xlsx" in weekly


def test_a_day_without_any_load_sends_nothing_and_raises_nothing(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = warehouse(tmp_path, days=1)
    outcome = notify_day(settings, DAYS[3], outbox=tmp_path / "outbox")
    assert (outcome.alerts, outcome.written) == ([], [])
