"""Time the watchlist-matching nodes over simulated days of the 9,200-record registry.

Loads each day from the local simulator, runs the real `build`, and reads, per node, dbt's
`execution_time` and `rows_affected` from run_results.json: the matching models and the models
that read them. `--project DIR` builds with another checkout of the project (e.g. main exported
with `git archive`) to compare before and after; `--every N` prints only every N-th day (and the
last). No asserts: figures.

Run:  python benchmarks/bench_watch_matches.py [--days 5] [--size 9200] [--project DIR]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines.build import build  # noqa: E402
from pipelines.config import load_settings  # noqa: E402
from pipelines.mfds.load import load_day  # noqa: E402
from pipelines.simulator.registry import SyntheticRegistry  # noqa: E402
from pipelines.simulator.server import SimulatorServer  # noqa: E402

KEY = "bench-key"
WATCH_NODES = (
    "int_ingredient_name_keys", "int_ingredient_names_matched", "int_ingredient_watch_matches",
    "int_registrations_watched", "dmf_watchlist_unmatched",
)


def node_figures(results_path: Path) -> tuple[dict[str, tuple[float, int | None]], float]:
    """(seconds, rows affected) per watch node of the last dbt run, and the run's total seconds."""
    results = json.loads(results_path.read_text(encoding="utf-8"))
    figures: dict[str, tuple[float, int | None]] = {}
    for result in results["results"]:
        name = result["unique_id"].split(".")[2]
        if result["unique_id"].startswith("model.") and name in WATCH_NODES:
            figures[name] = (float(result["execution_time"]), result["adapter_response"].get("rows_affected"))
    return figures, float(results["elapsed_time"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--size", type=int, default=9200)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--project", type=Path, default=None, help="project dir to build with (default: this checkout)")
    args = parser.parse_args()

    registry = SyntheticRegistry(seed=20261129, size=args.size)
    with tempfile.TemporaryDirectory(prefix="dmf-bench-watch-") as tmp, \
            SimulatorServer(registry, service_key=KEY) as sim:
        settings = load_settings({}).with_paths(
            duckdb_path=Path(tmp) / "dmf.duckdb", reports_dir=Path(tmp) / "reports", state_dir=Path(tmp) / "state"
        )
        settings = dataclasses.replace(settings, api_base_url=sim.base_url)
        if args.project:
            settings = dataclasses.replace(settings, project_dir=args.project.resolve())
        print(f"{'day':>4} {'build s':>8} {'dbt s':>7}  " + "  ".join(f"{n} s (rows)" for n in WATCH_NODES))
        for day in range(1, args.days + 1):
            sim.set_day(day)
            load_day(settings, registry.date_of(day), service_key=KEY)
            started = time.perf_counter()
            build(settings)
            wall = time.perf_counter() - started
            if day % args.every and day != args.days:
                continue
            figures, elapsed = node_figures(settings.state_dir / "dbt" / "target" / "run_results.json")
            cells = [f"{figures[n][0]:.3f} ({figures[n][1]})" if n in figures else "-" for n in WATCH_NODES]
            print(f"{day:>4} {wall:>8.2f} {elapsed:>7.2f}  " + "  ".join(f"{c:>{len(n) + 9}}" for c, n in zip(cells, WATCH_NODES)))


if __name__ == "__main__":
    main()
