"""How PostgreSQL runs the models of a kept warehouse: join kinds and row estimates, per model.

Why: a morning's build on PostgreSQL is as fast as its plans, and a plan is as good as the row
estimates it was chosen on (issue 40: nested loops chosen on estimates of one row for thousands
rescanned history per row, 82 s to 185 s a model). This runs EXPLAIN ANALYZE of each model's
compiled select (the target/compiled SQL the warehouse's last build wrote, so an incremental
model's select of its last run: the new loads) inside a transaction that is rolled back, with the
model's own pre-hook settings (`without_nested_loops`, `without_jit`), and prints per model: the
time, the part of it PostgreSQL spent compiling the plan to machine code (JIT, which it starts
once a plan's estimated cost passes `jit_above_cost`: an overestimate pays it for a few rows), the
join nodes by kind, and the worst estimate (plan rows against actual rows, the larger over the
smaller, rows per loop). A mart's select reads the published marts (the build's, moved there by
the publish). No asserts: figures.

Run:  python benchmarks/bench_history.py --warehouse postgres --days N --keep DIR
      python benchmarks/explain_models.py DIR [MODEL ...]
          (default: int_field_changes int_registration_versions dmf_registrations
          int_registration_links; `all` for every model the build compiled; libpq variables name
          the server, PGDATABASE the database)
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import psycopg2

DEFAULT_MODELS = ("int_field_changes", "int_registration_versions", "dmf_registrations", "int_registration_links")
JOINS = ("Nested Loop", "Hash Join", "Merge Join")
# The planner macros a model's pre-hook may call (macros/planner.sql), as PostgreSQL runs them.
PLANNER_HOOKS = {"without_nested_loops": "set local enable_nestloop = off", "without_jit": "set local jit = off"}


def walk(node: dict, joins: Counter, worst: list) -> None:
    kind = node["Node Type"]
    if kind in JOINS:
        joins[kind] += node.get("Actual Loops", 1)
    planned, actual = max(node["Plan Rows"], 1), max(node["Actual Rows"], 1)
    if node.get("Actual Loops", 0):
        ratio = max(planned, actual) / min(planned, actual)
        if ratio > worst[0]:
            worst[:] = [ratio, f"{kind} planned {node['Plan Rows']} actual {node['Actual Rows']}"]
    for child in node.get("Plans", []):
        walk(child, joins, worst)


def explain(con, sql: str, settings: list[str]) -> tuple[float, float, Counter, list]:
    with con.cursor() as cur:
        for setting in settings:
            cur.execute(setting)
        cur.execute("explain (analyze, format json) " + sql)
        ((plan,),) = cur.fetchall()
    con.rollback()
    top = (plan if isinstance(plan, list) else json.loads(plan))[0]
    joins: Counter = Counter()
    worst: list = [1.0, ""]
    walk(top["Plan"], joins, worst)
    jit_s = top.get("JIT", {}).get("Timing", {}).get("Total", 0.0) / 1000
    return top["Execution Time"] / 1000, jit_s, joins, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("kept", type=Path, help="the --keep dir of bench_history.py --warehouse postgres")
    parser.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    args = parser.parse_args()
    compiled = args.kept / "state" / "dbt" / "target" / "compiled"
    project = Path(__file__).resolve().parents[1]
    con = psycopg2.connect("", application_name="explain_models")
    models = args.models
    if models == ["all"]:
        sources = {path.stem for path in (project / "models").rglob("*.sql")}
        models = sorted({path.stem for path in compiled.rglob("*.sql")} & sources)
    print(f"{'model':<36} {'seconds':>8} {'jit s':>6}  joins (executions)                         worst estimate")
    total = total_jit = 0.0
    for model in models:
        (path,) = compiled.rglob(f"{model}.sql")
        (source,) = (project / "models").rglob(f"{model}.sql")
        settings = [setting for hook, setting in PLANNER_HOOKS.items() if f"{hook}()" in source.read_text()]
        # a mart reads the marts of its build, which the publish moved into marts
        sql = path.read_text(encoding="utf-8").replace('_marts_build"', '_marts"')
        seconds, jit_s, joins, (ratio, where) = explain(con, sql, settings)
        total, total_jit = total + seconds, total_jit + jit_s
        kinds = ", ".join(f"{kind} {count}" for kind, count in joins.most_common()) or "none"
        flag = "".join(f" ({setting.removeprefix('set local ')})" for setting in settings)
        print(f"{model:<36} {seconds:>8.2f} {jit_s:>6.2f}  {kinds + flag:<42} {ratio:,.0f}x ({where})")
    print(f"{'all of the above':<36} {total:>8.2f} {total_jit:>6.2f}")
    con.close()


if __name__ == "__main__":
    main()
