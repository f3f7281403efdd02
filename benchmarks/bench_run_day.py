"""Time `dmf run` of the next day (AI off) on a warehouse of many days, step by step.

Why: issue 9's target for the morning job is `dmf run` of a day in 8 s or less at day 365, AI
off (no `agy` on the PATH). Loading 365 days takes most of an hour, so this reuses a warehouse
that `bench_history.py --keep DIR` left: it copies DIR's warehouse and state into a temp dir,
serves the next day of the same simulated registry from the MFDS simulator on loopback, and
runs the real `run_day` (load over HTTP, the morning build, the AI step without agy, the
reports, delivery as configured: none) for the next few days, one after another on that copy:
the first day also pays anything a newer checkout builds once (a new incremental model), the
next ones are the steady state. Each day runs in a new Python process, as cron starts `dmf run`:
its time includes importing dbt and loading the manifest (the simulator's dates lie in the
future, which the CLI refuses for a live load, so the child calls `run_day` itself). Prints the
wall time of each step and of each run, the simulator's CPU time (it shares the machine with
the run), and the load average (every figure scales with it on a shared machine). The step
`load` is the load alone; dbt's start-up (importing dbt, parsing the project) is in `build`.
No asserts: figures.

Run:  python benchmarks/bench_history.py --days 365 --keep DIR
      python benchmarks/bench_run_day.py DIR [--size 9200] [--days 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer

KEY = "bench-key"
MORNING = "--one-morning"  # argv of the child process that runs a day


def one_morning(root: Path, base_url: str, as_of: date) -> None:
    """One morning, in the child process: prints when each step ended (epoch seconds, so that the
    parent can tell the interpreter's start-up from the steps) as one JSON line."""
    from dmf_watch.commands.run import run_day
    from dmf_watch.core.config import load_settings

    imported = time.time()
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    # AI off: a configured agy path that is not a file means no agy (no PATH search)
    settings = dataclasses.replace(settings, api_base_url=base_url, agy_binary=str(root / "no-agy"))
    steps: list[tuple[str, float]] = []

    def echo(line: str) -> None:
        words = line.split()
        steps.append((words[1] if len(words) > 1 else line, time.time()))

    outcome = run_day(settings, as_of, service_key=KEY, echo=echo)
    print(
        json.dumps({"imported": imported, "steps": steps, "exit_code": outcome.exit_code, "verdict": outcome.verdict})
    )


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
        for day in range(first, first + args.days):
            sim.set_day(day)
            load_before = os.getloadavg()[0]
            served_before = time.process_time()  # this process only serves the simulator meanwhile
            started = time.time()
            child = subprocess.run(
                [sys.executable, __file__, MORNING, str(root), sim.base_url, registry.date_of(day).isoformat()],
                capture_output=True,
                text=True,
                check=False,
            )
            total = time.time() - started
            served = time.process_time() - served_before
            if child.returncode not in (0, 1):
                sys.exit(f"day {day}: the run failed (exit {child.returncode}): {child.stderr[-2000:]}")
            report = json.loads(child.stdout.splitlines()[-1])
            totals.append(total)
            # start-up: the interpreter and its imports (dbt's among them); exit: what follows the report
            marks, previous = [f"start-up {report['imported'] - started:.1f}"], report["imported"]
            for name, at in report["steps"]:
                marks.append(f"{name} {at - previous:.1f}")
                previous = at
            marks.append(f"exit {started + total - previous:.1f}")
            print(
                f"day {day}: dmf run {total:.1f} s, exit {report['exit_code']} ({report['verdict']}); "
                f"steps (s): {', '.join(marks)}; simulator CPU {served:.1f} s; load average {load_before:.1f}",
                flush=True,
            )
        size = (root / "dmf.duckdb").stat().st_size / 2**20
    print(f"warehouse after day {first + args.days - 1}: {size:.0f} MiB")
    print(
        f"dmf run: first day {totals[0]:.1f} s (with any one-off catch-up), then {', '.join(f'{t:.1f}' for t in totals[1:])} s"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == [MORNING]:
        one_morning(Path(sys.argv[2]), sys.argv[3], date.fromisoformat(sys.argv[4]))
    else:
        main()
