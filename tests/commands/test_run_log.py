"""dmf.log tells a morning's story on its own: one line per step of `dmf run` (the load's verdict,
the build with its counts and seconds, the report path, the notify outcome, the backup) and the
exit code cron saw, every line a single line and none holding the service key. Real `dmf run`
processes (as cron starts them) against the simulator and a webhook receiver on loopback."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from support.loopback import WebhookReceiver
from support.mfds import START_DATE
from support.scenarios import dmf_process_env
from support.secrets import file_bytes, key_leaks

pytestmark = pytest.mark.e2e  # runs dbt and whole days: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY_1, DAY_2 = START_DATE, START_DATE + timedelta(days=1)
# Every number reformatted and BIZRNO gone: withdrawn_share and identity_churn fire.
IDENTITY_BREAK = "permit_no_separator:_,null_field:BIZRNO"
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) [\w.]+ ")


def dmf_run(env: dict[str, str], day) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "run", "--as-of", day.isoformat()],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def steps(log_lines: list[str], day) -> list[str]:
    """The run's own lines of `day`, without the timestamp, level and logger."""
    return [LINE.sub("", line) for line in log_lines if f"dmf_watch.commands.run run {day}" in line]


def test_dmf_log_has_a_line_for_each_step_of_a_run_and_its_exit_code(tmp_path, start_simulator):
    server = start_simulator(day=DAY_1)
    with WebhookReceiver() as hook:
        env = dmf_process_env(tmp_path, server.base_url, DMF_NOTIFY_URLS=hook.url("u", "p", "hook"))
        first = dmf_run(env, DAY_1)
        server.set_day(DAY_2)
        server.set_faults(IDENTITY_BREAK)
        second = dmf_run(env, DAY_2)
    assert (first.returncode, second.returncode) == (0, 2), (first.stderr, second.stderr)

    path = tmp_path / "state" / "logs" / "dmf.log"
    text = path.read_text(encoding="utf-8")
    print(text)
    lines = text.splitlines()
    assert key_leaks(file_bytes(path)) == []
    assert all(LINE.match(line) for line in lines), [line for line in lines if not LINE.match(line)]

    day_1 = steps(lines, DAY_1)
    assert [line.split()[2] for line in day_1] == ["load", "build", "enrich", "report", "notify", "backup"]
    assert day_1[0].startswith(f"run {DAY_1}  load    Loaded the MFDS DMF list for {DAY_1}")
    assert re.fullmatch(
        rf"run {DAY_1}  build   dbt build passed \(\d+ models built, \d+ tests passed, 0 failed, 0 skipped; "
        r"\d+\.\d s\)",
        day_1[1],
    ), day_1[1]
    assert day_1[3] == f"run {DAY_1}  report  {tmp_path / 'reports' / f'dmf_daily_{DAY_1:%Y%m%d}.xlsx'}"
    assert day_1[4].startswith(f"run {DAY_1}  notify  ") and "delivered" in day_1[4]
    assert day_1[5].startswith(f"run {DAY_1}  backup  {tmp_path / 'state' / 'backups'}")

    day_2 = steps(lines, DAY_2)
    # a Monday: the weekly briefing and report too
    assert [line.split()[2] for line in day_2] == ["load", "build", "enrich", "enrich", "report", "REJECTED", "notify"]
    assert re.fullmatch(
        rf"run {DAY_2}  build   an integrity gate fired; the load is recorded as rejected \(\d+ models built, "
        r"\d+ tests passed, 0 failed, \d+ skipped; \d+\.\d s\)",
        day_2[1],
    ), day_2[1]
    assert "identity_churn" in day_2[5]
    assert day_2[6] == f"run {DAY_2}  notify  alerts load_rejected; 3 delivered"

    exits = [LINE.sub("", line) for line in lines if " exit " in line]
    assert exits == [f"dmf run --as-of {DAY_1} exit 0", f"dmf run --as-of {DAY_2} exit 2"]
    assert LINE.sub("", lines[-1]) == f"dmf run --as-of {DAY_2} exit 2"
