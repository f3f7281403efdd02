"""Time the gate-related dbt nodes over a few simulated days of the 9,200-record registry.

Loads each day from the local simulator, runs the real `build`, and reads each node's
`execution_time` from dbt's run_results.json: the nodes that compute and enforce the integrity
signals (load metrics, signals, the gate test) and those this issue added (the usable-load base
model, the decisions). `--project DIR` builds with another checkout of the project (e.g. an
older commit exported with `git archive`) to compare before and after. No asserts: figures.

Run:  python benchmarks/bench_gates.py [--days 4] [--size 9200] [--project DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dmf_watch.core.config import load_settings
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build

KEY = "bench-key"
GATE_NODES = (
    "int_load_metrics",
    "int_load_signals",
    "int_load_event_context",
    "int_loads_sequenced",
    "int_loads_accepted",
    "int_load_decisions",
    "stg_mfds__load_runs",
    "base_mfds__load_runs",
    "stg_mfds__load_decisions",
    "assert_no_integrity_gate_fired",
)


def node_times(results_path: Path) -> dict[str, float]:
    """Seconds per gate-related node of the last dbt run (the first build of a day)."""
    times: dict[str, float] = {}
    for result in json.loads(results_path.read_text(encoding="utf-8"))["results"]:
        name = result["unique_id"].split(".")[2]
        if name in GATE_NODES:
            times[name] = times.get(name, 0.0) + float(result["execution_time"])
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=4)
    parser.add_argument("--size", type=int, default=9200)
    parser.add_argument("--project", type=Path, default=None, help="project dir to build with (default: this checkout)")
    args = parser.parse_args()

    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size)
    per_day: list[dict[str, float]] = []
    with (
        tempfile.TemporaryDirectory(prefix="dmf-bench-gates-") as tmp,
        SimulatorServer(registry, service_key=KEY) as sim,
    ):
        settings = load_settings({}).with_paths(
            duckdb_path=Path(tmp) / "dmf.duckdb", reports_dir=Path(tmp) / "reports", state_dir=Path(tmp) / "state"
        )
        settings = dataclasses.replace(settings, api_base_url=sim.base_url)
        if args.project:
            settings = dataclasses.replace(settings, project_dir=args.project.resolve())
        for day in range(1, args.days + 1):
            sim.set_day(day)
            load_day(settings, registry.date_of(day), service_key=KEY)
            outcome = build(settings)
            times = node_times(settings.state_dir / "dbt" / "target" / "run_results.json")
            per_day.append(times)
            print(f"day {day}: {outcome.summary()[:60]:<60} gate nodes {sum(times.values()):.3f} s")

    names = sorted({name for times in per_day for name in times})
    print(f"\n{'node':<34}" + "".join(f"{'day ' + str(d):>9}" for d in range(1, args.days + 1)))
    for name in names:
        print(f"{name:<34}" + "".join(f"{times.get(name, 0.0):>9.3f}" for times in per_day))
    print(f"{'total (s)':<34}" + "".join(f"{sum(times.values()):>9.3f}" for times in per_day))


if __name__ == "__main__":
    main()
