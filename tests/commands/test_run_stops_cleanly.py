"""A `dmf run` told to stop (SIGTERM, its deadline) or killed (`kill -9`) at each stage leaves
nothing behind: no process of it, a free warehouse, the attempt recorded, and a next run that
exits 0. Real `dmf run` processes against the simulator on loopback; each stage is reached by
real means (a slow server, dbt's start-up, a report file that cannot be written yet, a webhook
that does not answer, an `agy` that does not answer).

No stage here is about an empty warehouse: a stop, a kill or a dripping server ends a morning the
same way whether it is the first or a later one. Every test therefore starts from the session's
copy of PREVIOUS_DAY (the `previous_day` fixture) and its children run DAY, a morning with a day
before it as cron's mornings have, building no first morning (seeds and their tests) that no stage
here needs; what they assert about the warehouse is about DAY's rows, or about the rows the
children added to the copied ones."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from dmf_watch.core.config import load_settings
from dmf_watch.core.lock import lock_path
from fake_agy.support import FAKE_AGY
from support.loopback import WebhookReceiver
from support.mfds import START_DATE
from support.scenarios import dmf_process_env, query

pytestmark = pytest.mark.e2e  # runs dbt and whole days: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
PREVIOUS_DAY, DAY = START_DATE.isoformat(), (START_DATE + timedelta(days=1)).isoformat()
# The run's deadline in the test that lets it stop the load: longer than a busy machine takes from
# the lock to the first page (with 3 s, a loaded 2-core machine let it fire before the load had
# asked for a page, so no attempt was recorded), far shorter than the slow page (30 s).
DEADLINE_S = 10


def environment(tmp_path: Path, base_url: str, **extra: str) -> dict[str, str]:
    """A `dmf` child's environment that never waits for the lock and prints each line at once."""
    return dmf_process_env(tmp_path, base_url, **{"DMF_LOCK_WAIT_S": "0", "PYTHONUNBUFFERED": "1", **extra})


class Run:
    """`dmf run --as-of DAY` in its own process, its stdout collected line by line as it comes."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dmf_watch.commands.cli", "run", "--as-of", DAY],
            cwd=PROJECT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def wait_for(self, step: str, timeout_s: float = 120) -> None:
        """Until the run printed the line of `step` (`D  load  …`), i.e. the next step began."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(line.startswith(f"{DAY}  {step}") for line in self.lines):
                return
            assert self.process.poll() is None, (self.lines, self.process.stderr.read())
            time.sleep(0.05)
        raise AssertionError(f"the run never printed its {step} line: {self.lines}")

    def stop(self, how: signal.Signals) -> tuple[int, str]:
        self.process.send_signal(how)
        code = self.process.wait(timeout=60)
        self._reader.join(timeout=10)
        assert self.process.stderr is not None
        return code, self.process.stderr.read()


