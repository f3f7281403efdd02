"""Every wait on PostgreSQL is bounded and names what it waits for: a port that accepts and never
answers ends `dmf run` at the connect timeout naming the server; a BI session idle in a
transaction on a mart stops the build at the lock timeout naming that session, and the next run
after it ends succeeds; a run whose advisory lock is lost (its session ended, as on a server
restart) stops before it builds."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

import pytest

from support.scenarios import dmf_process_env

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
def _silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never sends a byte."""
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
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in accepted:
            conn.close()
        listener.close()


@pytest.mark.fault("a PostgreSQL port that accepts and never answers")
def test_a_port_that_never_answers_ends_the_run_at_the_connect_timeout(simulator, tmp_path):
    """`dmf run` against a port that accepts and never answers: exit 1 at the connect timeout, one line naming the server."""
    with _silent_port() as port:
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
