"""Upgrading in place: a warehouse an earlier release built, then today's `dmf` on it.

The earlier release is a commit of this repository (OLD_RELEASE), checked out with `git worktree`
and installed in its own venv (support/old_release.py: built once per commit and kept). Its own
`dmf run` loads three simulated days from today's simulator on loopback (the same API); then
today's `dmf status`, `dmf report` and `dmf run` for the next day run on that warehouse as cron
would start them, each a new process. History is kept (the earlier days' events and verdicts as
the earlier release published them), and the reports render and read back.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest
from openpyxl import load_workbook

from dmf_watch.commands.upgrade import LAYOUT_TABLE
from support.mfds import START_DATE, small_registry
from support.old_release import installed_release
from support.scenarios import dmf_process_env

pytestmark = pytest.mark.e2e  # two releases' `dmf run`s and dbt builds: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
# 2026-12-04 14:48 UTC, "tests: the two morning-build tests that edit a copied project share one
# helper for the copy": the last commit before `attempt_order` appeared in
# models/marts/dmf_loads.sql (10ce542). Its marts also lack the Korean reasons and owners of
# events (rationale, rationale_ko, watch_owners), dmf_registrations.watch_matches and
# dmf_watchlist_unmatched.unmatched_reason; its raw load_runs lacks attempt_seq; its package was
# still seven top-level packages (`dmf.cli`), before PostgreSQL.
OLD_RELEASE = "2b7e705871030a006655f684d38be4066c4623ca"
DAYS = [START_DATE + timedelta(days=n) for n in range(4)]  # three by the old release, one by today's
EARLIER, NEXT = DAYS[:3], DAYS[3]
CASE = "upgrading in place from an earlier release"


def today_dmf(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def published(root: Path) -> dict[str, list[tuple]]:
    """What the earlier days published, in the columns the earlier release's marts had."""
    with duckdb.connect(str(root / "data" / "dmf.duckdb"), read_only=True) as con:
        decisions = con.execute(
            "select as_of_date, load_id, verdict from marts.dmf_day_decisions where as_of_date <= ? order by 1",
            [EARLIER[-1]],
        ).fetchall()
        events = con.execute(
            "select event_id, as_of_date, event_type, dmf_key, permit_no, severity, on_watchlist, changed_fields "
            "from marts.dmf_events where as_of_date <= ? order by all",
            [EARLIER[-1]],
        ).fetchall()
        changes = con.execute(
            "select as_of_date, dmf_key, field_name, before_value, after_value, change_kind, severity "
            "from marts.dmf_event_field_changes where as_of_date <= ? order by all",
            [EARLIER[-1]],
        ).fetchall()
    return {"decisions": decisions, "events": events, "field_changes": changes}


def columns(root: Path, schema: str, table: str) -> list[str]:
    with duckdb.connect(str(root / "data" / "dmf.duckdb"), read_only=True) as con:
        return [
            row[0]
            for row in con.execute(
                "select column_name from information_schema.columns where table_schema = ? and table_name = ?",
                [schema, table],
            ).fetchall()
        ]


