"""`dmf status` and `dmf doctor` on a real warehouse built by the pipeline from the simulator on
loopback: an accepted day, a day whose fetch was truncated (rejected), a day without any load."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.commands.doctor import BAD, OK, WARN, check_api, check_reports_dir, check_warehouse, run_setup_doctor
from dmf_watch.commands.status import day_statuses, format_table
from dmf_watch.core.warehouse import LOADER_TABLES
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, run_days, settings_in

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY_1, DAY_2, DAY_3, DAY_4 = date(2026, 10, 8), date(2026, 10, 9), date(2026, 10, 10), date(2026, 10, 11)


@pytest.fixture(scope="module")
def built(real_data_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("status")
    records = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    source = DaysSource({DAY_1: records, DAY_2: records, DAY_4: records[:-1]})
    mp = pytest.MonkeyPatch()
    mp.setenv("DMF_AI_DISABLED", "1")
    try:
        settings = settings_in(root)
        outcomes = run_days(
            settings, source, [(DAY_1, None), (DAY_2, "truncate_last_page"), (DAY_4, None)], SERVICE_KEY
        )
    finally:
        mp.undo()
    assert [o.exit_code for o in outcomes] == [0, 2, 0]
    return settings


@pytest.fixture
def warehouse(built, tmp_path):
    shutil.copy(built.duckdb_path, tmp_path / "dmf.duckdb")
    shutil.copytree(built.reports_dir, tmp_path / "reports")
    return settings_in(tmp_path)


def test_status_has_a_row_per_day_and_says_what_to_run_for_the_bad_ones(warehouse):
    statuses = {s.day: s for s in day_statuses(warehouse, 4, DAY_4)}
    assert list(statuses) == [DAY_4, DAY_3, DAY_2, DAY_1]
    assert statuses[DAY_1].verdict == "baseline" and statuses[DAY_1].next_command is None
    assert statuses[DAY_4].verdict == "accepted" and statuses[DAY_4].withdrawn == 1
    assert statuses[DAY_4].report == warehouse.reports_dir / "dmf_daily_20261011.xlsx"
    assert statuses[DAY_4].next_command is None
    assert statuses[DAY_2].verdict == "rejected" and statuses[DAY_2].reason.startswith("incomplete")
    # DAY_4 was loaded after them: a live load of DAY_2 or DAY_3 is refused; only a dump of the day helps
    assert statuses[DAY_2].next_command.startswith("dmf backfill PATH --insert-before-published  (the fetch")
    assert statuses[DAY_3].verdict == "no load"
    assert statuses[DAY_3].next_command.startswith(
        "dmf backfill PATH --insert-before-published  (no load; only with a dump of 2026-10-10"
    )
    table = format_table(list(statuses.values()))
    assert "Next:" in table and "2026-10-10  dmf backfill PATH" in table
    assert "0/0/1" in table  # NEW/CHANGED/WITHDRAWN of the last day


def test_status_offers_only_commands_the_cli_accepts_for_that_day(warehouse):
    day_5 = date(2026, 10, 12)  # after the latest load, yet a past day
    statuses = {s.day: s for s in day_statuses(warehouse, 7, day_5)}
    before_first = [day for day in statuses if day < DAY_1]
    assert before_first and all(statuses[day].next_command is None for day in before_first)
    # A past day after the latest load: still no live load (it would store today's list under it).
    assert statuses[day_5].next_command.startswith("dmf backfill PATH  (no load; only with a dump of 2026-10-12")
    offered = [s for s in statuses.values() if s.next_command and s.next_command.startswith(("dmf run", "dmf load"))]
    assert offered == []


def test_status_asks_for_the_report_when_it_is_missing(warehouse):
    (warehouse.reports_dir / "dmf_daily_20261011.xlsx").unlink()
    day = day_statuses(warehouse, 1, DAY_4)[0]
    assert day.report is None and day.next_command == "dmf report --as-of 2026-10-11"


def test_dmf_status_on_the_command_line(warehouse):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(warehouse.duckdb_path),
        DMF_REPORTS_DIR=str(warehouse.reports_dir),
        DMF_STATE_DIR=str(warehouse.state_dir),
    )
    result = subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "status", "--as-of", "2026-10-11", "--days", "4"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("date")
    assert len([line for line in result.stdout.splitlines() if line.startswith("2026-10-")]) == 4


def test_status_on_a_missing_warehouse_is_one_line(tmp_settings):
    from dmf_watch.core.errors import DmfError

    with pytest.raises(DmfError, match="no warehouse at .*dmf demo"):
        day_statuses(tmp_settings, 7, DAY_4)


def test_doctor_reaches_the_api_with_one_request_and_never_shows_the_key(start_simulator, fast_policy):
    server = start_simulator(size=40)
    ok = check_api(server.base_url, SERVICE_KEY, fast_policy)
    assert ok.level == OK and "totalCount 40" in ok.message
    wrong = check_api(server.base_url, "WRONG-" + SERVICE_KEY, fast_policy)
    assert wrong.level == BAD and "code 30" in wrong.message
    assert SERVICE_KEY not in wrong.message and "WRONG-" not in wrong.message
    missing = check_api(server.base_url, None, fast_policy)
    assert missing.level == BAD


def test_doctor_checks_the_warehouse_and_the_reports_dir(warehouse, tmp_path):
    checks = {c.name: c for c in check_warehouse(warehouse)}
    assert checks["warehouse"].level == OK and checks["last_load"].level == OK
    unbuilt = tmp_path / "empty.duckdb"
    import duckdb

    duckdb.connect(str(unbuilt)).close()  # no load yet: a build would have nothing to build
    assert (
        "holds no load yet: load first with `dmf run`"
        in check_warehouse(dataclasses.replace(warehouse, duckdb_path=unbuilt))[0].message
    )
    with duckdb.connect(str(unbuilt)) as con:  # a load stored, never built (a run stopped between the two)
        con.execute("create schema mfds_raw")
        for table in LOADER_TABLES:
            con.execute(f"create table mfds_raw.{table} (load_id varchar)")
    assert "run `dmf build`" in check_warehouse(dataclasses.replace(warehouse, duckdb_path=unbuilt))[0].message
    assert check_warehouse(dataclasses.replace(warehouse, duckdb_path=tmp_path / "none.duckdb"))[0].level == BAD
    assert check_reports_dir(tmp_path / "out").level == OK
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert check_reports_dir(blocker / "reports").level == BAD


def test_doctor_after_a_rejected_last_load_warns_but_does_not_fail(built, tmp_path):
    import duckdb

    shutil.copy(built.duckdb_path, tmp_path / "dmf.duckdb")
    with duckdb.connect(str(tmp_path / "dmf.duckdb")) as con:
        con.execute("delete from marts.dmf_day_decisions where as_of_date = ?", [DAY_4])
    checks = {c.name: c for c in check_warehouse(dataclasses.replace(built, duckdb_path=tmp_path / "dmf.duckdb"))}
    assert checks["last_load"].level == WARN and "dmf status" in checks["last_load"].message


def test_doctor_runs_every_check_in_order_with_ai_trouble_as_warnings(
    warehouse, start_simulator, fast_policy, monkeypatch
):
    server = start_simulator(size=10)
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
    monkeypatch.setenv("DMF_AGY_BINARY", str(warehouse.state_dir / "no-agy-here"))
    settings = dataclasses.replace(
        warehouse, api_base_url=server.base_url, agy_binary=str(warehouse.state_dir / "no-agy-here")
    )
    checks = run_setup_doctor(settings, policy=fast_policy)
    names = [c.name for c in checks]
    assert names[:6] == ["service_key", "mfds_api", "warehouse", "last_load", "reports_dir", "ai_config"]
    levels = {c.name: c.level for c in checks}
    assert levels["service_key"] == levels["mfds_api"] == levels["warehouse"] == OK
    assert levels["agy_model"] == WARN
    assert all(SERVICE_KEY not in c.message for c in checks)


def test_doctor_without_agy_rates_a_missing_deny_block_a_warning_and_passes(
    warehouse, start_simulator, fast_policy, monkeypatch, tmp_path
):
    # Where agy cannot run, a missing permission file exposes nothing: the setup is healthy.
    # With agy installed the same file is a BAD line (tests/commands/test_cli.py).
    server = start_simulator(size=10)
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DMF_AGY_BINARY", str(warehouse.state_dir / "no-agy-here"))
    settings = dataclasses.replace(
        warehouse, api_base_url=server.base_url, agy_binary=str(warehouse.state_dir / "no-agy-here")
    )
    checks = run_setup_doctor(settings, policy=fast_policy)
    levels = {c.name: c.level for c in checks}
    assert levels["agy_binary"] == levels["agy_permissions"] == WARN
    assert [c.line for c in checks if c.level == BAD] == []


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest", "http://10.0.0.8/api", "http://example.com/api"])
def test_doctor_refuses_a_url_the_loader_would_refuse_without_connecting(url, monkeypatch):
    import dmf_watch.commands.doctor as doctor

    def no_connection(*args, **kwargs):
        raise AssertionError("doctor tried to connect")

    monkeypatch.setattr(doctor, "MfdsClient", no_connection)
    check = check_api(url, SERVICE_KEY)
    assert check.level == BAD and SERVICE_KEY not in check.message
