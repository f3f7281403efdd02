"""`dmf doctor --fix` closes the AI circuit that a missing agy opened, once a person has
installed agy and it runs; a circuit opened by the service (quota) keeps its cool-down.

Real parts: enrich_day on a contract-shaped warehouse, the circuit's state file, the `dmf`
command in a child process; the only fake is agy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from dmf_watch.enrich.daily_briefing import enrich_day
from fake_agy.support import FAKE_AGY, Marts, fake_calls, fake_env, make_settings, sample_events

# doctor runs the fake agy as a child process: the integration tier.
pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parents[2]
DAYS = [date(2026, 10, d) for d in (5, 6, 7, 8)]


def dmf_doctor_fix(tmp_path: Path, binary: Path, log: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_", "FAKE_AGY"))}
    env.update(
        DMF_DUCKDB_PATH=str(tmp_path / "dmf.duckdb"),
        DMF_STATE_DIR=str(tmp_path / "state"),
        DMF_REPORTS_DIR=str(tmp_path / "reports"),
        HOME=str(tmp_path / "home"),
        DMF_AGY_BINARY=str(binary),
        FAKE_AGY_LOG=str(log),
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", "doctor", "--fix"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def circuit(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "state" / "agy_circuit.json").read_text(encoding="utf-8"))


def fix_line(result: subprocess.CompletedProcess) -> str:
    return next(line for line in result.stdout.splitlines() if line.startswith("fix  circuit: "))


def test_doctor_fix_resets_the_circuit_a_missing_agy_opened_once_agy_is_installed(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    binary = tmp_path / "home" / ".local" / "bin" / "agy"
    settings = make_settings(tmp_path, binary=binary)
    marts = Marts(settings.duckdb_path)
    for day in DAYS:
        marts.add_day(day, sample_events(day, 3))
    reasons = [enrich_day(settings, day).skip_reason for day in DAYS[:3]]
    assert reasons == ["binary_missing"] * 3
    assert (circuit(tmp_path)["state"], circuit(tmp_path)["last_error_kind"]) == ("OPEN", "launch_failed")

    still_missing = dmf_doctor_fix(tmp_path, binary, log)
    print(fix_line(still_missing))
    assert (
        fix_line(still_missing)
        == "fix  circuit: AI circuit OPEN after launch_failed: left as is, agy was not found yet."
    )
    assert circuit(tmp_path)["state"] == "OPEN"

    binary.parent.mkdir(parents=True)
    shutil.copy(FAKE_AGY, binary)  # a person installs agy
    fixed = dmf_doctor_fix(tmp_path, binary, log)
    print(fix_line(fixed))
    assert (
        fix_line(fixed) == f"fix  circuit: AI circuit reset (was OPEN after launch_failed): agy at {binary} now runs."
    )
    assert circuit(tmp_path)["state"] == "CLOSED"
    assert "ok   agy_circuit: circuit closed." in fixed.stdout

    calls_before = len(fake_calls(log))
    outcome = enrich_day(settings, DAYS[3])
    assert outcome.status == "OK", outcome
    assert len(fake_calls(log)) == calls_before + 1

    again = dmf_doctor_fix(tmp_path, binary, log)
    assert fix_line(again) == "fix  circuit: AI circuit closed; nothing to reset."


def test_doctor_fix_leaves_a_circuit_the_quota_opened_to_its_cool_down(tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path)
    make_settings(tmp_path)
    opened = {"state": "OPEN", "failures": 1, "opened_at": datetime.now(UTC).isoformat(), "last_error_kind": "quota"}
    (tmp_path / "state" / "agy_circuit.json").write_text(json.dumps(opened), encoding="utf-8")

    result = dmf_doctor_fix(tmp_path, FAKE_AGY, log)

    assert fix_line(result).startswith("fix  circuit: AI circuit OPEN after quota: left as is")
    assert circuit(tmp_path)["state"] == "OPEN"
