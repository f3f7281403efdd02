"""The faults of the warehouse itself, each named in one sentence with what to do.

Why here: DuckDB, psycopg2, dlt and dbt each report "the warehouse cannot be used" in their own
shape (a duckdb.IOException naming a pid, a psycopg2.OperationalError, a dlt
PipelineStepFailed wrapping either, a DmfError raised from one). A morning that fails this way
must print one line that names the right thing (the program holding the file, the server, the
disk that is full, the privilege missing) and raise an alert that does not need the warehouse.
`classify` reads the error and its whole chain once, for the command line and the alert alike;
`kind` tells two faults apart, so a different fault starts a new alert streak.

Nothing here ever puts a password in a line: the server is named by host, port and database
from libpq's variables, the same way `warehouse.describe` does.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.errors import error_chain
from dmf_watch.core.storage import write_failure

HELD_FILE = "warehouse_held"
SERVER_DOWN = "server_down"
SERVER_LOGIN = "server_login"
NO_PRIVILEGE = "no_privilege"
DISK_FULL = "disk_full"

_DUCKDB_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")
_DUCKDB_FILE = re.compile(r'Could not set lock on file "(?P<path>[^"]+)"')
_PRIVILEGE = re.compile(r"permission denied for (?P<what>schema|table|relation|database|sequence) (?P<name>\S+)")
_LOGIN = ("password authentication failed", "no password supplied", 'role "', "authentication failed")
_DOWN = (
    "connection refused",
    "could not connect to server",
    "no such file or directory\n\tis the server running",
    "is the server running",
    "timeout expired",
    "could not translate host name",
    "server closed the connection unexpectedly",
    "the database system is starting up",
    "the database system is shutting down",
    "terminating connection due to administrator command",
)


@dataclass(frozen=True)
class Fault:
    """A fault of the warehouse: `kind` (one streak per kind) and the one line a user sees."""

    kind: str
    line: str


def _role() -> str:
    return os.environ.get("PGUSER") or os.environ.get("USER") or "the configured role"


def program_name(pid: int) -> str:
    """What runs as `pid`, from /proc: its command name and executable, or "not running" when
    the process is gone (the pid alone then, as DuckDB gave it)."""
    proc = Path("/proc") / str(pid)
    try:
        name = (proc / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return "a process that has ended since"
    try:  # only the program, never its arguments: a BI tool's command line can hold a password
        argv0 = (proc / "cmdline").read_bytes().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        argv0 = ""
    program = Path(argv0).name if argv0 else ""
    return f"{name} ({program})" if program and program != name else name


def _held_file(text: str, settings: Any) -> Fault | None:
    found = _DUCKDB_HOLDER.search(text)
    if not found:
        return None
    pid = int(found["pid"])
    where = _DUCKDB_FILE.search(text)
    path = where["path"] if where else str(getattr(settings, "duckdb_path", "the warehouse file"))
    return Fault(
        HELD_FILE,
        f"the warehouse file {path} is held by another program, pid {pid} {program_name(pid)}: close that "
        "program (a BI tool should open the file read-only, and never during the morning run) and run again; "
        "nothing was loaded or published.",
    )


def _server(text: str) -> Fault | None:
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return Fault(
            SERVER_LOGIN,
            f"PostgreSQL {warehouse.server_name()} refused the login of role {_role()} (wrong or missing password): fix the password "
            "in ~/.pgpass, PGPASSFILE or PGPASSWORD and run again; nothing was loaded or published.",
        )
    if re.search(r'role "[^"]+" does not exist', text):
        return Fault(
            SERVER_LOGIN,
            f"PostgreSQL {warehouse.server_name()} has no role {_role()}: set PGUSER to the role your DBA created and run again; "
            "nothing was loaded or published.",
        )
    if any(phrase in lowered for phrase in _DOWN):
        return Fault(
            SERVER_DOWN,
            f"cannot reach PostgreSQL {warehouse.server_name()} (the server is down or does not answer): start it or fix PGHOST/PGPORT, "
            "then run again; nothing was loaded or published.",
        )
    found = _PRIVILEGE.search(text)
    if found:
        return Fault(
            NO_PRIVILEGE,
            f"role {_role()} may not write to PostgreSQL {warehouse.server_name()} (permission denied for {found['what']} "
            f"{found['name']}): grant it CREATE on the database and on its dmf schemas, or run as a role that "
            "has it, then run again; nothing was published.",
        )
    return None


def classify(error: BaseException, settings: Any) -> Fault | None:
    """The fault of the warehouse `error` is, or None when it is none of them."""
    disk = write_failure(error, settings)
    if disk is not None:
        return Fault(DISK_FULL, disk)
    texts = [str(current) for current in error_chain(error)]
    for text in texts:
        held = _held_file(text, settings)
        if held is not None:
            return held
    if getattr(settings, "warehouse", "duckdb") == "postgres":
        # a server that did not answer within the connect timeout: the boundary's own line names the setting
        unanswered = next((e for e in error_chain(error) if isinstance(e, warehouse.WarehouseUnreachable)), None)
        if unanswered is not None:
            return Fault(SERVER_DOWN, str(unanswered))
        for text in texts:
            fault = _server(text)
            if fault is not None:
                return fault
    return None
