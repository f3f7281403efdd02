"""`dmf build`: the dbt project, in process, against the configured warehouse.

dbt's own tests are the integrity gates. When the gate test fails, dbt skips every model that
publishes events and the on-run-end hook records the load as rejected; one more build then
brings the marts in line with that verdict (the rejected load shown as such, the previous
accepted state published), so every later step sees a consistent warehouse.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date

from pipelines.config import Settings
from pipelines.errors import DmfError

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
            return f"dbt build: an integrity gate fired; the load was recorded as rejected ({parts})"
        if not self.success:
            return f"dbt build failed: {'; '.join(self.failures[:3])}"
        return f"dbt build passed ({parts})"


def dbt_args(settings: Settings, command: str, *extra: str) -> list[str]:
    return [
        command,
        "--project-dir", str(settings.project_dir),
        "--profiles-dir", str(settings.project_dir),
        "--log-path", str(settings.state_dir / "logs"),
        "--quiet",
        *extra,
    ]


def invoke_dbt(settings: Settings, command: str, *extra: str):
    """Runs one dbt command in this process; dbt reads the warehouse path from the profile."""
    from dbt.cli.main import dbtRunner

    settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    os.environ["DMF_DUCKDB_PATH"] = str(settings.duckdb_path)
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    result = dbtRunner().invoke(dbt_args(settings, command, *extra))
    if result.exception is not None:
        raise DmfError(f"dbt could not run ({type(result.exception).__name__}: {result.exception}); see {settings.state_dir / 'logs' / 'dbt.log'}.")
    return result


def _outcome(result) -> BuildOutcome:
    counts: dict[str, int] = {}
    failures: list[str] = []
    gate_fired = False
    for node_result in result.result or []:
        status = str(node_result.status).lower().split(".")[-1]
        counts[status] = counts.get(status, 0) + 1
        if status in {"error", "fail"}:
            name = node_result.node.name
            gate_fired |= name == GATE_TEST
            failures.append(f"{name}: {(node_result.message or status).splitlines()[0]}")
    return BuildOutcome(success=bool(result.success), gate_fired=gate_fired, failures=failures, counts=counts)


def build(settings: Settings, as_of: date | None = None, *, full_refresh: bool = False) -> BuildOutcome:
    """Runs `dbt build`; after a gate rejection, builds once more so the marts reflect it."""
    extra = ("--full-refresh",) if full_refresh else ()
    outcome = _outcome(invoke_dbt(settings, "build", *extra))
    if outcome.gate_fired:
        after = _outcome(invoke_dbt(settings, "build", *extra))
        if not after.success:
            return BuildOutcome(False, True, after.failures, after.counts)
        return BuildOutcome(False, True, outcome.failures, after.counts)
    return outcome
