"""Every wait on PostgreSQL is bounded and names what it waits for: a port that accepts and never
answers ends `dmf run` at the connect timeout naming the server; a BI session idle in a
transaction on a mart stops the build at the lock timeout naming that session, and the next run
after it ends succeeds; a run whose advisory lock is lost (its session ended, as on a server
restart) stops before it builds."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta

import psycopg2
import pytest

from dmf_watch.core import warehouse
from dmf_watch.simulator.server import SimulatorServer
from support.mfds import SERVICE_KEY, small_registry
from support.postgres import drop_schemas, on_postgres
from support.scenarios import DaysSource, dmf_process_env, run_days, settings_in

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

DAY = date(2026, 11, 2)
# Bounds a hang only: each run below ends well inside it, or the test fails instead of hanging.
HANG_BOUND_S = 600


def _dmf(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@contextmanager
def _silent_port() -> Iterator[tuple[int, list[socket.socket]]]:
    """A loopback port that accepts connections and never sends a byte, and what it accepted."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


@pytest.mark.fault("a PostgreSQL port that accepts and never answers")
def test_a_port_that_never_answers_ends_the_run_at_the_connect_timeout(simulator, tmp_path):
    """`dmf run` against a port that accepts and never answers: exit 1 at the connect timeout, one line naming the server."""
    with _silent_port() as (port, _):
        env = dmf_process_env(
            tmp_path,
            simulator.base_url,
            DMF_WAREHOUSE="postgres",
            PGHOST="127.0.0.1",
            PGPORT=str(port),
            PGDATABASE="dmf",
            PGUSER="dmf",
            PGCONNECT_TIMEOUT="2",
        )
        run = _dmf(env, "run", "--as-of", DAY.isoformat())
        _, err = run.communicate(timeout=HANG_BOUND_S)
    assert run.returncode == 1
    line = _one_line(err)
    assert line == (
        f"dmf: the PostgreSQL server 127.0.0.1:{port}/dmf did not answer within 2 s (PGCONNECT_TIMEOUT): "
        "check that the server is up and that PGHOST and PGPORT name it, or raise PGCONNECT_TIMEOUT."
    )


@pytest.mark.fault("a PostgreSQL port that accepts and never answers")
@pytest.mark.parametrize("stop", ["deadline", "SIGTERM"])
def test_the_deadline_and_sigterm_stop_a_run_waiting_on_a_silent_server(simulator, tmp_path, stop):
    """A run waiting on a silent server with no useful connect timeout: its deadline or SIGTERM still stops it, exit 1, one line naming the server."""
    with _silent_port() as (port, accepted):
        env = dmf_process_env(
            tmp_path,
            simulator.base_url,
            DMF_WAREHOUSE="postgres",
            PGHOST="127.0.0.1",
            PGPORT=str(port),
            PGDATABASE="dmf",
            PGUSER="dmf",
            PGCONNECT_TIMEOUT=str(HANG_BOUND_S),  # libpq alone would wait this long
            DMF_RUN_DEADLINE_S="3" if stop == "deadline" else "0",
        )
        run = _dmf(env, "run", "--as-of", DAY.isoformat())
        if stop == "SIGTERM":
            while not accepted and run.poll() is None:
                time.sleep(0.05)
            time.sleep(1.5)  # waited long enough for the line to name what it waited for
            run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=HANG_BOUND_S)
    assert run.returncode == 1
    cause = "its deadline (DMF_RUN_DEADLINE_S = 3 s)" if stop == "deadline" else "SIGTERM"
    line = _one_line(err)
    assert line.startswith(
        f"dmf: stopped by {cause} while waiting for PostgreSQL 127.0.0.1:{port}/dmf, which had not "
    ), line
    assert line.endswith(" s (check that the server is up and answering); nothing was left half-done."), line


def _marts(settings) -> dict[str, list[tuple]]:
    marts = warehouse.schemas(settings).marts
    with warehouse.connect(settings, read_only=True) as con:
        return {
            "events": con.execute(f"select event_id from {marts}.dmf_events order by 1").fetchall(),
            "days": con.execute(f"select as_of_date, verdict from {marts}.dmf_day_decisions order by 1").fetchall(),
        }


