"""The PostgreSQL tier's server: the one `.ci/run` started (DMF_TEST_PG_ENV names the file of
libpq variables it printed), or, run anywhere else, a throwaway one this test session starts
with the same script and stops at its end. Each test gets schemas of its own on it through
DMF_SCHEMA_PREFIX, the way two developers share one server."""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings

PROJECT_DIR = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT_DIR / ".ci" / "postgres"
LIBPQ = ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGSSLMODE", "PGPASSFILE")
_prefixes = count(1)


def _exports(text: str) -> dict[str, str]:
    line = next(line for line in text.splitlines() if line.startswith("export "))
    return dict(word.split("=", 1) for word in shlex.split(line)[1:])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def server() -> Iterator[dict[str, str]]:
    """The libpq variables of a running server, set in this process's environment (psycopg2 and
    dbt's profile read them there) for as long as the block runs."""
    given = os.environ.get("DMF_TEST_PG_ENV")
    started = None
    if given:
        variables = _exports(Path(given).read_text(encoding="utf-8"))
    else:
        done = subprocess.run(
            ["bash", str(SCRIPT), "start", str(_free_port())], capture_output=True, text=True, check=True
        )
        variables = started = _exports(done.stdout)
    saved = {name: os.environ.get(name) for name in LIBPQ}
    os.environ.update({name: variables[name] for name in LIBPQ})
    try:
        yield variables
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if started is not None:
            subprocess.run(["bash", str(SCRIPT), "stop", started["PGDATA_DIR"]], check=False)


def on_postgres(settings: Settings, name: str) -> Settings:
    """`settings` on the server, under schemas of a prefix no other test (or worker) uses."""
    worker = re.sub(r"\W", "", os.environ.get("PYTEST_XDIST_WORKER", "main"))
    prefix = f"t_{worker}_{os.getpid()}_{next(_prefixes)}_{name}"[:31].lower()
    return dataclasses.replace(settings, warehouse="postgres", schema_prefix=prefix)


def drop_schemas(settings: Settings) -> None:
    """Every schema of the settings' prefix, gone (a test leaves the shared server as it found it)."""
    with warehouse.connect(settings) as con:
        names = [
            row[0]
            for row in con.execute(
                "select schema_name from information_schema.schemata where schema_name like ?",
                [settings.schema_prefix + "\\_%"],
            ).fetchall()
        ]
        for name in names:
            con.execute(f'drop schema "{name}" cascade')
