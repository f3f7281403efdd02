"""enrich_day end to end against contract-shaped marts in a temp DuckDB and the fake agy."""

from __future__ import annotations

import json
from datetime import date

import duckdb
import pytest

from dmf_watch.enrich.daily_briefing import enrich_day
from fake_agy.support import Marts, fake_calls, fake_env, make_settings, query, sample_events, signal, unmatched_term

# each briefing asks the fake agy, a child process: the integration tier.
pytestmark = pytest.mark.integration

DAY = date(2026, 10, 8)


def setup_day(tmp_path, config: str = "", events: int = 6, **day):
    settings = make_settings(tmp_path, config=config)
    marts = Marts(settings.duckdb_path)
    marts.add_day(DAY, day.pop("evs", sample_events(DAY, events)), **day)
    return settings, marts


def test_two_runs_for_the_same_day_call_agy_once(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, signals=[signal()], unmatched=[unmatched_term()])
    first = enrich_day(settings, DAY)
    second = enrich_day(settings, DAY)
    print(first.summary())
    print(second.summary())
    assert first.ok and second.ok and second.reused
    assert len(fake_calls(log)) == 1
    assert query(settings, "select count(*) from enrichment.enrichment_run")[0][0] == 1
    assert query(settings, "select count(*) from enrichment.agy_calls")[0][0] == 1


def test_result_cache_answers_when_the_run_row_is_gone(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path)
    assert enrich_day(settings, DAY).ok
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("delete from enrichment.enrichment_run")
    again = enrich_day(settings, DAY)
    assert again.ok and again.cache_hit
    assert len(fake_calls(log)) == 1


def test_changed_data_for_the_day_is_briefed_again(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, marts = setup_day(tmp_path)
    assert enrich_day(settings, DAY).ok
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute(
            "update marts.dmf_events set severity = 'CRITICAL', severity_rank = 1 where event_type = 'WITHDRAWN'"
        )
    assert enrich_day(settings, DAY).ok
    assert len(fake_calls(log)) == 2


def test_invented_keys_signals_and_aliases_are_dropped_and_counted(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path, "invent")
    settings, _ = setup_day(tmp_path, signals=[signal()], unmatched=[unmatched_term()])
    outcome = enrich_day(settings, DAY)
    print(outcome.summary())
    assert outcome.ok
    assert outcome.dropped == {
        "alias_not_offered": 1,
        "alias_unknown_term": 1,
        "anomaly_unknown_signal": 1,
        "event_unknown_key": 1,
    }
    keys = {r[0] for r in query(settings, "select item_key from enrichment.enrichment where kind = 'event_comment'")}
    real = {r[0] for r in query(settings, "select dmf_key from marts.dmf_events")}
    assert keys == real and "99999999-999-Z-999-99" not in keys
    assert {
        r[0] for r in query(settings, "select item_key from enrichment.enrichment where kind = 'anomaly_hypothesis'")
    } == {"withdrawn_burst"}
    assert [r[0] for r in query(settings, "select candidate_ingredient_name from enrichment.proposals")] == [
        "포르모테롤푸마르산염수화물"
    ]
    dropped = json.loads(query(settings, "select dropped_json from enrichment.enrichment_run")[0][0])
    assert dropped["event_unknown_key"] == 1
    assert "event_unknown_key=1" in query(settings, "select error from enrichment.agy_calls")[0][0]


def test_quiet_day_is_skipped_without_a_call_and_only_once(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, evs=[], signals=[signal(fired=False)])
    first, second = enrich_day(settings, DAY), enrich_day(settings, DAY)
    assert (first.status, first.skip_reason) == ("SKIPPED", "diff_empty")
    assert second.run_id == first.run_id
    assert fake_calls(log) == []
    assert query(settings, "select count(*) from enrichment.enrichment_run")[0][0] == 1


def test_fired_signal_alone_is_worth_a_call(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, evs=[], signals=[signal()])
    outcome = enrich_day(settings, DAY)
    assert outcome.ok and outcome.anomaly_notes == 1
    assert len(fake_calls(log)) == 1


def test_rejected_load_is_skipped_without_a_call(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, verdict="rejected")
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "load_rejected")
    assert fake_calls(log) == []


