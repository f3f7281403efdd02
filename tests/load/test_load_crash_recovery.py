"""`kill -9` between dlt's steps: the next load finishes or discards the package on purpose.

A child process runs the real pipeline's extract (and normalize) against the simulator and
then kills itself with SIGKILL, exactly where a crash would leave dlt's working dir. The next
normal run used to load that pending package instead of extracting, and then said
"produced no fetch result; this is a bug".
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dmf_watch.commands.run import run_day
from dmf_watch.pipelines.mfds.load import load_day, mfds_pipeline
from support.mfds import SERVICE_KEY, START_DATE, pointed_at
from support.scenarios import query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]

CHILD = """
import os, signal
from datetime import date
from dmf_watch.core.config import load_settings
from dmf_watch.pipelines.mfds import mfds_source
from dmf_watch.pipelines.mfds.load import mfds_pipeline, new_load_id
settings = load_settings()
pipeline = mfds_pipeline(settings)
source = mfds_source(as_of=date.fromisoformat({as_of!r}), load_id=new_load_id(),
                     mfds_api_base_url=settings.api_base_url, mfds_service_key={key!r})
pipeline.extract(source, loader_file_format="jsonl")
if {stage!r} in ("normalize", "load_items"):
    pipeline.normalize()
if {stage!r} == "load_items":
    # Die right after DuckDB committed the first data job (versions, membership or load_runs),
    # before the others: a partly loaded package, as a kill during dlt's load step leaves it.
    from dlt.destinations.impl.duckdb.duck import DuckDbCopyJob
    run_job = DuckDbCopyJob.run

    def run_then_die(self):
        run_job(self)  # DuckDB has committed this job's rows
        if self._file_name.startswith(("load_runs.", "dmf_item_versions.", "dmf_load_items.")):  # the first
            print("killing myself", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    DuckDbCopyJob.run = run_then_die
    pipeline.load()
print("killing myself", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _crash_after(stage: str, settings, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        MFDS_API_BASE_URL=settings.api_base_url,
        HOME=str(tmp_path / "home"),
        LOAD__WORKERS="1",
    )  # one job at a time: a kill between jobs
    code = CHILD.format(as_of=START_DATE.isoformat(), key=SERVICE_KEY, stage=stage)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr  # really killed by SIGKILL, after the step
    assert "killing myself" in done.stdout


def _pending(settings) -> tuple[list[str], list[str]]:
    pipeline = mfds_pipeline(settings)
    return list(pipeline.list_extracted_load_packages()), list(pipeline.list_normalized_load_packages())


def _recovery_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "left by an interrupted run" in r.getMessage()]


@pytest.mark.fault("`kill -9` after dlt's extract or normalize step")
def test_a_kill_after_extract_discards_the_package_and_extracts_afresh(
    tmp_settings, start_simulator, fast_policy, caplog, tmp_path
):
    """Killed after extract: the package is discarded (one log line) and the list fetched afresh."""
    caplog.set_level(logging.INFO)
    settings = pointed_at(tmp_settings, start_simulator(day=START_DATE))
    _crash_after("extract", settings, tmp_path)
    extracted, normalized = _pending(settings)
    assert len(extracted) == 1 and normalized == []

    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)

    lines = _recovery_lines(caplog)
    assert len(lines) == 1 and "only extracted" in lines[0] and "discarded" in lines[0] and extracted[0] in lines[0]
    assert outcome.fetch_status == "complete" and outcome.requests >= 3  # a fresh fetch from the API
    assert query(settings, "select load_id, distinct_count from mfds_raw.load_runs") == [(outcome.load_id, 1200)]
    assert query(settings, "select load_id, count(*) from mfds_raw.dmf_items group by all") == [(outcome.load_id, 1200)]
    assert _pending(settings) == ([], [])


