"""The incremental = full refresh proof as a soak: many simulated days, one verdict.

Why: tests/models/test_incremental_equals_full_refresh.py proves that the identity chain and
the events built day by day equal a `dbt build --full-refresh` of the same warehouse over the
fewest days that hold every kind of day it is about (12). A key that goes wrong only after weeks
(a renumbering long after a return, a history that outgrows a window) needs more days than a test
should spend; this runs the same scenario over `--days` days (60 by default, about half an hour
here) and prints, per compared mart, its rows and the rows only one side has, then the verdict.

The days: the simulator's evolving registry (seed 9, 300 records) through the real daily job
(HTTP loader on loopback, the morning build, AI off), scripted identity cases on day 3
(registrations back after 2 and 6 days, a renumbering with a manufacturer edit), day 6's list
without a single manufacturer (a gate rejects it), day 11 skipped and imported at the end with
`dmf backfill --insert-before-published`.

Run:  python benchmarks/soak_incremental.py [--days 60]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from dmf_watch.commands.backfill import backfill
from dmf_watch.commands.run import run_day
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.evolution import IdentityCases
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.replay import ReplaySource, write_replay
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build

KEY = "soak-key"
START = date(2026, 10, 1)
COMPARED = ("dmf_events", "dmf_event_field_changes", "dmf_signals", "dmf_registrations", "dmf_registration_history")
BUILD_TIMESTAMPS = {"built_at", "matched_at", "published_at"}


def settings_in(root: Path) -> Settings:
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    return dataclasses.replace(settings, agy_binary=str(root / "no-agy"))  # AI off


def differences(incremental: Path, full: Path) -> dict[str, tuple[int, int, int]]:
    """mart -> (rows, rows only in the incremental build, rows only in the full refresh)."""
    found = {}
    with duckdb.connect(str(incremental), read_only=True) as con:
        con.execute(f"attach '{full}' as full_refresh (read_only)")
        for table in COMPARED:
            names = con.execute(
                "select column_name from information_schema.columns where table_catalog = 'dmf' "
                "and table_schema = 'marts' and table_name = ? order by ordinal_position",
                [table],
            ).fetchall()
            columns = ", ".join(f'"{name}"' for (name,) in names if name not in BUILD_TIMESTAMPS)
            only = [
                con.execute(
                    f"select count(*) from (select {columns} from {a}.marts.{table} "
                    f"except all select {columns} from {b}.marts.{table})"
                ).fetchall()[0][0]
                for a, b in (("dmf", "full_refresh"), ("full_refresh", "dmf"))
            ]
            rows = con.execute(f"select count(*) from marts.{table}").fetchall()[0][0]
            found[table] = (rows, only[0], only[1])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=60, help="simulated days (at least 12)")
    args = parser.parse_args()
    if args.days < 12:
        parser.error("--days must be at least 12 (day 11 is the skipped day, imported before day 12)")
    dates = [START + timedelta(days=n) for n in range(args.days)]
    rejected, skipped = dates[5], dates[10]
    registry = SyntheticRegistry(seed=9, size=300, start_date=START, cases=IdentityCases(day=3, returns_after=(2, 6)))
    days = {as_of: registry.items_for(n + 1) for n, as_of in enumerate(dates)}
    days[rejected] = [{**item, "MNFCTR_NAME": None} for item in days[rejected]]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dmf-soak-") as tmp:
        root = Path(tmp)
        live = {as_of: items for as_of, items in days.items() if as_of != skipped}
        write_replay(root / "live", live)
        write_replay(root / "skipped", {skipped: days[skipped]})
        settings = settings_in(root / "incremental")
        exits = []
        with SimulatorServer(ReplaySource(root / "live"), service_key=KEY) as simulator:
            settings = dataclasses.replace(settings, api_base_url=simulator.base_url)
            for as_of in live:
                simulator.set_day(as_of)
                exits.append(run_day(settings, as_of, service_key=KEY, echo=lambda line: None).exit_code)
        backfill(settings, root / "skipped", insert_before_published=True, echo=lambda line: None, progress=False)
        day_by_day = time.monotonic() - started
        full = settings_in(root / "full")
        full.duckdb_path.parent.mkdir(parents=True)
        shutil.copy(settings.duckdb_path, full.duckdb_path)
        refreshed = build(full, full_refresh=True).success
        found = differences(settings.duckdb_path, full.duckdb_path)
    expected = [2 if as_of == rejected else 0 for as_of in live]
    print(f"{args.days} days ({len(live)} live, 1 imported late) built day by day in {day_by_day:.0f} s")
    for table, (rows, incremental_only, full_only) in found.items():
        print(f"{table}: {rows} rows, {incremental_only} only incremental, {full_only} only full refresh")
    equal = all(rows > 0 and a == 0 and b == 0 for rows, a, b in found.values())
    sound = exits == expected and refreshed
    print(
        "verdict: "
        + ("equal" if equal and sound else "DIFFERENT" if sound else "the scenario did not run as designed")
        + ("" if sound else f" (exits {exits} against {expected}; full refresh {'passed' if refreshed else 'failed'})")
    )
    return 0 if equal and sound else 1


if __name__ == "__main__":
    sys.exit(main())
