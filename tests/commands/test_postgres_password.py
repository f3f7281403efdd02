"""The PostgreSQL password is swept for as the service key is: after `dmf run`, `dmf status`,
`dmf doctor` and a run that cannot log in, it is in no output, log, report, state file, dbt
artefact (target/, logs/), dlt working file or text column of the warehouse. Given the
riskier way, in PGPASSWORD (a pgpass file never puts it in the environment at all)."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.core import warehouse
from support.postgres import drop_schemas, on_postgres
from support.scenarios import dmf_process_env, settings_in
from support.secrets import file_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

DAY = date(2026, 11, 2)


def _password(variables: dict[str, str]) -> str:
    """The role's password, from the server's pgpass file (host:port:db:user:password)."""
    for line in Path(variables["PGPASSFILE"]).read_text(encoding="utf-8").splitlines():
        *where, password = line.split(":")
        if where[3] == variables["PGUSER"]:
            return password
    raise AssertionError("no pgpass line for the role")


def _dmf(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args], env=env, capture_output=True, text=True, timeout=600
    )


def test_the_password_is_in_no_output_file_or_column(postgres, simulator, tmp_path):
    password = _password(postgres)
    assert len(password) >= 16
    settings = on_postgres(settings_in(tmp_path), "password")
    env = dmf_process_env(
        tmp_path, simulator.base_url, DMF_WAREHOUSE="postgres", DMF_SCHEMA_PREFIX=settings.schema_prefix
    )
    env.pop("PGPASSFILE", None)
    env["PGPASSWORD"] = password
    try:
        runs = [
            _dmf(env, "run", "--as-of", DAY.isoformat()),
            _dmf(env, "status", "--as-of", DAY.isoformat()),
            _dmf(env, "doctor"),
            _dmf({**env, "PGPASSWORD": password + "-wrong"}, "status", "--as-of", DAY.isoformat()),
        ]
        assert runs[0].returncode == 0, runs[0].stderr[-2000:]
        assert "published" in runs[1].stdout or "accepted" in runs[1].stdout, runs[1].stdout
        assert runs[3].returncode == 1 and "refused the login of role" in runs[3].stderr  # named: core/faults.py

        leaks = [f"output of dmf {i}" for i, run in enumerate(runs) if password in run.stdout + run.stderr]
        files = [p for p in tmp_path.rglob("*") if p.is_file()]
        assert any(p.match("*/target/*.json") for p in files) and any(p.suffix == ".xlsx" for p in files)
        leaks += [str(p) for p in files if password.encode() in file_bytes(p)]
        with warehouse.connect(settings, read_only=True) as con:
            columns = con.execute(
                "select table_schema, table_name, column_name from information_schema.columns "
                "where table_schema like ? and data_type in ('text', 'character varying', 'jsonb', 'json')",
                [settings.schema_prefix + "\\_%"],
            ).fetchall()
            assert len(columns) > 50
            for schema, table, column in columns:
                hits = con.execute(
                    f'select count(*) from "{schema}"."{table}" where cast("{column}" as text) like ?',
                    [f"%{password}%"],
                ).fetchone()[0]
                if hits:
                    leaks.append(f"{schema}.{table}.{column}")
        assert leaks == []
    finally:
        drop_schemas(settings)
