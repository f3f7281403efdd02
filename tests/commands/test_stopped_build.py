"""A build stopped anywhere leaves every reader the previous build: SIGTERM or `kill -9` at a node
boundary of one `dmf build` (before the marts, between `dmf_day_decisions` and `dmf_events`, after
the last node), on DuckDB and PostgreSQL. The marts, `dmf status` and `dmf report` are compared
with what they were before the build; a build that then runs to its end changes them, so the
comparison can fail, and a reader reading several marts in one statement all through it sees the
old day or the new one, never a mix. (benchmarks/stop_every_node.py stops a build at every node.)"""

from __future__ import annotations

import dataclasses
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from dmf_watch.core import warehouse
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.server import SimulatorServer
from support.mfds import SERVICE_KEY, small_registry
from support.postgres import drop_schemas, on_postgres
from support.scenarios import DaysSource, dmf_process_env, run_days, settings_in

pytestmark = pytest.mark.e2e

DAY = date(2026, 11, 2)
ENGINES = ["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)]
# Where a stop lands, as the node dbt logs just before it; the last is the last node of the build.
BOUNDARIES = {
    "before the marts": r"OK created sql incremental model \S+\.int_registration_events",
    "between dmf_day_decisions and dmf_events": r"OK created sql table model \S*marts_build\.dmf_day_decisions",
    "after the last node": r"(\d+) of \1 (PASS|OK)",
}


@dataclasses.dataclass
class World:
    settings: object
    env: dict[str, str]
    source: DaysSource


@pytest.fixture(params=ENGINES)
def world(request, tmp_path):
    """Two days built through the real daily job, the third loaded and not yet built."""
    root = tmp_path / "world"
    settings = dataclasses.replace(settings_in(root), duckdb_path=root / "data" / "dmf.duckdb")
    extra = {}
    if request.param == "postgres":
        request.getfixturevalue("postgres")
        settings = on_postgres(settings, "stopped")
        extra = {"DMF_WAREHOUSE": "postgres", "DMF_SCHEMA_PREFIX": settings.schema_prefix}
    registry = small_registry(300, DAY)
    source = DaysSource({DAY + timedelta(days=n): registry.items_for(n + 1) for n in range(3)})
    try:
        run_days(settings, source, [(DAY, None), (DAY + timedelta(days=1), None)], SERVICE_KEY)
        with SimulatorServer(source, service_key=SERVICE_KEY) as simulator:
            simulator.set_day(DAY + timedelta(days=2))
            load_day(
                dataclasses.replace(settings, api_base_url=simulator.base_url),
                DAY + timedelta(days=2),
                service_key=SERVICE_KEY,
            )
        yield World(settings, dmf_process_env(root, "http://127.0.0.1:9/unused", **extra), source)
    finally:
        if request.param == "postgres":
            drop_schemas(settings)


def _dmf(world: World, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        env=world.env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _marts(settings) -> dict[str, list[str]]:
    """Every row of every published mart, as text, in a stable order."""
    with warehouse.connect(settings, read_only=True) as con:
        marts = con.schemas.marts
        names = [
            row[0]
            for row in con.execute(
                "select table_name from information_schema.tables where table_schema = ? order by table_name", [marts]
            ).fetchall()
        ]
        return {name: sorted(map(repr, con.execute(f"select * from {marts}.{name}").fetchall())) for name in names}


def _what_readers_see(world: World) -> tuple[dict[str, list[str]], str, bytes]:
    """The marts, `dmf status` of the built days and `dmf report` of the last one."""
    status = _dmf(world, "status", "--as-of", str(DAY + timedelta(days=1)), "--days", "2")
    assert status.returncode == 0, status.stderr
    report = _dmf(world, "report", "--as-of", str(DAY + timedelta(days=1)))
    assert report.returncode == 0, report.stderr
    days = status.stdout.split("\n\n")[0]  # the table of days (a note on the stopped build may follow)
    return _marts(world.settings), days, Path(report.stdout.strip()).read_bytes()


def _build_stopped_at(world: World, boundary: str, sig: int) -> subprocess.Popen:
    """`dmf build` in a child process, sent `sig` as soon as dbt logs the node at `boundary`."""
    log = world.settings.state_dir / "logs" / "dbt.log"
    log.unlink(missing_ok=True)  # a fresh log for this build (dbt rotates its log at 10 MB)
    child = subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", "build"],
        env=world.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pattern = re.compile(BOUNDARIES[boundary])
    deadline = time.monotonic() + 600
    while child.poll() is None and time.monotonic() < deadline:
        if log.exists():
            with log.open("rb") as written:
                if pattern.search(re.sub(r"\x1b\[[0-9;]*m", "", written.read().decode("utf-8", "replace"))):
                    child.send_signal(sig)
                    break
        time.sleep(0.01)
    child.communicate(timeout=600)
    return child


def _one_read(world: World):
    """Day decisions, events, summary and loads counted in one statement: on PostgreSQL in the
    marts, on DuckDB in the readers' copy (the warehouse file belongs to the build)."""
    marts = warehouse.schemas(world.settings).marts
    sql = (
        f"select (select count(*) from {marts}.dmf_day_decisions), (select count(*) from {marts}.dmf_events), "
        f"(select count(*) from {marts}.dmf_daily_summary), (select count(*) from {marts}.dmf_loads)"
    )
    if world.settings.warehouse == "duckdb":
        with duckdb.connect(str(warehouse.reader_copy_path(world.settings)), read_only=True) as con:
            return tuple(con.execute(sql).fetchone())
    with warehouse.connect(world.settings, read_only=True) as con:
        return tuple(con.execute(sql).fetchone())


@pytest.mark.fault("a build stopped by SIGTERM or `kill -9` at a node boundary")
def test_a_build_stopped_at_any_boundary_leaves_readers_the_previous_build(world):
    """Marts, status and report equal the previous build's after each stop; a reader during the
    build that finishes sees the old day or the new one, never a mix."""
    before = _what_readers_see(world)
    for boundary in BOUNDARIES:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            stopped = _build_stopped_at(world, boundary, sig)
            if boundary == "after the last node" and stopped.returncode == 0:
                continue  # the build finished before the signal came: nothing was stopped
            assert stopped.returncode != 0, (boundary, sig)
            assert _what_readers_see(world) == before, (boundary, sig)

    counts_before = _one_read(world)
    seen: list[tuple] = []
    errors: list[str] = []
    building = threading.Event()

    def read_while_building() -> None:
        while building.is_set():
            try:
                seen.append(_one_read(world))
            except warehouse.Error as error:
                errors.append(str(error).splitlines()[0])
            time.sleep(0.01)

    building.set()
    reader = threading.Thread(target=read_while_building)
    reader.start()
    try:
        finished = _dmf(world, "build")
    finally:
        building.clear()
        reader.join()

    assert finished.returncode == 0, finished.stderr
    after = _what_readers_see(world)
    assert after[0] != before[0] and after[0]["dmf_loads"] != before[0]["dmf_loads"]
    counts_after = _one_read(world)
    assert counts_after != counts_before
    assert errors == [] and len(seen) > 10
    assert set(seen) <= {counts_before, counts_after}
