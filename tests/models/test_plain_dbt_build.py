"""Plain `dbt build` behaves like `dmf build`: on a warehouse without a load it stops at once with
one line saying to load first and leaves nothing built; when a gate fires, dbt itself records
the rejection (the on-run-end hook record_fired_gates), in the same raw table and with the same
verdict in the marts and in `dmf status` as `dmf build`.

Real runs: the simulator over HTTP, dlt into DuckDB, dbt's own command line in a child process
(as cron or CI would start it), and `dmf build` in-process on a copy of the same warehouse."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from dmf_watch.commands.cli import main
from dmf_watch.commands.status import day_statuses
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY
from support.scenarios import point_dmf_at, query, run_days, settings_in

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DBT = Path(sys.executable).with_name("dbt")
# The registry and first day of test_gates_look_complete's identity break: in a session that runs
# both, the day is replayed once (support/replays.py). Any registry would do.
START = date(2026, 11, 2)
DAY_2 = START + timedelta(days=1)
# Every number reformatted and BIZRNO gone on day 2: withdrawn_share and identity_churn fire.
IDENTITY_BREAK = "permit_no_separator:_,null_field:BIZRNO"


def plain_dbt(command: str, warehouse: Path, work: Path) -> subprocess.CompletedProcess:
    """`dbt <command>` in the checkout, as a person or cron types it, on `warehouse`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_", "DBT_"))}
    env.update(DMF_DUCKDB_PATH=str(warehouse), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    return subprocess.run(
        [str(DBT), *command.split(), "--no-use-colors", "--target-path", str(work / "target")]
        + ["--log-path", str(work / "logs")],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_plain_dbt_build_without_a_load_stops_in_one_line_and_builds_nothing(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "data" / "dmf.duckdb"
    warehouse.parent.mkdir()

    done = plain_dbt("build", warehouse, tmp_path)
    print(done.stdout)

    said = [line for line in done.stdout.splitlines() if "holds no load yet" in line]
    assert done.returncode == 2
    assert len(said) == 1, done.stdout
    assert said[0].strip() == (
        f"the warehouse {warehouse} holds no load yet (mfds_raw.dmf_item_versions, mfds_raw.dmf_load_items, "
        "mfds_raw.load_runs missing): load first with `dmf run` (or `dmf load`), or try `dmf demo`; "
        "`dbt build` rebuilds from loads already stored."
    )
    assert "Catalog Error" not in done.stdout
    settings = settings_in(warehouse.parent)
    assert query(settings, "select table_schema, table_name from information_schema.tables") == []
    assert query(settings, "select schema_name from information_schema.schemata where catalog_name = 'dmf'") == [
        ("main",)
    ]

    # and what comes next says to load, never to build
    point_dmf_at(monkeypatch, warehouse.parent)
    for command in (["status"], ["build"], ["report"]):
        assert main(command) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "holds no load yet" in err and "dmf demo" in err, (command, err)
        assert "`dmf build`" not in err
    assert query(settings, "select table_name from information_schema.tables") == []  # `dmf build` recorded nothing
    main(["doctor"])
    warehouse_line = next(line for line in capsys.readouterr().out.splitlines() if "warehouse:" in line)
    assert warehouse_line == (
        f"BAD  warehouse: {warehouse} holds no load yet: load first with `dmf run` (or `dmf load`), or try `dmf demo`."
    )


@pytest.fixture(scope="module")
def day_2_loaded(tmp_path_factory):
    """Day 1 run and accepted; day 2 (the identity break) loaded but not built yet."""
    root = tmp_path_factory.mktemp("gate")
    settings = dataclasses.replace(settings_in(root), agy_binary="/nonexistent/agy")
    registry = SyntheticRegistry(seed=5, size=1500, start_date=START)
    assert [o.exit_code for o in run_days(settings, registry, [(START, None)], SERVICE_KEY)] == [0]
    with SimulatorServer(registry, service_key=SERVICE_KEY) as simulator:
        simulator.set_day(DAY_2)
        simulator.set_faults(IDENTITY_BREAK)
        loaded = load_day(
            dataclasses.replace(settings, api_base_url=simulator.base_url), DAY_2, service_key=SERVICE_KEY
        )
    assert loaded.fetch_status == "complete"
    return settings


def copy_of(settings, root: Path):
    root.mkdir()
    shutil.copy(settings.duckdb_path, root / "dmf.duckdb")
    return dataclasses.replace(settings_in(root), agy_binary="/nonexistent/agy")


def verdicts(settings) -> dict:
    return {
        "recorded": query(
            settings, "select distinct load_id, as_of_date from mfds_raw.rejected_load_signals order by 1"
        ),
        "days": query(
            settings,
            "select as_of_date, load_id, verdict, reason, rejected_gates from marts.dmf_day_decisions order by 1, 2",
        ),
        "events of day 2": query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAY_2]),
    }


def test_a_gate_fired_under_plain_dbt_build_is_recorded_as_dmf_build_records_it(day_2_loaded, tmp_path):
    by_dbt = copy_of(day_2_loaded, tmp_path / "dbt")
    by_dmf = copy_of(day_2_loaded, tmp_path / "dmf")

    done = plain_dbt("build", by_dbt.duckdb_path, tmp_path)
    print(done.stdout[-3000:])
    outcome = build(by_dmf, unit_tests=True)

    assert done.returncode == 1
    assert "Failure in test assert_no_integrity_gate_fired" in done.stdout
    assert [line for line in done.stdout.splitlines() if "gate rejections: recorded load" in line]
    assert "marts not published: an integrity gate fired" in done.stdout
    assert DAY_2 not in [row[0] for row in verdicts(by_dbt)["days"]]  # readers keep the last complete build
    assert outcome.gate_fired
    # a second plain build publishes the rejection, as `dmf build` does in one command
    published = plain_dbt("build", by_dbt.duckdb_path, tmp_path)
    assert published.returncode == 0, published.stdout[-3000:]
    assert "marts published:" in published.stdout
    after_dbt, after_dmf = verdicts(by_dbt), verdicts(by_dmf)
    assert after_dbt == after_dmf
    ((load_id, as_of),) = after_dbt["recorded"]
    assert as_of == DAY_2
    (day_2,) = [row for row in after_dbt["days"] if row[0] == DAY_2]
    assert day_2[1:3] == (load_id, "rejected") and "identity_churn" in day_2[4].split(",")
    assert after_dbt["events of day 2"] == [(0,)]

    # `dmf status` says the same of the day, and advises a person's check, never a build
    shown = {s.day: s for s in day_statuses(by_dbt, 2, DAY_2)}
    same = {s.day: s for s in day_statuses(by_dmf, 2, DAY_2)}
    assert shown[DAY_2].verdict == same[DAY_2].verdict == "rejected"
    assert shown[DAY_2].reason == same[DAY_2].reason
    assert shown[DAY_2].next_command == same[DAY_2].next_command
    assert f"dmf accept-load --as-of {DAY_2}" in shown[DAY_2].next_command

    # idempotent: built again, nothing new is recorded and the verdict stands
    again = plain_dbt("build", by_dbt.duckdb_path, tmp_path)
    assert again.returncode == 0, again.stdout[-3000:]
    assert verdicts(by_dbt) == after_dbt
