"""Cost of a day's build as history grows: N simulated days through the real loader and dbt.

Why: DMF Watch runs every morning for years, so a day's `dbt build` and the warehouse must not
grow with the number of days already loaded (issue 9). This loads N days of the 9,200-record
simulated registry from the MFDS simulator on loopback with the real loader (`load_day`, HTTP,
dlt) and, at each checkpoint day, times the morning build (`build(new_loads_only=True)`, as
`dmf run` builds; the day before a checkpoint is built first, untimed, so that the checkpoint's
build is the work of one new day as in production).

Per checkpoint it prints the build's wall time, the warehouse file size, and the rows the build
wrote (dbt-duckdb reports no rows_affected for models, so: every row of each table model it
rebuilt, the rows each incremental model gained, the seeds' rows) and the three nodes that took
longest (run_results.json, so a slow morning names its model), and with `--nodes` the time of each
model named (a before/after of a few models); then the biggest tables at the last
checkpoint (sizes estimated from DuckDB's storage_info: segment offsets in its 256 KiB blocks);
last line: the last checkpoint's build time over day 2's. `--warehouse postgres` runs the same on
the PostgreSQL server the libpq variables name, in schemas prefixed `bench_` (dropped first;
sizes are pg_total_relation_size). `--project DIR` runs the loader and
dbt of another checkout (e.g. `git archive` of an older commit) for a before/after;
the build of the day before each checkpoint (all loads since the last checkpoint: a catch-up)
is printed on a line of its own;
`--load-only` skips dbt to measure the raw layer's storage quickly. No asserts: figures.

Run:  python benchmarks/bench_history.py [--days 365] [--checkpoints 2,30,90,180,365]
          [--size 9200] [--warehouse duckdb|postgres] [--project DIR] [--load-only] [--keep DIR]
          [--nodes MODEL,...]
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import inspect
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
KEY = "bench-key"
BLOCK = 262144  # DuckDB's default block size
MIB = 1024 * 1024
# The top-level package of a checkout (pyproject's packages.find): forgotten before importing
# that of --project, so that the loader and dbt project measured are that checkout's.
PROJECT_PACKAGES = ("dmf_watch",)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument(
        "--checkpoints",
        default="2,30,90,180,365",
        help="comma-separated days to build and measure (only those <= --days)",
    )
    parser.add_argument("--size", type=int, default=9200, help="records a day")
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        help="project dir whose loader and dbt models to run (default: this checkout)",
    )
    parser.add_argument("--load-only", action="store_true", help="load only; print the storage at checkpoints")
    parser.add_argument("--keep", type=Path, default=None, help="keep the warehouse in this dir (default: a temp dir)")
    parser.add_argument("--top", type=int, default=12, help="tables listed at the last checkpoint")
    parser.add_argument("--warehouse", choices=("duckdb", "postgres"), default="duckdb")
    parser.add_argument(
        "--nodes",
        default="",
        help="comma-separated models whose execution time each checkpoint prints too (a before/after of a few)",
    )
    return parser.parse_args()


def table_sizes(duckdb_module: Any, path: Path) -> dict[str, float]:
    """Approximate bytes per table: each column segment spans to the next segment of its block."""
    with duckdb_module.connect(str(path), read_only=True) as con:
        tables = con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database()"
        ).fetchall()
        segments: list[tuple[str, int, int, int]] = []  # table, block, offset, extra blocks
        for schema, table in tables:
            name = f"{schema}.{table}"
            for block_id, offset, extra in con.execute(
                f'select block_id, block_offset, additional_block_ids from pragma_storage_info(\'"{schema}"."{table}"\') '
                "where persistent and block_id >= 0"
            ).fetchall():
                segments.append((name, block_id, offset, len(extra or [])))
    by_block: dict[int, list[tuple[int, str, int]]] = defaultdict(list)
    for name, block_id, offset, extra in segments:
        by_block[block_id].append((offset, name, extra))
    sizes: dict[str, float] = defaultdict(float)
    for entries in by_block.values():
        entries.sort()
        for index, (offset, name, extra) in enumerate(entries):
            end = entries[index + 1][0] if index + 1 < len(entries) else BLOCK
            sizes[name] += (end - offset) + extra * BLOCK
    return dict(sizes)


def row_counts(duckdb_module: Any, path: Path) -> dict[str, int]:
    """Rows of every table of the warehouse (dbt-duckdb reports no rows_affected for models)."""
    with duckdb_module.connect(str(path), read_only=True) as con:
        tables = con.execute(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database()"
        ).fetchall()
        return {
            f"{schema}.{table}": con.execute(f'select count(*) from "{schema}"."{table}"').fetchone()[0]
            for schema, table in tables
        }


PG_PREFIX = "bench"


def pg_tables(warehouse: Any, settings: Any) -> list[tuple[str, str]]:
    with warehouse.connect(settings, read_only=True) as con:
        return con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_schema like ? and table_type = 'BASE TABLE'",
            [PG_PREFIX + "\\_%"],
        ).fetchall()


def pg_table_sizes(warehouse: Any, settings: Any) -> dict[str, float]:
    """Bytes per table on the server, its indexes and TOAST included."""
    with warehouse.connect(settings, read_only=True) as con:
        return {
            f"{schema}.{table}": float(
                con.execute("select pg_total_relation_size(cast(? as regclass))", [f'"{schema}"."{table}"']).fetchone()[
                    0
                ]
            )
            for schema, table in pg_tables(warehouse, settings)
        }


def pg_row_counts(warehouse: Any, settings: Any) -> dict[str, int]:
    with warehouse.connect(settings, read_only=True) as con:
        return {
            f"{schema}.{table}": con.execute(f'select count(*) from "{schema}"."{table}"').fetchone()[0]
            for schema, table in pg_tables(warehouse, settings)
        }


def drop_pg_schemas(warehouse: Any, settings: Any) -> None:
    with warehouse.connect(settings) as con:
        for (name,) in con.execute(
            "select schema_name from information_schema.schemata where schema_name like ?", [PG_PREFIX + "\\_%"]
        ).fetchall():
            con.execute(f'drop schema "{name}" cascade')


def manifest_nodes(target: Path, build_module: Any, settings: Any) -> dict[str, Any]:
    """The manifest's nodes. The morning build writes no manifest.json (--no-write-json), so
    an untimed `dbt parse` writes it when no build has."""
    path = target / "manifest.json"
    if not path.exists() and hasattr(build_module, "invoke_dbt"):
        build_module.invoke_dbt(settings, "parse")
    return json.loads(path.read_text(encoding="utf-8"))["nodes"] if path.exists() else {}


def rows_processed(target: Path, nodes: dict[str, Any], before: dict[str, int], after: dict[str, int]) -> int:
    """Rows the build wrote: all rows of each table model it rebuilt, the rows an incremental
    model gained (an update in place is not counted), and the rows of the seeds it loaded."""
    results_path = target / "run_results.json"
    if not results_path.exists():
        return 0
    total = 0
    for result in json.loads(results_path.read_text(encoding="utf-8"))["results"]:
        node = nodes.get(result["unique_id"])
        if node is None or result["status"] != "success" or node["resource_type"] not in ("model", "seed"):
            continue
        name = f"{node['schema']}.{node.get('alias') or node['name']}"
        materialized = node["config"].get("materialized")
        if node["resource_type"] == "seed" or materialized == "table":
            total += after.get(name, 0)
        elif materialized == "incremental":
            total += max(0, after.get(name, 0) - before.get(name, 0))
    return total


def slowest_nodes(target: Path, count: int = 3) -> str:
    """The `count` nodes of the last build with the longest execution (run_results.json)."""
    results_path = target / "run_results.json"
    if not results_path.exists():
        return ""
    results = json.loads(results_path.read_text(encoding="utf-8"))["results"]
    results.sort(key=lambda result: -(result.get("execution_time") or 0))
    return ", ".join(f"{r['unique_id'].split('.')[-1]} {r['execution_time']:.1f}" for r in results[:count])


def node_times(target: Path, names: list[str]) -> str:
    """The execution time of the named models in the last build (run_results.json); `-` if not run."""
    results_path = target / "run_results.json"
    if not names or not results_path.exists():
        return ""
    results = json.loads(results_path.read_text(encoding="utf-8"))["results"]
    times = {r["unique_id"]: r.get("execution_time") or 0.0 for r in results if r["unique_id"].startswith("model.")}
    by_name = {unique_id.split(".")[-1]: seconds for unique_id, seconds in times.items()}
    return "; ".join(f"{name} {by_name[name]:.2f}" if name in by_name else f"{name} -" for name in names)


def main() -> None:
    args = parse_args()
    project = (args.project or HERE).resolve()
    sys.path.insert(0, str(project))  # the loader of the project measured, not of this checkout
    for name in [m for m in sys.modules if m.split(".")[0] in PROJECT_PACKAGES]:
        del sys.modules[name]
    # the dbt runner's home (older checkouts kept it with the command)
    runner = (
        "dmf_watch.transform.build" if (project / "dmf_watch" / "transform").is_dir() else "dmf_watch.commands.build"
    )
    build_module = importlib.import_module(runner)
    # the morning build, as `dmf run` does it (data tests on the new loads; older checkouts lack it)
    morning = {"new_loads_only": True} if "new_loads_only" in inspect.signature(build_module.build).parameters else {}
    build = functools.partial(build_module.build, **morning)
    load_settings = importlib.import_module("dmf_watch.core.config").load_settings
    load_day = importlib.import_module("dmf_watch.pipelines.mfds.load").load_day
    registry_module = importlib.import_module("dmf_watch.simulator.registry")
    SyntheticRegistry, DEFAULT_SEED = registry_module.SyntheticRegistry, registry_module.DEFAULT_SEED
    SimulatorServer = importlib.import_module("dmf_watch.simulator.server").SimulatorServer
    import duckdb

    on_server = args.warehouse == "postgres"
    warehouse = importlib.import_module("dmf_watch.core.warehouse") if on_server else None

    def counts(settings: Any) -> dict[str, int]:
        return pg_row_counts(warehouse, settings) if on_server else row_counts(duckdb, settings.duckdb_path)

    def sizes_of(settings: Any) -> dict[str, float]:
        return pg_table_sizes(warehouse, settings) if on_server else table_sizes(duckdb, settings.duckdb_path)

    watched_nodes = [name.strip() for name in args.nodes.split(",") if name.strip()]
    checkpoints = sorted({int(c) for c in args.checkpoints.split(",") if c.strip() and 0 < int(c) <= args.days})
    pre_builds = {c - 1 for c in checkpoints if c > 1} - set(checkpoints)
    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size)
    loader = Path(importlib.import_module("dmf_watch.pipelines").__file__ or "").parent
    print(
        f"project {project} (loader {loader}); {args.warehouse}; {args.days} days of {args.size:,} records; "
        f"checkpoints {checkpoints}" + (" (load only)" if args.load_only else "")
    )
    print(
        f"{'day':>5} {'build s':>9} {'warehouse MiB':>14} {'rows written':>15} {'load s (day)':>13}  slowest nodes (s)"
    )
    build_times: dict[int, float] = {}
    with (
        tempfile.TemporaryDirectory(prefix="dmf-bench-history-") as tmp,
        SimulatorServer(registry, service_key=KEY) as sim,
    ):
        root = args.keep.resolve() if args.keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        settings = load_settings({}).with_paths(
            duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
        )
        settings = dataclasses.replace(settings, api_base_url=sim.base_url, project_dir=project)
        if on_server:
            settings = dataclasses.replace(settings, warehouse="postgres", schema_prefix=PG_PREFIX)
            drop_pg_schemas(warehouse, settings)
        target = settings.state_dir / "dbt" / "target"
        nodes: dict[str, Any] = {}
        for day in range(1, args.days + 1):
            sim.set_day(day)
            started = time.monotonic()
            outcome = load_day(settings, registry.date_of(day), service_key=KEY)
            load_s = time.monotonic() - started
            if outcome.fetch_status != "complete":
                print(f"day {day}: {outcome.summary()}")
            if not args.load_only and day in pre_builds:
                started = time.monotonic()
                build(settings)
                loads = day - max((d for d in [0, *checkpoints] if d < day), default=0)
                print(
                    f"{day:>5} (the day before a checkpoint: {loads} loads in one build, "
                    f"{time.monotonic() - started:.1f} s)  {slowest_nodes(target)}"
                )
            if day not in checkpoints:
                continue
            seconds, rows, slowest = float("nan"), 0, ""
            if not args.load_only:
                before = counts(settings)
                started = time.monotonic()
                built = build(settings)
                seconds = time.monotonic() - started
                build_times[day] = seconds
                nodes = nodes or manifest_nodes(target, build_module, settings)
                rows = rows_processed(target, nodes, before, counts(settings))
                slowest = slowest_nodes(target)
                if not built.success:
                    print(f"day {day}: {built.summary()}")
            size = sum(sizes_of(settings).values()) / MIB if on_server else settings.duckdb_path.stat().st_size / MIB
            print(f"{day:>5} {seconds:>9.1f} {size:>14.1f} {rows:>15,} {load_s:>13.1f}  {slowest}", flush=True)
            if chosen := node_times(target, watched_nodes):
                print(f"{'':>5} {chosen}", flush=True)
        sizes = sizes_of(settings)
    print(f"\nbiggest tables at day {checkpoints[-1] if checkpoints else args.days} (MiB, estimated):")
    for name, size in sorted(sizes.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {name:<48} {size / MIB:>8.1f}")
    print(f"  {'all tables':<48} {sum(sizes.values()) / MIB:>8.1f}")
    first, last = min(build_times, default=None), max(build_times, default=None)
    if first is not None and last is not None and build_times[first] > 0:
        print(f"build time day {last} / day {first}: {build_times[last] / build_times[first]:.2f}x")
    else:
        print("build time ratio: n/a (no builds)")


if __name__ == "__main__":
    main()
