"""Runs and readers sharing one PostgreSQL database, as hosts sharing a team's server do: two
`dmf run` processes at once hold the advisory lock one at a time (the one that waits too long
exits 1 naming the holder, and the day is loaded once), and a reader during a build sees each
mart as the last build left it or as this one leaves it, never half-built."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time
from datetime import date, timedelta

import pytest

from dmf_watch.core import warehouse
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY, small_registry
from support.postgres import drop_schemas, on_postgres
from support.scenarios import DaysSource, dmf_process_env, run_days, settings_in

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

DAY = date(2026, 11, 2)


def _start(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_runs_from_two_processes_take_turns_and_load_the_day_once(postgres, simulator, tmp_path):
    settings = on_postgres(settings_in(tmp_path / "a"), "two_runs")
    try:
        envs = [
            dmf_process_env(
                tmp_path / host,
                simulator.base_url,
                DMF_WAREHOUSE="postgres",
                DMF_SCHEMA_PREFIX=settings.schema_prefix,
                DMF_LOCK_WAIT_S="1",
            )
            for host in ("a", "b")  # two hosts: nothing on disk in common, only the server
        ]
        first = _start(envs[0], "run", "--as-of", DAY.isoformat())
        time.sleep(1)  # the first one holds the lock while it loads and builds
        second = _start(envs[1], "run", "--as-of", DAY.isoformat())
        (_, err_1), (_, err_2) = first.communicate(timeout=600), second.communicate(timeout=600)
        assert first.returncode == 0, err_1[-2000:]
        assert second.returncode == 1
        (line,) = [line for line in err_2.splitlines() if line.strip()]
        assert line.startswith("dmf: another dmf run holds the warehouse PostgreSQL 127.0.0.1:")
        assert "`dmf run --as-of 2026-11-02 pid" in line and "waited 1 s" in line

        # given time to wait, the second run waits its turn and finds the day loaded
        again = [_start({**env, "DMF_LOCK_WAIT_S": "600"}, "run", "--as-of", DAY.isoformat()) for env in envs]
        assert [p.communicate(timeout=900) and p.returncode for p in again] == [0, 0]
        raw = warehouse.schemas(settings).raw
        with warehouse.connect(settings, read_only=True) as con:
            loads = con.execute(f"select count(*) from {raw}.load_runs where as_of_date = ?", [DAY]).fetchall()
        assert loads == [(1,)]
    finally:
        drop_schemas(settings)


def test_a_reader_during_a_build_sees_complete_marts(postgres, tmp_path):
    settings = on_postgres(settings_in(tmp_path), "reader")
    registry = small_registry(1200, DAY)
    days = {DAY: registry.items_for(1), DAY + timedelta(days=1): registry.items_for(2)}
    marts = warehouse.schemas(settings).marts
    tables = ("dmf_events", "dmf_registrations", "dmf_event_field_changes", "dmf_loads")

    def counts() -> dict[str, int]:
        with warehouse.connect(settings, read_only=True) as con:
            return {t: con.execute(f"select count(*) from {marts}.{t}").fetchone()[0] for t in tables}

    try:
        run_days(settings, DaysSource(days), [(DAY, None)], SERVICE_KEY)
        before = counts()
        seen: list[tuple[str, int]] = []
        errors: list[str] = []
        building = threading.Event()

        def read_while_building() -> None:
            while building.is_set():
                for table in tables:
                    try:
                        with warehouse.connect(settings, read_only=True) as con:
                            seen.append((table, con.execute(f"select count(*) from {marts}.{table}").fetchone()[0]))
                    except warehouse.Error as error:
                        errors.append(f"{table}: {error}")

        # day 2 loaded, then its build with a reader running all along
        with SimulatorServer(DaysSource(days), service_key=SERVICE_KEY) as sim:
            sim.set_day(DAY + timedelta(days=1))
            load_day(
                dataclasses.replace(settings, api_base_url=sim.base_url),
                DAY + timedelta(days=1),
                service_key=SERVICE_KEY,
            )
        building.set()
        reader = threading.Thread(target=read_while_building)
        reader.start()
        try:
            assert build(settings).success
        finally:
            building.clear()
            reader.join()
        after = counts()
        assert errors == []
        assert after["dmf_events"] > before["dmf_events"] and after["dmf_loads"] == before["dmf_loads"] + 1
        assert len(seen) > 4 * len(tables)  # the reader read all through the build
        assert {(t, n) for t, n in seen} <= {(t, before[t]) for t in tables} | {(t, after[t]) for t in tables}
    finally:
        drop_schemas(settings)