@pytest.mark.fault("a BI session idle in transaction holds a mart")
def test_a_bi_session_idle_in_transaction_stops_the_build_at_the_lock_timeout_naming_it(postgres, tmp_path):
    """A BI session idle in a transaction that read the marts: the build stops after DMF_PG_LOCK_TIMEOUT_S naming it (application_name, state), exit 1, marts unchanged; after it ends the next run succeeds."""
    settings = on_postgres(settings_in(tmp_path), "bi_lock")
    registry = small_registry(200, DAY)
    days = {DAY: registry.items_for(1), DAY + timedelta(days=1): registry.items_for(2)}
    marts = warehouse.schemas(settings).marts
    bi = None
    try:
        run_days(settings, DaysSource(days), [(DAY, None)], SERVICE_KEY)
        before = _marts(settings)

        bi = psycopg2.connect("", application_name="Metabase dashboard")
        cursor = bi.cursor()  # psycopg2 opens a transaction; it stays open, idle, holding its locks
        cursor.execute(f"select count(*) from {marts}.dmf_events")
        cursor.execute(f"select count(*) from {marts}.dmf_day_decisions")

        with SimulatorServer(DaysSource(days), service_key=SERVICE_KEY) as sim:
            sim.set_day(DAY + timedelta(days=1))
            env = dmf_process_env(
                tmp_path,
                sim.base_url,
                DMF_WAREHOUSE="postgres",
                DMF_SCHEMA_PREFIX=settings.schema_prefix,
                DMF_PG_LOCK_TIMEOUT_S="2",
            )
            blocked = _dmf(env, "run", "--as-of", (DAY + timedelta(days=1)).isoformat())
            _, err = blocked.communicate(timeout=HANG_BOUND_S)
            assert blocked.returncode == 1, err[-3000:]
            line = _one_line(err)
            print(line)
            assert line.startswith("dmf: the build waited 2 s (DMF_PG_LOCK_TIMEOUT_S) for a table lock on PostgreSQL ")
            assert f"held by pid {bi.get_backend_pid()} `Metabase dashboard` from " in line
            assert ", idle in transaction (open since " in line
            assert f"select pg_terminate_backend({bi.get_backend_pid()})" in line
            assert _marts(settings) == before  # the marts it held are as the last build left them

            bi.close()  # the BI user closes the dashboard
            bi = None
            after = _dmf(env, "run", "--as-of", (DAY + timedelta(days=1)).isoformat())
            _, err = after.communicate(timeout=HANG_BOUND_S)
            assert after.returncode == 0, err[-3000:]
        published = _marts(settings)
        assert published["days"] == [(DAY, "accepted"), (DAY + timedelta(days=1), "accepted")]
        assert len(published["events"]) > len(before["events"])
    finally:
        if bi is not None:
            bi.close()
        drop_schemas(settings)


def _backend_of(settings, pid: int) -> int | None:
    """The server pid of the session holding the run lock of the `dmf` process `pid`."""
    with warehouse.connect(settings, read_only=True) as con:
        row = con.execute(
            "select pid from pg_stat_activity where application_name like ?", [f"dmf run % pid {pid} on %"]
        ).fetchone()
    return row[0] if row else None


@pytest.mark.fault("the PostgreSQL server restarts during a run (the run lock lost)")
def test_a_run_that_lost_its_lock_stops_before_the_build(postgres, tmp_path):
    """The run lock's session terminated during the load (as a server restart ends it): the run stops before the build, exit 1, one line; the next run succeeds."""
    settings = on_postgres(settings_in(tmp_path), "lock_lost")
    registry = small_registry(200, DAY)
    days = {DAY: registry.items_for(1)}
    try:
        with SimulatorServer(DaysSource(days), service_key=SERVICE_KEY) as sim:
            sim.set_day(DAY)
            sim.set_faults("slow:6@times=1")  # the first page takes 6 s: the run is in its load
            env = dmf_process_env(
                tmp_path, sim.base_url, DMF_WAREHOUSE="postgres", DMF_SCHEMA_PREFIX=settings.schema_prefix
            )
            run = _dmf(env, "run", "--as-of", DAY.isoformat())
            backend = None
            while backend is None and run.poll() is None:
                backend = _backend_of(settings, run.pid)
                time.sleep(0.05)
            assert backend is not None, "the run never took its lock"
            with warehouse.connect(settings) as con:
                con.execute("select pg_terminate_backend(?)", [backend])
            _, err = run.communicate(timeout=HANG_BOUND_S)
            assert run.returncode == 1, err[-3000:]
            assert _one_line(err) == (
                f"dmf: this run lost its lock on the warehouse PostgreSQL {warehouse.server_name()} (its session "
                "ended: the server restarted or the session was terminated) and stopped before the build, as "
                "another run may hold the warehouse now: run it again once the server is up; it waits for any "
                "run that holds the warehouse."
            )
            with warehouse.connect(settings, read_only=True) as con:
                assert not warehouse.table_exists(con, warehouse.schemas(settings).marts, "dmf_day_decisions")

            sim.set_faults(None)
            again = _dmf(env, "run", "--as-of", DAY.isoformat())
            _, err = again.communicate(timeout=HANG_BOUND_S)
            assert again.returncode == 0, err[-3000:]
        assert _marts(settings)["days"] == [(DAY, "accepted")]
    finally:
        drop_schemas(settings)


