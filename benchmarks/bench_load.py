"""Time one full `load_day` of the 9,200-record synthetic registry served by the local simulator.

Prints wall time (imports and interpreter start excluded, registry generation excluded),
requests, records per second and peak RSS. No asserts: figures for the README and for spotting
regressions by eye.  Run:  python benchmarks/bench_load.py [--size 9200] [--faults SPEC]
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dmf_watch.core.config import load_settings
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer

KEY = "bench-key"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=9200)
    parser.add_argument("--faults", default="")
    parser.add_argument("--day", type=int, default=1)
    args = parser.parse_args()
    start_date = date(2026, 11, 29)

    t0 = time.perf_counter()
    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size, start_date=start_date)
    registry.items_for(args.day)  # build the day before timing the load
    generate_s = time.perf_counter() - t0

    with (
        tempfile.TemporaryDirectory(prefix="dmf-bench-") as tmp,
        SimulatorServer(registry, service_key=KEY, day=args.day, faults=args.faults or None) as sim,
    ):
        settings = load_settings({}).with_paths(
            duckdb_path=Path(tmp) / "dmf.duckdb", reports_dir=Path(tmp) / "reports", state_dir=Path(tmp) / "state"
        )
        settings = dataclasses.replace(settings, api_base_url=sim.base_url)
        as_of = registry.date_of(args.day)
        t1 = time.perf_counter()
        outcome = load_day(settings, as_of, service_key=KEY)
        wall_s = time.perf_counter() - t1
        db_mb = settings.duckdb_path.stat().st_size / 1e6

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"registry generation : {generate_s:.2f} s ({args.size:,} records, not part of the load)")
    print(
        f"load_day wall time  : {wall_s:.2f} s  (fetch {outcome.duration_s:.2f} s, dlt extract/normalize/load "
        f"{wall_s - outcome.duration_s:.2f} s)"
    )
    print(f"verdict             : {outcome.fetch_status} {outcome.reason or ''}".rstrip())
    print(f"records             : {outcome.distinct_count:,} distinct of {outcome.total_count} reported")
    print(f"requests / retries  : {outcome.requests} / {outcome.retries}  (server counted {sim.requests})")
    print(f"throughput          : {outcome.distinct_count / wall_s:,.0f} records/s")
    print(f"peak RSS            : {peak_mb:.0f} MB;  DuckDB file {db_mb:.1f} MB")


if __name__ == "__main__":
    main()
