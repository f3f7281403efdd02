"""A load whose records fail the build does not brick the warehouse: the build fails on it every
time, the marts keep the build before it, and `dmf status`, `dmf reject-load` and `dmf accept-load`
read the day from the raw layer. Status shows the day loaded and not built with the build's first
failure, advises `dmf reject-load` (never `dmf build`, which fails the same way), and rejecting the
load lets the next build, and the next morning, pass.

The failing records are deterministic whatever the loader later quarantines: a project copy holds
one more singular dbt test that fails when a registration of the sequence is named 빌드실패원료 (a
model test the load's data breaks, as a placeholder permit number broke primary_key tests). Real
runs of the daily job over loopback HTTP from the simulator, with real dlt and dbt."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.commands.decisions import decide_load
from dmf_watch.commands.run import run_day
from dmf_watch.commands.status import day_statuses, format_table, last_build_failure
from dmf_watch.core.config import load_settings
from dmf_watch.core.errors import DmfError
from dmf_watch.simulator.server import SimulatorServer
from support.mfds import SERVICE_KEY, small_registry
from support.scenarios import DaysSource, query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY_1, DAY_2, DAY_3 = date(2026, 11, 29), date(2026, 11, 30), date(2026, 12, 1)
POISON = "빌드실패원료"
FAILING_TEST = "assert_no_registration_breaks_the_build"


def with_new(items: list[dict], name: str, number: str) -> list[dict]:
    return [*[dict(item) for item in items], dict(items[0], DMF_PERMIT_NO=number, INGR_KOR_NAME=name)]


@pytest.fixture
def breaking_load(tmp_path):
    """Settings on a project copy with the failing test, and a simulator whose day 2 lists the
    record that fails it; day 3 lists an honest new registration instead."""
    project = tmp_path / "project"
    shutil.copytree(
        PROJECT,
        project,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "target", "logs", "data", "state", "reports", "tests", "__pycache__", "*.egg-info"
        ),
    )
    shutil.copytree(PROJECT / "tests" / "dbt", project / "tests" / "dbt")
    (project / "tests" / "dbt" / f"{FAILING_TEST}.sql").write_text(
        f"select * from {{{{ ref('int_registration_records') }}}} where ingredient_name = '{POISON}'\n",
        encoding="utf-8",
    )
    settings = load_settings({}).with_paths(
        duckdb_path=tmp_path / "dmf.duckdb", reports_dir=tmp_path / "reports", state_dir=tmp_path / "state"
    )
    settings = dataclasses.replace(settings, project_dir=project, agy_binary="/nonexistent/agy")
    base = small_registry(600).items_for(1)
    source = DaysSource(
        {
            DAY_1: base,
            DAY_2: with_new(base, POISON, "20261130-901-I-1-01"),
            DAY_3: with_new(base, "정직한신규원료", "20261201-902-I-2-01"),
        }
    )
    with SimulatorServer(source, service_key=SERVICE_KEY) as server:
        yield dataclasses.replace(settings, api_base_url=server.base_url), server


def run(settings, server, day):
    server.set_day(day)
    return run_day(settings, day, service_key=SERVICE_KEY, echo=lambda line: None)


@pytest.mark.fault("a load that fails the build (status and reject-load from the raw layer)")
def test_a_load_that_fails_the_build_is_shown_from_raw_and_set_aside_by_reject_load(breaking_load):
    """exit 1 naming the failing test; status shows the day `no build` and advises reject-load, not dmf build; reject-load of the load the marts never saw exits 0 and the build passes; next morning exit 0 with its 1 NEW"""
    settings, server = breaking_load
    assert run(settings, server, DAY_1).exit_code == 0

    with pytest.raises(DmfError) as failed:
        run(settings, server, DAY_2)

    line = str(failed.value)
    assert failed.value.exit_code == 1 and "\n" not in line
    assert line.startswith(f"dbt build failed for {DAY_2}, nothing was published: {FAILING_TEST}"), line

    statuses = {s.day: s for s in day_statuses(settings, 2, DAY_2)}
    table = format_table(list(statuses.values()), last_build_failure(settings))
    day_2 = statuses[DAY_2]
    print(line, table, sep="\n")  # quoted in docs/operations.md (pytest -rP shows it)
    assert day_2.verdict == "no build" and FAILING_TEST in day_2.reason, table
    assert day_2.next_command.startswith(f"dmf reject-load --as-of {DAY_2} --by NAME --reason TEXT"), table
    assert "dmf build" not in day_2.next_command.split("(")[0]
    assert "The last build failed (" in table and FAILING_TEST in table
    assert statuses[DAY_1].verdict == "baseline"  # the marts keep the build before the failing one

    refused = []
    with pytest.raises(DmfError) as not_accepted:
        decide_load(settings, DAY_2, "accept", "kim", "looks fine", echo=refused.append)
    assert "was never built" in str(not_accepted.value) and not refused

    lines: list[str] = []
    code = decide_load(settings, DAY_2, "reject", "kim", "a record fails the build; set aside", echo=lines.append)

    assert code == 0, lines
    print(*lines, sep="\n")
    assert lines[0].startswith(f"{DAY_2}  load ") and "rejected by kim: a record fails the build" in lines[0]
    assert lines[1].startswith(f"{DAY_2}  build   dbt build passed"), lines
    ((verdict, reason),) = query(
        settings, "select verdict, reason from marts.dmf_day_decisions where as_of_date = ?", [DAY_2]
    )
    assert verdict == "rejected" and reason.startswith("rejected by kim")
    ((by, decision),) = query(settings, "select decided_by, decision from mfds_raw.load_decisions")
    assert (by, decision) == ("kim", "reject")
    assert last_build_failure(settings) is None
    assert statuses[DAY_2].day not in {
        s.day for s in day_statuses(settings, 1, DAY_2) if s.next_command and "reject-load" in s.next_command
    }

    morning = run(settings, server, DAY_3)  # the next honest morning

    assert morning.exit_code == 0 and morning.verdict == "accepted"
    events = query(settings, "select event_type, ingredient_name from marts.dmf_events where as_of_date = ?", [DAY_3])
    assert events == [("NEW", "정직한신규원료")], events