@pytest.fixture(scope="module")
def simulator():
    from dmf_watch.simulator.server import SimulatorServer
    from support.mfds import SERVICE_KEY

    server = SimulatorServer(small_registry(400), service_key=SERVICE_KEY)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def earlier_warehouse(simulator, tmp_path_factory) -> tuple[Path, dict[str, list[tuple]]]:
    """Three days loaded, built, reported by the earlier release's own `dmf run`, and what they published."""
    old_dmf = installed_release(OLD_RELEASE)
    root = tmp_path_factory.mktemp("earlier")
    env = dmf_process_env(root, simulator.base_url, MFDS_API_ALLOWED_HOSTS="127.0.0.1")
    for day in EARLIER:
        simulator.set_day(day)
        done = subprocess.run(
            [str(old_dmf), "run", "--as-of", day.isoformat()], env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, (day, done.stdout, done.stderr)
    assert "attempt_order" not in columns(root, "marts", "dmf_loads")  # the layout this test is about
    return root, published(root)


@pytest.fixture
def warehouse_of_earlier_release(earlier_warehouse, tmp_path, simulator) -> tuple[Path, dict[str, str]]:
    """A copy of the earlier release's warehouse, state and reports for one test, and today's env."""
    source, _ = earlier_warehouse
    root = tmp_path / "site"
    shutil.copytree(source, root)
    return root, dmf_process_env(root, simulator.base_url, MFDS_API_ALLOWED_HOSTS="127.0.0.1")


@pytest.mark.fault(CASE)
def test_status_and_report_on_an_earlier_release_say_in_one_line_what_to_run(warehouse_of_earlier_release):
    """Before the first run: status exit 0 with one `Upgrade:` line, report exit 1 in one line, warehouse untouched."""
    root, env = warehouse_of_earlier_release

    status = today_dmf(env, "status", "--as-of", EARLIER[-1].isoformat(), "--days", "3")
    assert status.returncode == 0, status.stderr
    upgrade = [line for line in status.stdout.splitlines() if line.startswith("Upgrade: ")]
    assert len(upgrade) == 1, status.stdout
    assert "earlier release" in upgrade[0] and "lacks attempt_order" in upgrade[0]
    assert "`dmf run`" in upgrade[0] and "`dmf build --full-refresh`" in upgrade[0]

    report = today_dmf(env, "report", "--as-of", EARLIER[-1].isoformat())
    assert report.returncode == 1
    assert report.stderr.count("\n") == 1 and report.stderr.startswith("dmf: the marts were built by an earlier")
    assert "unexpected" not in report.stderr and "Traceback" not in report.stderr

    # read-only: the warehouse is as the earlier release left it
    assert "attempt_order" not in columns(root, "marts", "dmf_loads")
    assert columns(root, "mfds_raw", LAYOUT_TABLE) == []


@pytest.mark.fault(CASE)
def test_dmf_run_upgrades_in_place_keeping_published_days(earlier_warehouse, warehouse_of_earlier_release, simulator):
    """2b7e705's warehouse, today's `dmf run`: exit 0, marts rebuilt, earlier days' verdicts and events unchanged, reports read back."""
    _, before = earlier_warehouse
    root, env = warehouse_of_earlier_release
    assert before["decisions"] and before["events"], "the earlier release published nothing to keep"

    simulator.set_day(NEXT)
    run = today_dmf(env, "run", "--as-of", NEXT.isoformat())
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert "unexpected" not in run.stdout + run.stderr
    assert f"{NEXT}  upgrade " in run.stdout and "marts of an earlier release rebuilt" in run.stdout

    # the marts have this release's columns, and the earlier days' verdicts and events as published
    assert "attempt_order" in columns(root, "marts", "dmf_loads")
    assert published(root) == before
    with duckdb.connect(str(root / "data" / "dmf.duckdb"), read_only=True) as con:
        verdicts = dict(con.execute("select as_of_date, verdict from marts.dmf_day_decisions").fetchall())
        layouts = con.execute(f"select count(*) from mfds_raw.{LAYOUT_TABLE}").fetchone()[0]
    assert verdicts == dict.fromkeys(DAYS, "accepted")
    assert layouts == 1

    status = today_dmf(env, "status", "--as-of", NEXT.isoformat(), "--days", "4")
    assert status.returncode == 0, status.stderr
    assert "Upgrade" not in status.stdout
    assert all(str(day) in status.stdout for day in DAYS)

    for day in (EARLIER[-1], NEXT):  # a day the earlier release published, and today's
        report = today_dmf(env, "report", "--as-of", day.isoformat())
        assert report.returncode == 0, report.stderr
        workbook = load_workbook(report.stdout.strip().splitlines()[-1], read_only=True)
        assert len(workbook.sheetnames) > 1 and all(workbook[name].max_row for name in workbook.sheetnames)

    # the next morning takes the fast path: nothing to upgrade, nothing recorded twice
    again = today_dmf(env, "run", "--as-of", NEXT.isoformat())
    assert again.returncode == 0, again.stderr
    assert f"{NEXT}  upgrade " not in again.stdout
    with duckdb.connect(str(root / "data" / "dmf.duckdb"), read_only=True) as con:
        assert con.execute(f"select count(*) from mfds_raw.{LAYOUT_TABLE}").fetchone()[0] == 1
