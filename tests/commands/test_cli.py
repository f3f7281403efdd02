"""The `dmf` command as cron and people meet it: exit codes and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_agy.support import FAKE_AGY

# `dmf` runs as a child process, as cron runs it: the integration tier.
pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parents[2]


def dmf(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_", "FAKE_AGY"))}
    base.update(
        DMF_DUCKDB_PATH=str(tmp_path / "dmf.duckdb"),
        DMF_STATE_DIR=str(tmp_path / "state"),
        DMF_REPORTS_DIR=str(tmp_path / "reports"),
        HOME=str(tmp_path / "home"),
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_bad_date_is_one_line_and_exit_1_not_the_gate_code(tmp_path):
    result = dmf(tmp_path, "run", "--as-of", "2026-13-01")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and "YYYY-MM-DD" in result.stderr


def test_a_missing_service_key_is_one_line_without_traceback(tmp_path):
    result = dmf(tmp_path, "load", "--as-of", "2026-11-20")
    assert result.returncode == 1
    assert result.stderr.startswith("dmf: No MFDS service key is configured")
    assert "Traceback" not in result.stderr and result.stderr.strip().count("\n") == 0


def test_doctor_fix_installs_the_deny_block_and_workspace(tmp_path):
    before = dmf(tmp_path, "doctor", DMF_AGY_BINARY=str(FAKE_AGY), FAKE_AGY_MODELS="gemini-3.7-flash-medium")
    assert before.returncode == 1 and "BAD  agy_permissions" in before.stdout

    after = dmf(tmp_path, "doctor", "--fix", DMF_AGY_BINARY=str(FAKE_AGY), FAKE_AGY_MODELS="gemini-3.7-flash-medium")

    ai_lines = [line for line in after.stdout.splitlines() if " agy_" in line or " ai_" in line]
    assert ai_lines and not [line for line in ai_lines if line.startswith("BAD")], after.stdout
    assert (tmp_path / "state" / "agy_workspace" / "AGENTS.md").is_file()
