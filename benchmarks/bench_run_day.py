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

`--warehouse postgres` runs the same on a copy of the PostgreSQL warehouse that
`bench_history.py --warehouse postgres --keep DIR` left (its `bench_` schemas in the database
PGDATABASE names), made with `create database ... template ...` and dropped at the end: the kept
warehouse is never changed. `--catch-up K` is a warehouse that missed K mornings: it loads the
next K days (untimed), then times one morning build of them all in a new process, beside K times
the morning build of the first of them alone (measured the same way on another copy).

Run:  python benchmarks/bench_history.py --days 365 --keep DIR [--warehouse postgres]
      python benchmarks/bench_run_day.py DIR [--size 9200] [--days 3] [--warehouse postgres]
      python benchmarks/bench_run_day.py DIR --catch-up 5 [--warehouse postgres]
"""

from __future__ import annotations

import argparse
import contextlib
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
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer

KEY = "bench-key"
MORNING = "--one-morning"  # argv of the child process that runs a day
BUILD = "--one-build"  # argv of the child process that builds the loads stored
PG_PREFIX = "bench"  # bench_history.py's schemas on PostgreSQL


def settings_in(root: Path, base_url: str):
    """The copy's settings, AI off (a configured agy path that is not a file means no agy: no
    PATH search); on PostgreSQL (DMF_WAREHOUSE) in bench_history.py's schemas."""
    from dmf_watch.core.config import load_settings

    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    if os.environ.get("DMF_WAREHOUSE") == "postgres":  # load_settings({}) reads no environment
        settings = dataclasses.replace(settings, warehouse="postgres", schema_prefix=PG_PREFIX)
    return dataclasses.replace(settings, api_base_url=base_url, agy_binary=str(root / "no-agy"))


def one_morning(root: Path, base_url: str, as_of: date) -> None:
    """One morning, in the child process: prints when each step ended (epoch seconds, so that the
    parent can tell the interpreter's start-up from the steps) as one JSON line."""
    from dmf_watch.commands.run import run_day

    imported = time.time()
    settings = settings_in(root, base_url)
    steps: list[tuple[str, float]] = []

    def echo(line: str) -> None:
        words = line.split()
        steps.append((words[1] if len(words) > 1 else line, time.time()))

    outcome = run_day(settings, as_of, service_key=KEY, echo=echo)
    print(
        json.dumps({"imported": imported, "steps": steps, "exit_code": outcome.exit_code, "verdict": outcome.verdict})
    )


def one_build(root: Path, base_url: str) -> None:
    """In the child process: the morning build (data tests on the new loads, as `dmf run`) of
    every load stored and not built yet; prints its wall time as one JSON line."""
    from dmf_watch.transform.build import build

    settings = settings_in(root, base_url)
    started = time.time()
    built = build(settings, new_loads_only=True)
    print(json.dumps({"build_s": time.time() - started, "success": built.success}))


class PostgresCopy:
    """A database copied from the one PGDATABASE names (bench_history.py's warehouse), by template."""

    def __init__(self, label: str) -> None:
        self.source = os.environ.get("PGDATABASE", "dmf")
        self.name = f"{self.source}_bench_{label}_{os.getpid()}"

    @staticmethod
    def _admin(sql: str) -> None:
        import psycopg2

        con = psycopg2.connect("", dbname="postgres")
        try:
            con.autocommit = True
            con.cursor().execute(sql)
        finally:
            con.close()

    def __enter__(self) -> str:
        self._admin(f'create database "{self.name}" template "{self.source}"')
        return self.name

    def __exit__(self, *exc: object) -> None:
        self._admin(f'drop database if exists "{self.name}"')


def kept_loads(kept: Path, warehouse: str) -> tuple[date, int]:
    """The newest as-of date and the number of loads of the kept warehouse."""
    sql = "select max(as_of_date), count(*) from {}mfds_raw.load_runs"
    if warehouse == "postgres":
        import psycopg2

        con = psycopg2.connect("")
        try:
            cur = con.cursor()
            cur.execute(sql.format(PG_PREFIX + "_"))
            return cur.fetchone()
        finally:
            con.close()
    with duckdb.connect(str(kept / "dmf.duckdb"), read_only=True) as con:
        return con.execute(sql.format("")).fetchall()[0]


