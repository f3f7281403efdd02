"""One run at a time per warehouse: two real `dmf run` processes started together.

The overlap of a slow day with the next cron start used to give two loads of the same day,
duplicate raw rows and a warehouse every later build failed on. With the lock the second run
waits, then finds the day loaded and skips it: one load, no duplicates, the next day correct.

An overlap happens on a morning after others, so the runs that overlap start from the session's
copy of START_DATE's accepted morning (support/first_mornings.py) and are about DAY2: no child
builds a first morning no assertion is about. Taking a lock does not depend on what the warehouse
holds; the stale lock's test runs `dmf load` alone (no build) and starts from nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from dmf_watch.core.config import load_settings
from dmf_watch.core.lock import lock_path
from support.mfds import SERVICE_KEY, START_DATE, small_registry
from support.scenarios import dmf_process_env, query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY2 = START_DATE + timedelta(days=1)


def _env(tmp_path: Path, base_url: str, **extra: str) -> dict[str, str]:
    return dmf_process_env(tmp_path, base_url, **extra)


def _start(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _settings(tmp_path: Path):
    return load_settings(
        {
            "DMF_DUCKDB_PATH": str(tmp_path / "data" / "dmf.duckdb"),
            "DMF_STATE_DIR": str(tmp_path / "state"),
            "DMF_REPORTS_DIR": str(tmp_path / "reports"),
        }
    )


def _wait_for_holder(path: Path, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        if text:
            return json.loads(text)
        time.sleep(0.05)
    raise AssertionError("the first run never took the warehouse lock")


@pytest.mark.fault("two `dmf run` at the same moment")
def test_two_runs_started_together_give_one_load_no_duplicates_and_a_correct_next_day(
    tmp_path, start_simulator, previous_day
):
    """Two runs at once: one load, 0 duplicate raw rows, the next day correct."""
    server = start_simulator(day=DAY2)
    env = _env(tmp_path, server.base_url, DMF_LOCK_WAIT_S="300")
    day = DAY2.isoformat()
    source = small_registry(1200)

    first, second = _start(env, "run", "--as-of", day), _start(env, "run", "--as-of", day)
    results = [(p.wait(timeout=400), *p.communicate()) for p in (first, second)]

    assert [code for code, _, _ in results] == [0, 0], results
    outputs = sorted(out for _, out, _ in results)
    # the one that waited found the day loaded ("0 skipped" on the build line is dbt's count)
    assert sum(f"Load for {day} skipped" in out for out in outputs) == 1
    settings = _settings(tmp_path)
    of_day = "where as_of_date = ?"
    assert query(settings, f"select count(*), count(distinct load_id) from mfds_raw.load_runs {of_day}", [DAY2]) == [
        (1, 1)
    ]
    per_load = query(
        settings,
        "select load_id, count(*), count(distinct item_position) from mfds_raw.dmf_items "
        f"where load_id in (select load_id from mfds_raw.load_runs {of_day}) group by all",
        [DAY2],
    )
    runs = query(settings, f"select load_id, distinct_count from mfds_raw.load_runs {of_day}", [DAY2])
    served = len(source.items_for(source.day_of(DAY2)))
    assert [(load_id, n) for load_id, n, _ in per_load] == runs and per_load[0][1] == per_load[0][2] == served
    assert query(settings, f"select verdict, count(*) from marts.dmf_loads {of_day} group by all", [DAY2]) == [
        ("accepted", 1)
    ]

    next_day = DAY2 + timedelta(days=1)
    server.set_day(next_day)
    done = subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "run", "--as-of", next_day.isoformat()],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr
    assert query(settings, "select as_of_date, verdict from marts.dmf_loads order by 1") == [
        (START_DATE, "accepted"),
        (DAY2, "accepted"),
        (next_day, "accepted"),
    ]
    dupes = query(
        settings,
        "select count(*) from (select load_id, item_position from mfds_raw.dmf_items group by all having count(*) > 1)",
    )
    assert dupes == [(0,)]
    truth = source.items_for(source.day_of(next_day))
    assert query(
        settings,
        "select count(*) from mfds_raw.dmf_items i join mfds_raw.load_runs r using (load_id) where r.as_of_date = ?",
        [next_day],
    ) == [(len(truth),)]
    assert lock_path(settings.duckdb_path).read_text() == ""  # released, nobody named as holder


@pytest.mark.fault("two `dmf run` at the same moment")
def test_a_second_run_that_waits_too_long_exits_1_naming_the_running_process(tmp_path, start_simulator):
    """A run that waits past DMF_LOCK_WAIT_S exits 1 in one line naming the running pid, command and start."""
    server = start_simulator(day=START_DATE, faults="slow:4")
    env = _env(tmp_path, server.base_url)
    holder = _start(env, "run", "--as-of", START_DATE.isoformat())
    try:
        info = _wait_for_holder(lock_path(tmp_path / "data" / "dmf.duckdb"))
        started = time.monotonic()
        second = subprocess.run(
            [sys.executable, "-m", "dmf_watch.commands.cli", "load", "--as-of", START_DATE.isoformat()],
            cwd=PROJECT,
            env={**env, "DMF_LOCK_WAIT_S": "1"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=400)
    assert second.returncode == 1
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert f"pid {holder.pid} " in second.stderr and info["pid"] == holder.pid
    assert f"`dmf run --as-of {START_DATE.isoformat()}`" in second.stderr and "since 20" in second.stderr
    assert "waited 1 s" in second.stderr and "DMF_LOCK_WAIT_S" in second.stderr
    assert waited >= 1.0
    assert SERVICE_KEY not in second.stderr + second.stdout
    assert holder.returncode == 0


@pytest.mark.fault("two `dmf run` at the same moment")
def test_a_lock_whose_owner_was_killed_is_free_at_once(tmp_path, start_simulator):
    """The lock of a process killed with SIGKILL is free at once."""
    server = start_simulator(day=START_DATE, faults="slow:30")
    env = _env(tmp_path, server.base_url, DMF_LOCK_WAIT_S="0")
    holder = _start(env, "load", "--as-of", START_DATE.isoformat())
    path = lock_path(tmp_path / "data" / "dmf.duckdb")
    assert _wait_for_holder(path)["pid"] == holder.pid
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=30)
    assert json.loads(path.read_text())["pid"] == holder.pid  # its name is still in the file: stale

    server.set_faults(None)
    after = subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "load", "--as-of", START_DATE.isoformat()],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert after.returncode == 0, after.stderr
    assert "complete" in after.stdout
