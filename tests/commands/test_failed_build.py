"""A failed build publishes nothing: the readers' marts stay the last complete build (the
on-run-end hook publish_marts swaps them only after a build that passed); each build's outcome is
recorded; `dmf report` renders the days that build holds, as it left them, and refuses in one
line a day whose load came after it, as `dmf run` does. Real runs on replayed real records."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import LOADER_TABLES
from dmf_watch.transform.build import BuildOutcome, build
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, query, run_days
from support.worlds import REAL_TAILS

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY_1, DAY_2, DAY_3 = date(2026, 9, 25), date(2026, 10, 8), date(2026, 10, 9)


def dmf(settings, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        DMF_AI_DISABLED="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def null_severity_rows(settings) -> dict[str, int]:
    """Rows with a NULL severity in every table of the marts schema that has that column."""
    tables = query(
        settings,
        "select table_name from information_schema.columns where table_schema = 'marts' and column_name = 'severity'",
    )
    return {
        name: n
        for (name,) in tables
        for ((n,),) in [query(settings, f"select count(*) from marts.{name} where severity is null")]
        if n
    }


@dataclass
class FailedBuild:
    """What both tests of the header-only rules file start from, and what they read of it."""

    good: Settings  # the warehouse, built by the real project
    broken: Settings  # the same warehouse, built by the project copy with the header-only rules
    source: DaysSource
    published: int  # dmf_event_field_changes rows before the failed build
    nulls_before: dict[str, int]
    report_2: subprocess.CompletedProcess  # `dmf report` of DAY_2 before the failed build
    rendered: bytes  # the workbook it wrote
    outcome: BuildOutcome  # the failed build
    nulls_after: dict[str, int]
    published_after: int
    recorded: tuple  # the build's row in mfds_raw.build_runs: success, gate_fired, failures


@pytest.fixture(scope="module")
def failed_build(real_data_dir, shelf, tmp_path_factory) -> Iterator[FailedBuild]:
    """Two replayed real days built by the real project (a copy of the real tails' world), DAY_2's
    report rendered, then one build of a project copy whose severity_rules.csv keeps only its
    header. Built once for the module: the first test reads what the failed build left (captured
    here, before the second test goes on from it), the second runs on after it."""
    root = tmp_path_factory.mktemp("failed_build")
    tail_a, tail_b = (
        [r for r in read_jsonl(real_data_dir / name) if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
        for name in ("tail_A_2026-09-23.jsonl", "tail_B_2026-10-08.jsonl")
    )
    days = {DAY_1: tail_a, DAY_2: tail_b, DAY_3: tail_b}
    project = root / "project"
    shutil.copytree(
        PROJECT,
        project,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "target", "logs", "data", "state", "reports", "tests", "__pycache__", "*.egg-info"
        ),
    )
    shutil.copytree(PROJECT / "tests" / "dbt", project / "tests" / "dbt")
    rules = project / "seeds" / "severity_rules.csv"
    rules.write_text(rules.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    with shelf.copied(REAL_TAILS, root / "warehouse", agy_binary="/nonexistent/agy") as good:
        broken = dataclasses.replace(good, project_dir=project)
        published = query(good, "select count(*) from marts.dmf_event_field_changes")[0][0]
        nulls_before = null_severity_rows(good)
        report_2 = dmf(good, "report", "--as-of", str(DAY_2))
        rendered = (good.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx").read_bytes()
        outcome = build(broken)
        yield FailedBuild(
            good,
            broken,
            DaysSource(days),
            published,
            nulls_before,
            report_2,
            rendered,
            outcome,
            null_severity_rows(good),
            query(good, "select count(*) from marts.dmf_event_field_changes")[0][0],
            query(
                good, "select success, gate_fired, failures from mfds_raw.build_runs order by finished_at desc limit 1"
            )[0],
        )


@pytest.mark.fault("a severity rules file with only its header")
def test_a_header_only_rules_file_fails_the_build_and_leaves_no_null_severity_in_any_mart(failed_build):
    """Build fails, no NULL severity in any marts table; the last good rows stay."""
    assert failed_build.published > 0 and failed_build.nulls_before == {}

    outcome = failed_build.outcome

    assert not outcome.success and not outcome.gate_fired
    assert any(f.startswith("assert_every_field_change_has_a_severity") for f in outcome.failures), outcome.failures
    assert failed_build.nulls_after == {}
    assert failed_build.published_after == failed_build.published  # last good rows kept
    success, gate_fired, failures = failed_build.recorded
    assert (success, gate_fired) == (False, False) and "assert_every_field_change_has_a_severity" in failures


@pytest.mark.fault("a severity rules file with only its header")
def test_after_a_failed_build_report_shows_the_last_complete_build_and_refuses_a_newer_day(failed_build):
    """Reports of published days unchanged; a newer day refused in one line until a build passes."""
    good, broken, source = failed_build.good, failed_build.broken, failed_build.source
    daily = good.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"
    assert failed_build.report_2.returncode == 0
    assert not failed_build.outcome.success

    again = dmf(good, "report", "--as-of", str(DAY_2))

    assert again.returncode == 0, again.stderr
    assert daily.read_bytes() == failed_build.rendered  # the same build, the same workbook
    reports_before = sorted(p.name for p in good.reports_dir.iterdir())
    with pytest.raises(DmfError) as failed:
        run_days(broken, source, [(DAY_3, None)], SERVICE_KEY)
    assert failed.value.exit_code == 1
    assert sorted(p.name for p in good.reports_dir.iterdir()) == reports_before
    newer = dmf(good, "report", "--as-of", str(DAY_3))
    assert newer.returncode == 1
    assert newer.stderr.startswith("dmf: the last build failed at ") and newer.stderr.strip().count("\n") == 0
    assert "assert_every_field_change_has_a_severity" in newer.stderr and "run `dmf build`" in newer.stderr

    assert build(good).success  # the rules restored: the newer day renders too
    assert dmf(good, "report", "--as-of", str(DAY_3)).returncode == 0


def test_report_on_an_unbuilt_warehouse_says_to_load_or_to_build_first(tmp_settings):
    missing = dmf(tmp_settings, "report", "--as-of", str(DAY_2))
    assert missing.returncode == 1 and "does not exist: load first with `dmf run`" in missing.stderr
    tmp_settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)  # the lock file may have made it
    import duckdb

    duckdb.connect(str(tmp_settings.duckdb_path)).close()
    empty = dmf(tmp_settings, "report", "--as-of", str(DAY_2))
    assert empty.returncode == 1 and "holds no load yet: load first with `dmf run`" in empty.stderr
    assert empty.stderr.strip().count("\n") == 0
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:  # a load stored, never built
        con.execute("create schema mfds_raw")
        for table in LOADER_TABLES:
            con.execute(f"create table mfds_raw.{table} (load_id varchar)")
    unbuilt = dmf(tmp_settings, "report", "--as-of", str(DAY_2))
    assert unbuilt.returncode == 1 and "has not been built; run `dmf build` first" in unbuilt.stderr
