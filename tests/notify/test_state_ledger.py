"""The alert ledger in the state folder and the naming of warehouse faults, on real parts and fast:
a real DuckDB file held by a real second process, a real connection to a closed port, a real
read-only directory for the ledger."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import psycopg2
import pytest

from dmf_watch.core import faults
from dmf_watch.core.config import load_settings
from dmf_watch.notify import state_ledger
from support.loopback import free_port

DAY = date(2026, 12, 1)


def test_the_same_state_on_the_next_days_is_no_change_and_a_new_one_is():
    data = state_ledger.read(Path("/nonexistent"))
    assert state_ledger.observe(data, "pipeline", "broken:server_down", DAY) == (True, None, None)
    assert state_ledger.observe(data, "pipeline", "broken:server_down", DAY + timedelta(1)) == (
        False,
        "broken:server_down",
        DAY,
    )
    assert state_ledger.observe(data, "pipeline", "broken:server_login", DAY + timedelta(2))[:2] == (
        True,
        "broken:server_down",
    )
    assert data["conditions"]["pipeline"]["since"] == (DAY + timedelta(2)).isoformat()
    # an older day is history: it changes nothing
    assert state_ledger.observe(data, "pipeline", "ok", DAY)[0] is False
    assert data["conditions"]["pipeline"]["state"] == "broken:server_login"


def test_the_ledger_is_replaced_whole_and_a_refused_write_keeps_the_last_one(tmp_path):
    data = state_ledger.read(tmp_path)
    state_ledger.observe(data, "backup", "failed", DAY, "no space left on device")
    assert state_ledger.write(tmp_path, data)
    assert json.loads(state_ledger.ledger_path(tmp_path).read_text())["conditions"]["backup"]["state"] == "failed"
    assert [p.name for p in tmp_path.iterdir()] == [state_ledger.FILE_NAME]  # no temporary file left

    tmp_path.chmod(0o500)  # the state folder refuses new files (a full or read-only disk)
    try:
        state_ledger.observe(data, "backup", "ok", DAY + timedelta(1))
        written = state_ledger.write(tmp_path, data)
    finally:
        tmp_path.chmod(0o700)
    if written:  # root ignores directory permissions: nothing to show on this machine
        return
    assert state_ledger.read(tmp_path)["conditions"]["backup"]["state"] == "failed"
    assert state_ledger.open_conditions(tmp_path)[0][0] == "backup"


def test_a_duckdb_file_held_by_another_process_is_named_by_its_pid_and_name(tmp_path):
    path = tmp_path / "dmf.duckdb"
    duckdb.connect(str(path)).close()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print(1, flush=True); time.sleep(60)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        holder.stdout.readline()
        name = Path(f"/proc/{holder.pid}/comm").read_text().strip()
        with pytest.raises(duckdb.Error) as caught:
            duckdb.connect(str(path))
        settings = load_settings({}).with_paths(duckdb_path=path, reports_dir=tmp_path, state_dir=tmp_path)
        fault = faults.classify(caught.value, settings)  # while the holder runs: /proc names it
    finally:
        holder.kill()
        holder.wait()
    assert fault is not None and fault.kind == faults.HELD_FILE
    assert fault.line.startswith(f"the warehouse file {path} is held by another program, pid {holder.pid} {name}")


def test_a_closed_port_is_the_server_down_named_by_host_port_and_database(tmp_path, monkeypatch):
    port = str(free_port())
    monkeypatch.setenv("PGHOST", "127.0.0.1")
    monkeypatch.setenv("PGPORT", port)
    monkeypatch.setenv("PGDATABASE", "dmf")
    monkeypatch.setenv("PGPASSWORD", "never-shown-4c1d")
    with pytest.raises(psycopg2.OperationalError) as caught:
        psycopg2.connect("", connect_timeout=3)
    settings = dataclasses.replace(
        load_settings({}).with_paths(duckdb_path=tmp_path / "x.duckdb", reports_dir=tmp_path, state_dir=tmp_path),
        warehouse="postgres",
    )
    fault = faults.classify(caught.value, settings)
    assert fault is not None and fault.kind == faults.SERVER_DOWN
    assert fault.line.startswith(f"cannot reach PostgreSQL 127.0.0.1:{port}/dmf ")
    assert "never-shown" not in fault.line and "unexpected" not in fault.line


def test_an_error_of_another_kind_is_no_warehouse_fault(tmp_path):
    settings = load_settings({}).with_paths(duckdb_path=tmp_path / "x.duckdb", reports_dir=tmp_path, state_dir=tmp_path)
    assert faults.classify(ValueError("permission denied for schema x"), settings) is None  # only on PostgreSQL
    assert faults.classify(KeyError("x"), settings) is None