@pytest.mark.fault("the PostgreSQL server stops answering during a run")
def test_sigterm_stops_a_run_whose_server_stopped_answering(postgres, tmp_path):
    """The run lock's backend stopped (SIGSTOP) during the load: the run hangs on it until SIGTERM, then stops in one line naming the server, exit 1; the next run succeeds."""
    settings = on_postgres(settings_in(tmp_path), "silent_backend")
    registry = small_registry(200, DAY)
    days = {DAY: registry.items_for(1)}
    backend = None
    try:
        with SimulatorServer(DaysSource(days), service_key=SERVICE_KEY) as sim:
            sim.set_day(DAY)
            sim.set_faults("slow:3@times=1")  # the run is in its load when its lock's backend stops
            env = dmf_process_env(
                tmp_path, sim.base_url, DMF_WAREHOUSE="postgres", DMF_SCHEMA_PREFIX=settings.schema_prefix
            )
            run = _dmf(env, "run", "--as-of", DAY.isoformat())
            while backend is None and run.poll() is None:
                backend = _backend_of(settings, run.pid)
                time.sleep(0.05)
            assert backend is not None, "the run never took its lock"
            os.kill(backend, signal.SIGSTOP)  # that server process no longer answers
            log = tmp_path / "state" / "logs" / "dmf.log"
            while run.poll() is None and f"run {DAY}  load" not in (log.read_text() if log.exists() else ""):
                time.sleep(0.1)
            time.sleep(3)  # the run now waits on the stopped backend (it checks its lock before the build)
            run.send_signal(signal.SIGTERM)
            _, err = run.communicate(timeout=HANG_BOUND_S)
            assert run.returncode == 1, err[-3000:]
            line = _one_line(err)
            print(line)
            assert line.startswith(
                f"dmf: stopped by SIGTERM during the build of {DAY} while waiting for PostgreSQL "
                f"{warehouse.server_name()}, which had not answered for "
            ), line
            assert line.endswith(
                "s (check that the server is up and answering); the build was not finished; the marts stay as "
                "the last complete build left them and the next run builds again."
            ), line
            os.kill(backend, signal.SIGCONT)
            backend = None

            sim.set_faults(None)
            again = _dmf(env, "run", "--as-of", DAY.isoformat())
            _, err = again.communicate(timeout=HANG_BOUND_S)
            assert again.returncode == 0, err[-3000:]
        assert _marts(settings)["days"] == [(DAY, "accepted")]
    finally:
        if backend is not None:
            os.kill(backend, signal.SIGCONT)
        drop_schemas(settings)


def test_dbt_sessions_get_the_lock_timeout_after_the_users_pgoptions(monkeypatch, tmp_path):
    """dbt's sessions on PostgreSQL start with lock_timeout appended to the user's PGOPTIONS, and the connect timeout; none on DuckDB."""
    import dataclasses

    from dmf_watch.core.errors import ConfigError
    from dmf_watch.transform.build import _postgres_session

    settings = dataclasses.replace(settings_in(tmp_path), warehouse="postgres", pg_lock_timeout_s=2.5)
    monkeypatch.setenv("PGOPTIONS", "-c statement_timeout=0")
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    assert _postgres_session(settings) == {
        "PGCONNECT_TIMEOUT": str(warehouse.DEFAULT_CONNECT_TIMEOUT_S),
        "PGOPTIONS": "-c statement_timeout=0 -c lock_timeout=2500",
    }
    assert _postgres_session(dataclasses.replace(settings, warehouse="duckdb")) == {}
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match=r"^PGCONNECT_TIMEOUT must be a whole number of seconds"):
        _postgres_session(settings)


def test_the_lock_timeout_setting_is_seconds_above_zero():
    """DMF_PG_LOCK_TIMEOUT_S defaults to 60 s and refuses 0 (no bound) in one line."""
    from dmf_watch.core.config import load_settings
    from dmf_watch.core.errors import ConfigError

    assert load_settings({}).pg_lock_timeout_s == 60
    assert load_settings({"DMF_PG_LOCK_TIMEOUT_S": "2"}).pg_lock_timeout_s == 2
    with pytest.raises(ConfigError, match=r"^DMF_PG_LOCK_TIMEOUT_S must be a number of seconds above 0, not '0'\.$"):
        load_settings({"DMF_PG_LOCK_TIMEOUT_S": "0"})
