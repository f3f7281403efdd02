"""Time `dmf backfill` of N generated daily dumps (default 30 days of the 9,200-record registry).

Writes the days of the synthetic registry as JSON Lines dumps (the replay format) into a temp
dir, then runs the real backfill: every dump read and checked, imported through the live dlt
writer, then one build that judges each day. Prints the import time per day, the build time,
the total and the warehouse size against issue 9's target (365 days in 15 minutes); for fewer
days, the 365-day figure extrapolated linearly (the import is linear in the days; the one
build computes every new load once, so it grows with them too). The load average is printed:
on a shared machine every figure is inflated by it.
`--warehouse postgres` runs the same into the PostgreSQL server the libpq variables name, in
schemas prefixed `backfill_` (dropped first and at the end; the size printed is the sum
of pg_total_relation_size of its tables).
No asserts: figures for the README and the issue.
Run:  python benchmarks/bench_backfill.py [--days 30] [--warehouse duckdb|postgres]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dmf_watch.commands.backfill import backfill
from dmf_watch.core import warehouse
from dmf_watch.core.config import load_settings
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.replay import write_replay

TARGET_365_DAYS_S = {
    "duckdb": 15 * 60,  # issue 9: a year of daily dumps imports and builds in under 15 minutes
    "postgres": 30 * 60,  # issue 40: the team warehouse in under 30
}
PG_PREFIX = "backfill"  # not bench_: bench_history.py drops the schemas of that prefix


def drop_pg_schemas(settings) -> None:
    with warehouse.connect(settings) as con:
        for (name,) in con.execute(
            "select schema_name from information_schema.schemata where schema_name like ?", [PG_PREFIX + "\\_%"]
        ).fetchall():
            con.execute(f'drop schema "{name}" cascade')


def pg_size_mib(settings) -> float:
    with warehouse.connect(settings, read_only=True) as con:
        return (
            con.execute(
                "select coalesce(sum(pg_total_relation_size(quote_ident(table_schema) || '.' || quote_ident(table_name))), 0) "
                "from information_schema.tables where table_schema like ? and table_type = 'BASE TABLE'",
                [PG_PREFIX + "\\_%"],
            ).fetchone()[0]
            / 2**20
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--size", type=int, default=9200)
    parser.add_argument("--warehouse", choices=("duckdb", "postgres"), default="duckdb")
    args = parser.parse_args()
    start = date(2025, 6, 1)

    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size, start_date=start)
    days = {start + timedelta(days=n): registry.items_for(n + 1) for n in range(args.days)}
    generate_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory(prefix="dmf-bench-backfill-") as tmp:
        root = Path(tmp)
        write_replay(root / "dumps", days)
        dump_mib = sum(p.stat().st_size for p in (root / "dumps").iterdir()) / 2**20
        settings = load_settings({}).with_paths(
            duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
        )
        settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
        on_server = args.warehouse == "postgres"
        if on_server:
            settings = dataclasses.replace(settings, warehouse="postgres", schema_prefix=PG_PREFIX)
            drop_pg_schemas(settings)
        marks: dict[str, float] = {}

        def echo(line: str) -> None:
            if "building" in line:
                marks["imported"] = time.perf_counter()
            print(f"  {line}", flush=True)

        t1 = time.perf_counter()
        code = backfill(settings, root / "dumps", echo=echo, progress=False)
        total_s = time.perf_counter() - t1
        import_s = marks.get("imported", t1 + total_s) - t1
        build_s = total_s - import_s
        size_mib = pg_size_mib(settings) if on_server else settings.duckdb_path.stat().st_size / 2**20
        if on_server:
            drop_pg_schemas(settings)

    per_day = import_s / args.days
    print(
        f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores "
        "(figures scale with it: read the ratios on a busy machine)"
    )
    target_s = TARGET_365_DAYS_S[args.warehouse]
    print(
        f"{args.warehouse}; generated {args.days} days x ~{args.size:,} records in {generate_s:.1f} s ({dump_mib:.0f} MiB of dumps)"
    )
    print(
        f"backfill exit {code}: import {import_s:.1f} s ({per_day:.2f} s/day, checks included), "
        f"build {build_s:.1f} s, total {total_s:.1f} s; warehouse {size_mib:.0f} MiB"
    )
    if args.days >= 365:
        verdict = "met" if total_s < target_s else "not met"
        print(f"{args.days} days: {total_s / 60:.1f} min; target {target_s / 60:.0f} min for 365 days: {verdict}")
    else:
        scale = 365 / args.days
        print(
            f"365 days, extrapolated linearly: import {per_day * 365 / 60:.1f} min + build "
            f"{build_s * scale / 60:.1f} min = {total_s * scale / 60:.1f} min; target {target_s / 60:.0f} min"
        )


if __name__ == "__main__":
    main()
