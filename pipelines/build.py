"""`dmf build`: `dbt build` on the project, against the configured warehouse.

dbt's own tests are the integrity gates. When the gate test fails, dbt skips every model that
publishes events and the on-run-end hook records the load as rejected; one more build then
brings the marts in line with that verdict (the rejected load shown as such, the previous
accepted state still published), so every later step sees a consistent warehouse.

dbt runs in a child process: it keeps its DuckDB handle open for the life of its process, and
the loader, the AI step and the report open the same file right after.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field

from pipelines.config import Settings
from pipelines.errors import DmfError
from pipelines.storage import is_write_failure_text, write_failure_message

GATE_TEST = "assert_no_integrity_gate_fired"


@dataclass(frozen=True)
class BuildOutcome:
    success: bool
    gate_fired: bool
    failures: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        parts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items()))
        if self.gate_fired:
            return f"an integrity gate fired; the load is recorded as rejected ({parts})"
        if not self.success:
            return f"dbt build failed: {'; '.join(self.failures[:3])}"
        return f"dbt build passed ({parts})"


def invoke_dbt(settings: Settings, command: str, *extra: str) -> subprocess.CompletedProcess:
    """Runs one dbt command on the project with the warehouse of `settings`."""
    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    target = settings.state_dir / "dbt" / "target"
    env = dict(os.environ, DMF_DUCKDB_PATH=str(settings.duckdb_path), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    args = [
        sys.executable, "-c", "from dbt.cli.main import cli; cli()",
        *command.split(),
        "--project-dir", str(settings.project_dir),
        "--profiles-dir", str(settings.project_dir),
        "--target-path", str(target),
        "--log-path", str(settings.state_dir / "logs"),
        *extra,
    ]
    return subprocess.run(args, cwd=settings.project_dir, env=env, capture_output=True, text=True)


def _outcome(settings: Settings, process: subprocess.CompletedProcess) -> BuildOutcome:
    results_path = settings.state_dir / "dbt" / "target" / "run_results.json"
    output = process.stdout + process.stderr
    if process.returncode != 0 and is_write_failure_text(output):
        raise DmfError(write_failure_message(settings, text=output))
    if not results_path.exists():
        last = (process.stdout + process.stderr).strip().splitlines()[-1:] or ["no output"]
        raise DmfError(f"dbt could not run: {last[0]} (see {settings.state_dir / 'logs' / 'dbt.log'}).")
    results = json.loads(results_path.read_text(encoding="utf-8"))["results"]
    counts: dict[str, int] = {}
    failures: list[str] = []
    for result in results:
        status = result["status"]
        counts[status] = counts.get(status, 0) + 1
        if status in {"error", "fail"}:
            name = result["unique_id"].split(".")[-1] if result["unique_id"].count(".") < 3 else result["unique_id"].split(".")[2]
            failures.append(f"{name}: {(result.get('message') or status).splitlines()[0]}")
    gate_fired = any(result["status"] == "fail" and f".{GATE_TEST}" in result["unique_id"] for result in results)
    return BuildOutcome(success=process.returncode == 0, gate_fired=gate_fired, failures=failures, counts=counts)


def build(settings: Settings, *, full_refresh: bool = False) -> BuildOutcome:
    """Runs `dbt build`; after a gate rejection, builds once more so the marts reflect it."""
    extra = ("--full-refresh",) if full_refresh else ()
    results_path = settings.state_dir / "dbt" / "target" / "run_results.json"
    results_path.unlink(missing_ok=True)
    outcome = _outcome(settings, invoke_dbt(settings, "build", *extra))
    if not outcome.gate_fired:
        return outcome
    results_path.unlink(missing_ok=True)
    after = _outcome(settings, invoke_dbt(settings, "build", *extra))
    return BuildOutcome(False, True, outcome.failures if after.success else after.failures, after.counts)
