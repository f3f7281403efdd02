"""The gate verdict is recorded on purpose and cannot vanish: after the gate test fails, dbt's
on-run-end hook record_fired_gates records the load, finding int_load_signals through dbt's graph
(so a renamed schema is followed) and failing the build loudly when the relation is not there.

Real runs: the simulator over HTTP, dlt into DuckDB, dbt on a copy of the project whose
intermediate layer is configured differently, the `dmf` command for the user's view."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
START = date(2026, 10, 5)
DAYS = [START, START + timedelta(days=1)]
# Every number reformatted and BIZRNO gone on day 2: withdrawn_share and identity_churn fire.
IDENTITY_BREAK = "permit_no_separator:_,null_field:BIZRNO"
RENAMED = "intermediate_renamed"


def project_copy(root: Path, *, edit_models: str | None = None, edit: tuple[str, str] | None = None) -> Path:
    """A copy of the dbt project (models, macros, seeds, dbt tests) with one edit of dbt_project.yml."""
    project = root / "project"
    project.mkdir()
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PROJECT / name, project / name)
    for name in ("models", "macros", "seeds", "snapshots"):
        shutil.copytree(PROJECT / name, project / name)
    shutil.copytree(PROJECT / "tests" / "dbt", project / "tests" / "dbt")
    if edit is not None:
        text = (project / "dbt_project.yml").read_text(encoding="utf-8")
        assert edit[0] in text, f"dbt_project.yml no longer has {edit[0]!r}"
        (project / "dbt_project.yml").write_text(text.replace(*edit), encoding="utf-8")
    return project


def settings_in(root: Path, project: Path) -> Settings:
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    return dataclasses.replace(settings, project_dir=project, agy_binary="/nonexistent/agy")


def tables_named(settings: Settings, name: str) -> list[str]:
    return [
        row[0]
        for row in query(settings, "select table_schema from information_schema.tables where table_name = ?", [name])
    ]


def test_a_rejection_is_recorded_when_the_intermediate_schema_is_renamed(tmp_path: Path):
    """int_load_signals lands in another schema; the rejection is still recorded and the next
    build publishes the rejected verdict (the old hook looked in `intermediate` and did nothing)."""
    project = project_copy(tmp_path, edit=("      +schema: intermediate\n", f"      +schema: {RENAMED}\n"))
    settings = settings_in(tmp_path, project)
    registry = SyntheticRegistry(seed=5, size=1200, start_date=START)

    outcomes = run_days(settings, registry, [(DAYS[0], None), (DAYS[1], IDENTITY_BREAK)], SERVICE_KEY)

    assert tables_named(settings, "int_load_signals") == [RENAMED]
    assert [o.exit_code for o in outcomes] == [0, 2]
    recorded = query(settings, "select distinct as_of_date from mfds_raw.rejected_load_signals")
    assert recorded == [(DAYS[1],)]
    verdict, gates = query(
        settings, "select verdict, rejected_gates from marts.dmf_loads where as_of_date = ?", [DAYS[1]]
    )[0]
    assert verdict == "rejected" and "identity_churn" in gates.split(",")
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAYS[1]]) == [(0,)]

    # Built again by hand: the recorded rejection stands (no gate fires again) and
    # `--as-of` prints that day's verdict.
    rebuilt = dmf_on_copy(settings, None, "build", "--as-of", str(DAYS[1]))
    print(rebuilt.stdout)
    assert rebuilt.returncode == 0, rebuilt.stderr
    lines = rebuilt.stdout.splitlines()
    assert lines[0].startswith("dbt build passed")
    assert lines[1].startswith(f"{DAYS[1]}  rejected: ") and "identity_churn" in lines[1]
    assert query(settings, "select count(distinct load_id) from mfds_raw.rejected_load_signals") == [(1,)]


# `dmf <args>` of this checkout on the copied project (there is no setting for the project dir).
DMF_ON_COPY = """
import dataclasses, sys
from pathlib import Path
from dmf_watch.commands import cli
settings = cli.load_settings()
cli.load_settings = lambda: dataclasses.replace(settings, project_dir=Path(sys.argv[1]))
raise SystemExit(cli.main(sys.argv[2:]))
"""


def dmf_on_copy(settings: Settings, server: SimulatorServer | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        DMF_AI_DISABLED="1",
        MFDS_SERVICE_KEY=SERVICE_KEY,
    )
    if server is not None:
        env["MFDS_API_BASE_URL"] = server.base_url
    return subprocess.run(
        [sys.executable, "-c", DMF_ON_COPY, str(settings.project_dir), *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_rejection_that_cannot_be_recorded_fails_the_run_in_one_line_and_publishes_nothing(tmp_path: Path):
    """int_load_signals made ephemeral: the warehouse has no relation to record the rejection
    from, so `dmf run` stops with one line saying so, instead of a day that looks handled."""
    project = project_copy(
        tmp_path,
        edit=(
            "    intermediate:\n      +schema: intermediate\n      +materialized: table\n",
            "    intermediate:\n      +schema: intermediate\n      +materialized: table\n"
            "      int_load_signals:\n        +materialized: ephemeral\n",
        ),
    )
    settings = settings_in(tmp_path, project)
    registry = SyntheticRegistry(seed=5, size=1200, start_date=START)
    # The accepted first day is the baseline, run in this process (the same daily job, on the same
    # project copy and paths): only the run under test is `dmf` as cron starts it.
    assert [o.exit_code for o in run_days(settings, registry, [(DAYS[0], None)], SERVICE_KEY)] == [0]
    with SimulatorServer(registry, service_key=SERVICE_KEY) as server:
        server.set_day(DAYS[1])
        server.set_faults(IDENTITY_BREAK)
        rejected = dmf_on_copy(settings, server, "run", "--as-of", str(DAYS[1]))

    print(rejected.stderr)
    assert tables_named(settings, "int_load_signals") == []
    assert rejected.returncode == 1
    assert rejected.stderr.count("\n") == 1
    assert rejected.stderr.startswith(
        "dmf: an integrity gate fired but the rejection could not be recorded "
        "(cannot record the gate rejection: int_load_signals is ephemeral"
    ), rejected.stderr
    assert "nothing was published" in rejected.stderr
    assert query(settings, "select count(*) from mfds_raw.rejected_load_signals") == [(0,)]
    success, failures = query(
        settings, "select success, failures from mfds_raw.build_runs order by finished_at desc limit 1"
    )[0]
    assert success is False and "could not be recorded" in failures
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date = ?", [DAYS[1]]) == [(0,)]