@contextlib.contextmanager
def copied(kept: Path, warehouse: str, label: str):
    """A copy of the kept warehouse and state: (its root, the environment of a child on it)."""
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dmf-bench-run-")))
        env = dict(os.environ, DMF_WAREHOUSE=warehouse)
        if warehouse == "postgres":
            env["PGDATABASE"] = stack.enter_context(PostgresCopy(label))
        else:
            shutil.copy(kept / "dmf.duckdb", root / "dmf.duckdb")
        shutil.copytree(kept / "state", root / "state")
        yield root, env


def child(env: dict[str, str], *argv: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True, check=False, env=env)
    if done.returncode not in (0, 1):
        sys.exit(f"{argv[0]}: the child failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def catch_up(args: argparse.Namespace, registry: SyntheticRegistry, sim: SimulatorServer, first: int) -> None:
    """K loads stored, then one build; against one load's build on another copy."""
    from dmf_watch.pipelines.mfds.load import load_day

    builds = {}
    for loads in sorted({1, args.catch_up}):
        with copied(args.kept, args.warehouse, f"k{loads}") as (root, env):
            # the loads, in this process, on the copy (patch.dict puts the environment back after)
            with mock.patch.dict(
                os.environ, {name: env[name] for name in ("DMF_WAREHOUSE", "PGDATABASE") if name in env}
            ):
                settings = settings_in(root, sim.base_url)
                for day in range(first, first + loads):
                    sim.set_day(day)
                    load_day(settings, registry.date_of(day), service_key=KEY)
            load_before = os.getloadavg()[0]
            report = child(env, BUILD, str(root), sim.base_url)
            builds[loads] = report["build_s"]
            print(
                f"catch-up of {loads} load(s): one build {report['build_s']:.1f} s "
                f"({'passed' if report['success'] else 'FAILED'}); load average {load_before:.1f}",
                flush=True,
            )
    k = args.catch_up
    print(
        f"catch-up K={k}: {builds[k]:.1f} s against K x one load's build {k * builds[1]:.1f} s ({builds[k] / (k * builds[1]):.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("kept", type=Path, help="the --keep dir of bench_history.py")
    parser.add_argument("--size", type=int, default=9200, help="records a day (as bench_history.py was run)")
    parser.add_argument("--days", type=int, default=3, help="days run one after another on one copy")
    parser.add_argument("--warehouse", choices=("duckdb", "postgres"), default="duckdb")
    parser.add_argument("--catch-up", type=int, default=0, metavar="K", help="K loads stored, then one build")
    args = parser.parse_args()
    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size)
    latest, loads = kept_loads(args.kept, args.warehouse)
    first = registry.day_of(latest) + 1
    print(f"{args.warehouse} warehouse of {loads} loads up to {latest} (day {first - 1})")
    with SimulatorServer(registry, service_key=KEY) as sim:
        if args.catch_up:
            catch_up(args, registry, sim, first)
        else:
            mornings(args, registry, sim, first)


def mornings(args: argparse.Namespace, registry: SyntheticRegistry, sim: SimulatorServer, first: int) -> None:
    print(f"running days {first}..{first + args.days - 1} one after another")
    totals = []
    with copied(args.kept, args.warehouse, "mornings") as (root, env):
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
                env=env,
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
        if args.warehouse == "duckdb":
            print(
                f"warehouse after day {first + args.days - 1}: {(root / 'dmf.duckdb').stat().st_size / 2**20:.0f} MiB"
            )
    print(
        f"dmf run: first day {totals[0]:.1f} s (with any one-off catch-up), then {', '.join(f'{t:.1f}' for t in totals[1:])} s"
    )
    if len(totals) > 1:
        steady = totals[1:]
        print(
            f"steady mornings: min {min(steady):.1f} s, median {sorted(steady)[len(steady) // 2]:.1f} s, max {max(steady):.1f} s, max/min {max(steady) / min(steady):.2f}"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == [MORNING]:
        one_morning(Path(sys.argv[2]), sys.argv[3], date.fromisoformat(sys.argv[4]))
    elif sys.argv[1:2] == [BUILD]:
        one_build(Path(sys.argv[2]), sys.argv[3])
    else:
        main()