def wait_until(condition, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def settings_of(tmp_path: Path):
    return load_settings(
        {
            "DMF_DUCKDB_PATH": str(tmp_path / "data" / "dmf.duckdb"),
            "DMF_STATE_DIR": str(tmp_path / "state"),
            "DMF_REPORTS_DIR": str(tmp_path / "reports"),
        }
    )


def run_to_the_end(env: dict[str, str], day: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "run", "--as-of", day],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_the_next_run_exits_0(env: dict[str, str], tmp_path: Path) -> None:
    """The warehouse is free (the lock is taken at once: DMF_LOCK_WAIT_S=0) and the day completes."""
    done = run_to_the_end(env, DAY)
    assert done.returncode == 0, done.stdout + done.stderr
    verdict = "select verdict from marts.dmf_day_decisions where as_of_date = ?"
    assert query(settings_of(tmp_path), verdict, [DAY]) == [("accepted",)]


def alerts(tmp_path: Path) -> list[tuple]:
    return query(settings_of(tmp_path), "select kind, body from notify.alerts order by raised_at")


@pytest.mark.fault("SIGTERM or the run's deadline during the load (a slow server)")
@pytest.mark.parametrize("stop", ["SIGTERM", "deadline"])
def test_a_run_stopped_during_the_load_records_the_attempt_and_frees_the_warehouse(
    tmp_path, start_simulator, previous_day, stop
):
    """stopped while a page is arriving: one line, a failed attempt recorded, the alert raised; the next run exits 0"""
    server = start_simulator(day=DAY, faults="slow:30")
    env = environment(
        tmp_path, server.base_url, **({"DMF_RUN_DEADLINE_S": str(DEADLINE_S)} if stop == "deadline" else {})
    )
    run = Run(env)
    wait_until(lambda: lock_path(tmp_path / "data" / "dmf.duckdb").is_file())
    started = time.monotonic()
    if stop == "SIGTERM":
        wait_until(lambda: server.requests > 0)  # the first page is asked for (and arrives 30 s later)
        code, err = run.stop(signal.SIGTERM)
    else:
        code, err = run.process.wait(timeout=60), run.process.stderr.read()
    # the deadline's bound keeps the 17 s to end after it that it had when the deadline was 3 s
    assert time.monotonic() - started < (20 if stop == "SIGTERM" else DEADLINE_S + 17)
    assert server.requests > 0  # stopped while a page was on its way, not before the load asked for one

    cause = "SIGTERM" if stop == "SIGTERM" else f"its deadline (DMF_RUN_DEADLINE_S = {DEADLINE_S} s)"
    assert code == 1 and err == f"dmf: stopped by {cause} during the load of {DAY}; " + (
        "the load was not finished and nothing of it is used; the next run completes or discards what it stored "
        "and fetches again.\n"
    )
    assert query(
        settings_of(tmp_path), "select fetch_status, reason from mfds_raw.load_runs where as_of_date = ?", [DAY]
    ) == [("failed", f"the fetch was stopped by {cause}")]
    assert [kind for kind, _ in alerts(tmp_path)] == ["run_failed"]
    assert "dmf run --as-of" in (tmp_path / "state" / "logs" / "dmf.log").read_text(encoding="utf-8")
    server.set_faults(None)
    env.pop("DMF_RUN_DEADLINE_S", None)
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("SIGTERM during the build")
def test_a_run_stopped_during_the_build_records_a_failed_build_and_the_next_run_builds_again(
    tmp_path, start_simulator, previous_day
):
    """SIGTERM during dbt: one line, the build recorded as failed (nothing reads half-built marts), exit 1, then 0"""
    builds = "select success from mfds_raw.build_runs order by started_at"
    built_before = query(settings_of(tmp_path), builds)
    server = start_simulator(day=DAY)
    env = environment(tmp_path, server.base_url)
    run = Run(env)
    run.wait_for("load")
    time.sleep(1.0)  # dbt is starting or building
    code, err = run.stop(signal.SIGTERM)

    assert code == 1 and err.startswith(f"dmf: stopped by SIGTERM during the build of {DAY}; ") and err.count("\n") == 1
    assert built_before and all(success for (success,) in built_before)
    assert query(settings_of(tmp_path), builds) == [*built_before, (False,)]
    assert [kind for kind, _ in alerts(tmp_path)] == ["run_failed"]
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("SIGTERM or `kill -9` during the report")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_while_its_report_cannot_be_written_yet_ends_and_the_next_run_reports(
    tmp_path, start_simulator, previous_day, how
):
    """SIGTERM or kill -9 while the report's file blocks (a FIFO nobody reads): one line naming the report; then 0"""
    server = start_simulator(day=DAY)
    env = environment(tmp_path, server.base_url)
    fifo = tmp_path / "reports" / f"dmf_daily_{DAY.replace('-', '')}.xlsx.tmp"
    os.mkfifo(fifo)
    run = Run(env)
    run.wait_for("enrich")
    # Until the report's open of the FIFO blocks (no reader yet), not a fixed sleep: a weekly
    # briefing or a loaded machine can keep the run in enrich past any fixed delay.
    wchan = Path(f"/proc/{run.process.pid}/wchan")
    wait_until(lambda: wchan.read_text() == "wait_for_partner")
    code, err = run.stop(how)

    if how == signal.SIGTERM:
        assert code == 1 and err.startswith(f"dmf: stopped by SIGTERM during the report of {DAY}; the day was built")
    else:
        assert code == -9 and not alive(run.process.pid)
    verdict = "select verdict from marts.dmf_day_decisions where as_of_date = ?"
    assert query(settings_of(tmp_path), verdict, [DAY]) == [("accepted",)]
    fifo.unlink(missing_ok=True)  # the report step removes its temporary file on the way out
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("SIGTERM or `kill -9` during notify (a webhook that does not answer)")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_while_a_webhook_hangs_ends_within_its_bounds(tmp_path, start_simulator, previous_day, how):
    """SIGTERM or kill -9 while a webhook holds the delivery: one line naming notify, bounded; then exit 0"""
    server = start_simulator(day=DAY)
    with WebhookReceiver(delay=20) as hook:
        env = environment(tmp_path, server.base_url, DMF_NOTIFY_URLS=hook.url("u", "p", "hook", rto="2"))
        run = Run(env)
        wait_until(lambda: hook.requests, timeout_s=120)
        started = time.monotonic()
        code, err = run.stop(how)
        assert time.monotonic() - started < 30
    if how == signal.SIGTERM:
        assert code == 1 and err.startswith(f"dmf: stopped by SIGTERM during the notify of {DAY}; the day was built")
    else:
        assert code == -9 and not alive(run.process.pid)
    env.pop("DMF_NOTIFY_URLS")
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("SIGTERM or `kill -9` while agy is answering")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_no_agy_outlives_its_run_whether_the_run_is_stopped_or_killed(tmp_path, start_simulator, previous_day, how):
    """agy never answers; the run gets SIGTERM or kill -9: agy is gone within seconds, the lock is free, then exit 0"""
    assert query(settings_of(tmp_path), "select as_of_date, verdict from marts.dmf_day_decisions") == [
        (START_DATE, "accepted")
    ]
    server = start_simulator(day=DAY)
    pidfile = tmp_path / "agy.pid"
    state = tmp_path / "state"
    (state / "agy.toml").write_text('[enrich]\nretry_backoff_seconds = 0\nprint_timeout = "120s"\n', encoding="utf-8")
    env = environment(
        tmp_path,
        server.base_url,
        DMF_AGY_BINARY=str(FAKE_AGY),
        FAKE_AGY_MODE="timeout",
        FAKE_AGY_SLEEP="120",
        FAKE_AGY_PIDFILE=str(pidfile),
    )
    env.pop("DMF_AI_DISABLED")
    run = Run(env)
    wait_until(lambda: pidfile.is_file() and pidfile.read_text().strip(), timeout_s=180)
    agy = int(pidfile.read_text().strip())
    assert alive(agy)
    code, err = run.stop(how)

    wait_until(lambda: not alive(agy), timeout_s=15)
    if how == signal.SIGTERM:
        assert code == 1 and err.startswith(f"dmf: stopped by SIGTERM during the enrich of {DAY}")
    else:
        assert code == -9
    env["DMF_AI_DISABLED"] = "1"
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("`kill -9` during the build")
def test_a_run_killed_during_the_build_leaves_a_free_warehouse_and_its_load_for_the_next_run(
    tmp_path, start_simulator, previous_day
):
    """kill -9 during dbt: no process left, the lock free, the stored load shown as not built; the next run exits 0"""
    server = start_simulator(day=DAY)
    env = environment(tmp_path, server.base_url)
    run = Run(env)
    run.wait_for("load")
    time.sleep(1.0)
    code, _ = run.stop(signal.SIGKILL)

    assert code == -9 and not alive(run.process.pid)
    settings = settings_of(tmp_path)
    assert query(settings, "select fetch_status from mfds_raw.load_runs where as_of_date = ?", [DAY]) == [("complete",)]
    assert_the_next_run_exits_0(env, tmp_path)


@pytest.mark.fault("a server that sends one byte at a time")
def test_dmf_run_against_a_dripping_server_ends_within_its_deadline_with_its_line(
    tmp_path, start_simulator, previous_day
):
    """`dmf run` against a server dripping one byte at a time: exit 1 within the load deadline, the line names it"""
    server = start_simulator(day=DAY, faults="drip:0.05")
    env = environment(tmp_path, server.base_url, DMF_PAGE_DEADLINE_S="1", DMF_LOAD_DEADLINE_S="3")
    started = time.monotonic()
    done = run_to_the_end(env, DAY)
    assert done.returncode == 1
    assert "the load was still going after 3 s" in done.stdout and "(DMF_LOAD_DEADLINE_S)" in done.stdout
    assert f"{DAY}  REJECTED  failed: " in done.stdout
    (load_s,) = query(settings_of(tmp_path), "select duration_s from mfds_raw.load_runs where as_of_date = ?", [DAY])[0]
    assert load_s < 6, load_s
    assert time.monotonic() - started < 120  # the load's bound, then a build of the rejected day