@pytest.mark.fault("`kill -9` after dlt's extract or normalize step")
def test_a_kill_after_normalize_completes_the_package_once_and_the_day_is_published(
    tmp_settings, start_simulator, caplog, tmp_path
):
    """Killed after normalize: the package is completed once (one log line) and the day published."""
    caplog.set_level(logging.INFO)
    settings = pointed_at(tmp_settings, start_simulator(day=START_DATE))
    _crash_after("normalize", settings, tmp_path)
    extracted, normalized = _pending(settings)
    assert extracted == [] and len(normalized) == 1
    assert not settings.duckdb_path.exists() or query(
        settings, "select count(*) from information_schema.tables where table_name = 'load_runs'"
    ) == [(0,)]

    outcome = run_day(settings, START_DATE, service_key=SERVICE_KEY, echo=lambda line: None)

    lines = _recovery_lines(caplog)
    assert len(lines) == 1 and "normalized" in lines[0] and "completed" in lines[0] and normalized[0] in lines[0]
    (load_id,) = query(settings, "select load_id from mfds_raw.load_runs")[0]
    assert f"load {load_id} of {START_DATE} (complete)" in lines[0]
    assert query(
        settings, "select load_id, count(*), count(distinct item_position) from mfds_raw.dmf_items group by all"
    ) == [(load_id, 1200, 1200)]
    assert outcome.exit_code == 0 and outcome.verdict == "accepted"
    assert _pending(settings) == ([], [])
    again = load_day(settings, START_DATE, service_key=SERVICE_KEY)
    assert again.fetch_status == "skipped" and _recovery_lines(caplog) == lines


@pytest.mark.fault("`kill -9` after dlt's extract or normalize step")
def test_a_kill_in_the_middle_of_dlt_load_completes_the_package_without_duplicates(
    tmp_settings, start_simulator, caplog, tmp_path
):
    """Killed between two DuckDB jobs of dlt's load: completed with every row once."""
    caplog.set_level(logging.INFO)
    settings = pointed_at(tmp_settings, start_simulator(day=START_DATE))
    _crash_after("load_items", settings, tmp_path)
    assert _pending(settings)[1]  # still pending: the package was partly loaded

    def rows_of(table: str) -> int:
        exists = query(settings, "select count(*) from information_schema.tables where table_name = ?", [table])
        return query(settings, f"select count(*) from mfds_raw.{table}")[0][0] if exists == [(1,)] else 0

    # exactly one of the three jobs is in DuckDB: the versions, the membership, or the run row
    written = [rows_of("dmf_item_versions"), rows_of("dmf_load_items"), rows_of("load_runs")]
    assert written in ([1200, 0, 0], [0, 1200, 0], [0, 0, 1]), written
    if written[2]:  # a "complete" run whose items are not stored yet is never usable
        assert query(settings, "select fetch_status, distinct_count from mfds_raw.load_runs") == [("complete", 1200)]

    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY)

    lines = _recovery_lines(caplog)
    assert len(lines) == 1 and "completed" in lines[0]
    assert outcome.fetch_status == "skipped"  # the completed load is the day's complete load
    (load_id,) = query(settings, "select load_id from mfds_raw.load_runs")[0]
    assert query(
        settings, "select load_id, count(*), count(distinct item_position) from mfds_raw.dmf_items group by all"
    ) == [(load_id, 1200, 1200)]
    assert _pending(settings) == ([], [])


@pytest.mark.fault("`kill -9` after dlt's extract or normalize step")
@pytest.mark.parametrize("stage", ["extract", "normalize"])
def test_the_command_line_after_a_kill_prints_no_bug_message(stage, tmp_settings, start_simulator, tmp_path):
    """`dmf load` after a kill: exit 0, no "bug" message, one load."""
    settings = pointed_at(tmp_settings, start_simulator(day=START_DATE))
    _crash_after(stage, settings, tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        MFDS_API_BASE_URL=settings.api_base_url,
        MFDS_SERVICE_KEY=SERVICE_KEY,
        HOME=str(tmp_path / "home"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "load", "--as-of", START_DATE.isoformat()],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "bug" not in done.stdout + done.stderr and done.stderr == ""
    log_text = (settings.state_dir / "logs" / "dmf.log").read_text(encoding="utf-8")
    assert log_text.count("left by an interrupted run") == 1
    assert query(settings, "select count(*) from mfds_raw.load_runs") == [(1,)]
    assert query(settings, "select count(*) from mfds_raw.dmf_items") == [(1200,)]
