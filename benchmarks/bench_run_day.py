"""Time `dmf run` of the next day (AI off) on a warehouse of many days, step by step.

Why: issue 9's target for the morning job is `dmf run` of a day in 8 s or less at day 365, AI
off (no `agy` on the PATH). Loading 365 days takes most of an hour, so this reuses a warehouse
that `bench_history.py --keep DIR` left: it copies DIR's warehouse and state into a temp dir,
serves the next day of the same simulated registry from the MFDS simulator on loopback, and
runs the real `run_day` (load over HTTP, the morning build, the AI step without agy, the
reports, delivery as configured: none) for the next few days, one after another on that copy:
the first day also pays anything a newer checkout builds once (a new incremental model), the
next ones are the steady state. Prints the wall time of each step and of each run, and the load
average (every figure scales with it on a shared machine). No asserts: figures.

Run:  python benchmarks/bench_history.py --days 365 --keep DIR
      python benchmarks/bench_run_day.py DIR [--size 9200] [--days 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from dmf.run import run_day
from settings.config import load_settings
from simulator.registry import DEFAULT_SEED, SyntheticRegistry
from simulator.server import SimulatorServer

KEY = "bench-key"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("kept", type=Path, help="the --keep dir of bench_history.py")
    parser.add_argument("--size", type=int, default=9200, help="records a day (as bench_history.py was run)")
    parser.add_argument("--days", type=int, default=3, help="days run one after another on one copy")
    args = parser.parse_args()
    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size)
    with duckdb.connect(str(args.kept / "dmf.duckdb"), read_only=True) as con:
        ((latest, loads),) = con.execute("select max(as_of_date), count(*) from mfds_raw.load_runs").fetchall()
    first = registry.day_of(latest) + 1
    print(f"warehouse of {loads} loads up to {latest} (day {first - 1}); running days {first}..{first + args.days - 1}")
    totals = []
    with tempfile.TemporaryDirectory(prefix="dmf-bench-run-") as tmp, SimulatorServer(registry, service_key=KEY) as sim:
        root = Path(tmp)
        shutil.copy(args.kept / "dmf.duckdb", root / "dmf.duckdb")
        shutil.copytree(args.kept / "state", root / "state")
        settings = load_settings({}).with_paths(
            duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
        )
        # AI off: a configured agy path that is not a file means no agy (no PATH search)
        settings = dataclasses.replace(settings, api_base_url=sim.base_url, agy_binary=str(root / "no-agy"))
        for day in range(first, first + args.days):
            sim.set_day(day)
            load_before = os.getloadavg()[0]
            steps: list[tuple[str, float]] = []
            started = time.perf_counter()

            def echo(line: str, steps=steps, started=started) -> None:
                words = line.split()
                steps.append((words[1] if len(words) > 1 else line, time.perf_counter() - started))

            outcome = run_day(settings, registry.date_of(day), service_key=KEY, echo=echo)
            total = time.perf_counter() - started
            totals.append(total)
            marks, previous = [], 0.0
            for name, at in steps:
                marks.append(f"{name} {at - previous:.1f}")
                previous = at
            print(
                f"day {day}: dmf run {total:.1f} s, exit {outcome.exit_code} ({outcome.verdict}); "
                f"steps (s): {', '.join(marks)}; load average {load_before:.1f}",
                flush=True,
            )
        size = (root / "dmf.duckdb").stat().st_size / 2**20
    print(f"warehouse after day {first + args.days - 1}: {size:.0f} MiB")
    print(
        f"dmf run: first day {totals[0]:.1f} s (with any one-off catch-up), then {', '.join(f'{t:.1f}' for t in totals[1:])} s"
    )


if __name__ == "__main__":
    main()
