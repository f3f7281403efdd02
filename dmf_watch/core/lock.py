"""One run at a time per warehouse: an exclusive `flock` on a file next to the DuckDB file, or
on PostgreSQL an advisory lock in the database, which every host sharing the server sees.

Why flock: the kernel releases it when the owning process ends, however it ends (exit, crash,
`kill -9`), so a lock can never outlive its owner and "stale" needs no guessing from pids.
The file is never deleted (deleting a lock file lets two processes lock two different inodes);
while held it says who holds it (pid, host, command, start), so a second run that gives up can
name the running one. File descriptors are opened close-on-exec, so a child process of a run
(`agy`) never inherits the lock.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError

log = logging.getLogger(__name__)

POLL_S = 0.2


class WarehouseBusy(DmfError):
    """Another dmf process held the warehouse for longer than the configured wait."""


class LockLost(DmfError):
    """The session holding this run's advisory lock on PostgreSQL ended (a server restart, a
    terminated backend): another run may hold the warehouse now."""


# The server locks this process holds, and the warehouse each is for (check_lock_held reads them).
_held: list[tuple[warehouse.ServerLock, str]] = []


def check_lock_held(before: str) -> None:
    """Stops the command, before it publishes (`before`: "the build", ...), when its lock on the
    server is gone. On PostgreSQL the lock lives as long as its own session; a server restart ends
    that session while every other connection of the run simply connects again, and a second run
    can then take the lock and build beside this one. A no-op without a server lock (DuckDB's
    flock cannot be lost while the process lives)."""
    for lock, where in _held:
        if not lock.still_held():
            raise LockLost(
                f"this run lost its lock on the warehouse {where} (its session ended: the server restarted or "
                f"the session was terminated) and stopped before {before}, as another run may hold the warehouse "
                "now: run it again once the server is up; it waits for any run that holds the warehouse."
            )


def lock_path(duckdb_path: Path) -> Path:
    return duckdb_path.with_name(duckdb_path.name + ".lock")


def _holder(path: Path) -> str:
    """Who holds the lock, in words, from what the holder wrote into the file."""
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    if not info.get("pid"):
        return "another dmf process (it has not written its name yet)"
    return (
        f"pid {info['pid']} on {info.get('host', '?')}, `{info.get('command', 'dmf')}`, "
        f"since {info.get('started_at', '?')}"
    )


@contextmanager
def warehouse_lock(settings: Settings, command: str, wait_s: float) -> Iterator[None]:
    """Hold the warehouse's lock for the duration of the block; wait up to `wait_s` for it."""
    if settings.warehouse == "postgres":
        with _server_lock(settings, command, wait_s):
            yield
        return
    with _file_lock(settings.duckdb_path, command, wait_s):
        yield


@contextmanager
def _server_lock(settings: Settings, command: str, wait_s: float) -> Iterator[None]:
    # One lock per raw schema: developers with their own schema prefix do not wait for each other.
    key = f"dmf_watch:{warehouse.schemas(settings).raw}"
    lock = warehouse.ServerLock(key, f"{command} pid {os.getpid()} on {socket.gethostname()}")
    try:
        deadline = time.monotonic() + wait_s
        announced = False
        while not lock.try_acquire():
            holder = lock.holder() or "another dmf process"
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"another dmf run holds the warehouse {warehouse.describe(settings)} ({holder}); "
                    f"waited {wait_s:g} s: let it finish and run again, or raise DMF_LOCK_WAIT_S."
                )
            if not announced:
                log.info("waiting up to %g s for the warehouse lock held by %s", wait_s, holder)
                announced = True
            time.sleep(POLL_S)
        _held.append((lock, warehouse.describe(settings)))
        try:
            yield
        finally:
            _held.remove((lock, warehouse.describe(settings)))
    finally:
        lock.close()  # ending the session releases the lock


@contextmanager
def _file_lock(duckdb_path: Path, command: str, wait_s: float) -> Iterator[None]:
    path = lock_path(duckdb_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WarehouseBusy(
                        f"another dmf run holds the warehouse {duckdb_path} ({_holder(path)}); "
                        f"waited {wait_s:g} s: let it finish and run again, or raise DMF_LOCK_WAIT_S."
                    ) from None
                if not announced:
                    log.info("waiting up to %g s for the warehouse lock held by %s", wait_s, _holder(path))
                    announced = True
                time.sleep(POLL_S)
        started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        record = {"pid": os.getpid(), "host": socket.gethostname(), "command": command, "started_at": started}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # the name goes first, so a waiter never names a finished run
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
