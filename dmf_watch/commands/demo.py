"""`dmf demo`: the product end to end with no key and no network.

It starts the MFDS-compatible simulator on a free loopback port, runs the daily job for several
consecutive simulated days into a warehouse of its own (data/demo/), and ends with the events
compared with the simulator's ground truth and where the data and reports are.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import time
from datetime import date, timedelta

from dmf_watch.commands.command import Command, as_of_date
from dmf_watch.commands.ground_truth import compare_days, table
from dmf_watch.commands.run import run_day
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.lock import lock_path
from dmf_watch.pipelines.mfds.row_versions import raw_summary
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import DEFAULT_SERVICE_KEY, SimulatorServer

# A transient outage on the third day shows the retries at work; the load is still accepted.
DEMO_FAULTS = {3: "http503:1"}


def demo_settings(settings: Settings) -> Settings:
    """The demo never touches the production warehouse, reports, backups or AI state: it is
    always an embedded DuckDB file, whatever DMF_WAREHOUSE says."""
    demo = settings.with_paths(
        duckdb_path=settings.project_dir / "data" / "demo" / "dmf.duckdb",
        reports_dir=settings.reports_dir / "demo",
        state_dir=settings.state_dir / "demo",
    )
    return dataclasses.replace(demo, backup_dir=demo.state_dir / "backups", warehouse="duckdb", schema_prefix="")


def _clear(settings: Settings) -> None:
    """A fresh demo warehouse, reports and state; the warehouse's lock file stays (the running
    demo holds it: deleting it would let a second demo lock a new file and run alongside)."""
    keep = lock_path(settings.duckdb_path)
    warehouse_dir = settings.duckdb_path.parent
    for path in (settings.reports_dir, settings.state_dir):
        if path != warehouse_dir:
            shutil.rmtree(path, ignore_errors=True)
    if warehouse_dir.is_dir():
        for entry in warehouse_dir.iterdir():
            if entry == keep:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def run_demo(settings: Settings, *, days: int = 5, start: date | None = None, seed: int = DEFAULT_SEED) -> int:
    settings = demo_settings(settings)
    _clear(settings)
    first_day = start or today_in_seoul() - timedelta(days=days - 1)
    registry = SyntheticRegistry(seed=seed, start_date=first_day)

    outbox = settings.state_dir / "outbox"  # where the messages would have gone: no sending in a demo
    worst = 0
    with SimulatorServer(registry, service_key=DEFAULT_SERVICE_KEY, day=1) as simulator:
        settings = dataclasses.replace(settings, api_base_url=simulator.base_url)
        print(f"MFDS simulator on {simulator.base_url} (seed {seed}); {days} days from {first_day}")
        for offset in range(days):
            as_of = first_day + timedelta(days=offset)
            simulator.set_day(as_of)
            simulator.set_faults(DEMO_FAULTS.get(offset + 1))
            started = time.monotonic()
            outcome = run_day(settings, as_of, service_key=DEFAULT_SERVICE_KEY, outbox=outbox)
            print(f"{as_of}  day {offset + 1} done in {time.monotonic() - started:.1f} s (exit {outcome.exit_code})")
            worst = max(worst, outcome.exit_code)

    from dmf_watch.reports.weekly_report import render_weekly

    if not any((first_day + timedelta(days=n)).weekday() == 0 for n in range(days)):
        monday = as_of + timedelta(days=7 - as_of.weekday())  # the next weekly report, early
        print(f"{as_of}  weekly  {render_weekly(settings, monday)}")
    print()
    print("Events against the simulator's ground truth:")
    print(table(compare_days(settings, registry, first_day, days)))
    print()
    print(f"Warehouse: {settings.duckdb_path}  (tables marts.dmf_loads, marts.dmf_events, ...)")
    raw = raw_summary(settings)
    if raw:
        print(f"Raw:       {raw}")
    print(f"Reports:   {settings.reports_dir}")
    print(
        f"Messages:  {outbox}  (the mail HTML, chat text and webhook JSON each day would have sent;"
        " set DMF_NOTIFY_URLS for real delivery, see docs/delivery.md)"
    )
    return worst


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=int, default=5, help="how many consecutive days (default 5)")
    parser.add_argument(
        "--start",
        type=as_of_date,
        default=None,
        metavar="YYYY-MM-DD",
        help="first simulated day (default: so that the last day is today)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the synthetic registry")


COMMANDS = (
    Command(
        "demo",
        "simulate several days end to end on a local MFDS simulator",
        lambda args, settings: run_demo(settings, days=args.days, start=args.start, seed=args.seed),
        locks_warehouse=True,
        arguments=_demo_arguments,
        checks_damage=False,  # it starts from a warehouse of its own, cleared
        writes_reports=True,
        lock_target=demo_settings,
    ),
)
