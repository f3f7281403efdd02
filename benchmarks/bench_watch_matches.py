"""Time the watchlist-matching nodes over simulated days of the 9,200-record registry.

Loads each day from the local simulator, runs the real `build`, and reads, per node, dbt's
`execution_time` from run_results.json (the matching models and the models that read them), and
how many names the build matched (rows of int_ingredient_names_matched with its matched_at;
dbt-duckdb reports no rows_affected). `--project DIR` builds with another checkout of the project (e.g. main exported
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
from datetime import UTC, datetime
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dmf_watch.core.config import load_settings
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build

KEY = "bench-key"
WATCH_NODES = (
    "int_ingredient_name_keys",
    "int_ingredient_names_matched",
    "int_ingredient_watch_matches",
    "int_registrations_watched",
    "dmf_watchlist_unmatched",
)


def node_figures(results_path: Path) -> tuple[dict[str, float], float]:
    """Seconds per watch node of the last dbt run, and the run's total seconds."""
    results = json.loads(results_path.read_text(encoding="utf-8"))
    figures: dict[str, float] = {}
    for result in results["results"]:
        name = result["unique_id"].split(".")[2]
        if result["unique_id"].startswith("model.") and name in WATCH_NODES:
            figures[name] = float(result["execution_time"])
    return figures, float(results["elapsed_time"])


def names_matched_since(duckdb_path: Path, since: datetime) -> int | None:
    """Names the build started after `since` matched (None before this change: no such table)."""
    with duckdb.connect(str(duckdb_path), read_only=True) as con:
        try:
            row = con.execute(
                "select count(distinct ingredient_name_key) from intermediate.int_ingredient_names_matched "
                "where matched_at >= ?",
                [since.replace(tzinfo=None)],
            ).fetchone()
        except duckdb.Error:
            return None
    return row[0] if row else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=5)
    parser.add_argument("--size", type=int, default=9200)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--project", type=Path, default=None, help="project dir to build with (default: this checkout)")
    args = parser.parse_args()

    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size)
    with (
        tempfile.TemporaryDirectory(prefix="dmf-bench-watch-") as tmp,
        SimulatorServer(registry, service_key=KEY) as sim,
    ):
        settings = load_settings({}).with_paths(
            duckdb_path=Path(tmp) / "dmf.duckdb", reports_dir=Path(tmp) / "reports", state_dir=Path(tmp) / "state"
        )
        settings = dataclasses.replace(settings, api_base_url=sim.base_url)
        if args.project:
            settings = dataclasses.replace(settings, project_dir=args.project.resolve())
        print(
            f"{'day':>4} {'build s':>8} {'dbt s':>7} {'names matched':>13}  " + "  ".join(f"{n} s" for n in WATCH_NODES)
        )
        for day in range(1, args.days + 1):
            sim.set_day(day)
            load_day(settings, registry.date_of(day), service_key=KEY)
            since = datetime.now(UTC)
            started = time.perf_counter()
            build(settings)
            wall = time.perf_counter() - started
            if day % args.every and day != args.days:
                continue
            figures, elapsed = node_figures(settings.state_dir / "dbt" / "target" / "run_results.json")
            matched = names_matched_since(settings.duckdb_path, since)
            cells = [f"{figures[n]:.3f}" if n in figures else "-" for n in WATCH_NODES]
            print(
                f"{day:>4} {wall:>8.2f} {elapsed:>7.2f} {'-' if matched is None else matched:>13}  "
                + "  ".join(f"{c:>{len(n) + 2}}" for c, n in zip(cells, WATCH_NODES))
            )


if __name__ == "__main__":
    main()