def test_missing_mart_is_a_failed_value(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path)
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("drop table marts.dmf_watchlist_unmatched")
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "marts_missing")
    assert "dmf_watchlist_unmatched" in outcome.detail
    assert fake_calls(log) == []


def test_missing_warehouse_is_a_value_and_creates_no_file(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "marts_missing")
    assert not settings.duckdb_path.exists()
    assert "dmf build" in outcome.summary()


def test_kill_switch_env_disables_the_layer(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    settings, _ = setup_day(tmp_path)
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "disabled")
    assert fake_calls(log) == []


def test_config_switch_disables_the_layer(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, config="enabled = false\n")
    assert enrich_day(settings, DAY).skip_reason == "disabled"
    assert fake_calls(log) == []


def test_agy_runs_with_the_fixed_flags_in_the_bare_workspace(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, MFDS_SERVICE_KEY="secret-key-123")
    settings, _ = setup_day(tmp_path)
    outcome = enrich_day(settings, DAY)
    assert outcome.ok
    call = fake_calls(log)[0]
    args = call["args"]
    for flag in (
        "-p",
        "--output-format",
        "--print-timeout",
        "--disable-slash-commands",
        "--log-file",
        "--model",
        "--effort",
        "--json-schema",
    ):
        assert flag in args
    assert args[args.index("--output-format") + 1] == "json"
    assert "--dangerously-skip-permissions" not in args and "--continue" not in args
    workspace = settings.state_dir / "agy_workspace"
    assert call["cwd"] == str(workspace)
    assert call["auto_update_off"] == "true"
    assert call["service_key_visible"] is False
    assert (workspace / "AGENTS.md").read_text(encoding="utf-8") == (settings.project_dir / "AGENTS.md").read_text(
        encoding="utf-8"
    )
    mcp = json.loads((workspace / ".agents" / "mcp_config.json").read_text())
    assert all(s.get("disabled") is True for s in mcp["mcpServers"].values())
    run_dir = settings.state_dir / "agy_runs" / outcome.run_id
    assert json.loads((run_dir / "agy.stdout.json").read_text())["status"] == "SUCCESS"
    assert "fake agy" in (run_dir / "agy.stderr.log").read_text()
    assert "secret-key-123" not in (run_dir / "agy.stdout.json").read_text()


def test_long_prompt_goes_through_stdin_stream_json(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path, config="cmdline_safe_chars = 3000\n")
    outcome = enrich_day(settings, DAY)
    assert outcome.ok
    call = fake_calls(log)[0]
    assert call["transport"] == "stdin" and "-p" not in call["args"]
    assert call["args"][call["args"].index("--output-format") + 1] == "stream-json"
    assert query(settings, "select transport from enrichment.agy_calls")[0][0] == "stdin"


def test_audit_row_keeps_every_usage_field(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path)
    enrich_day(settings, DAY)
    row = query(
        settings,
        """select turns, input_tokens, output_tokens, cached_tokens, thinking_tokens,
                                    total_tokens, prompt_chars, length(prompt_sha256), model, effort,
                                    transport, exit_code, status from enrichment.agy_calls""",
    )[0]
    turns, inp, out, cached, think, total, chars, sha_len, model, effort, transport, code, status = row
    assert turns == 1 and inp > 28_000 and out > 0 and think > 0 and cached == 0
    assert total == inp + out + think and chars > 1000 and sha_len == 64
    assert (model, effort, transport, code, status) == ("gemini-3.7-flash-medium", "medium", "argv", 0, "SUCCESS")


def test_unexpected_error_becomes_a_failed_value(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path)

    def boom(con, as_of):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("dmf_watch.enrich.daily_briefing.read_day", boom)
    outcome = enrich_day(settings, DAY)
    assert (outcome.status, outcome.skip_reason) == ("FAILED", "internal_error")
    assert "RuntimeError" in outcome.summary()
    assert fake_calls(log) == []


def test_day_without_a_load_is_skipped(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    settings, _ = setup_day(tmp_path)
    outcome = enrich_day(settings, date(2026, 10, 1))
    assert (outcome.status, outcome.skip_reason) == ("SKIPPED", "no_load")
    assert fake_calls(log) == []
