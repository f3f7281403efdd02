"""One truth, two engines: the same loads give the same marts on DuckDB and on PostgreSQL.

The same days go through the real daily job (HTTP loader, `dmf build`, the report) into an
embedded DuckDB file and into a PostgreSQL 15 server: simulated days with a renumbering on the
same day as a manufacturer edit, registrations that come back after 2 days (REINSTATED), a day
whose list lost every manufacturer (a gate rejects it), then the real 2026-10-08 sample and its
next day. Every published mart is then compared row for row, every column but the ids and
clocks each run mints itself (load ids, build times); the verdicts and gates of every day, and
the daily report's action list."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.commands.ground_truth import table as comparison_table
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.simulator.evolution import IdentityCases
from dmf_watch.simulator.registry import SyntheticRegistry
from support.mfds import SERVICE_KEY
from support.postgres import drop_schemas, on_postgres
from support.real_days import two_days
from support.scenarios import DaysSource, run_days, settings_in

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

START = date(2026, 9, 1)
DATES = [START + timedelta(days=n) for n in range(8)]
REJECTED = DATES[4]
CASES = IdentityCases(day=3, returns_after=(2,), renumbered_with_manufacturer=1)

MARTS = (
    "dmf_events",
    "dmf_event_field_changes",
    "dmf_signals",
    "dmf_registrations",
    "dmf_registration_history",
    "dmf_day_decisions",
    "dmf_loads",
    "dmf_daily_summary",
    "dmf_watchlist_unmatched",
)
# What each run mints for itself: ids of its loads and clocks of its steps.
MINTED = {
    "load_id",
    "previous_accepted_load_id",
    "latest_load_id",
    "built_at",
    "matched_at",
    "published_at",
    "started_at",
    "finished_at",
    "duration_s",
    "loaded_at",
    "decided_at",
}


# A signal measured on the clock: how long this run's fetch took, against its median.
CLOCKED_SIGNALS = {"slow_fetch"}
CLOCKED_COLUMNS = {"observed", "baseline", "baseline_text", "fired"}


def _registry() -> SyntheticRegistry:
    return SyntheticRegistry(seed=5, size=300, start_date=START, cases=CASES)


def _days(real_data_dir: Path) -> tuple[dict[date, list[dict]], dict[date, list[dict]]]:
    registry = _registry()
    days = {as_of: registry.items_for(n + 1) for n, as_of in enumerate(DATES)}
    days[REJECTED] = [{**item, "MNFCTR_NAME": None} for item in days[REJECTED]]
    return days, two_days(real_data_dir)


def _value(value):
    """A value as both engines' drivers can agree on: numbers to 9 significant digits, instants in
    UTC, lists and JSON text as Python lists and dicts."""
    if isinstance(value, Decimal | float):
        return None if math.isnan(value) else float(f"{float(value):.9g}")
    if isinstance(value, datetime):
        return value.astimezone().isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, list | tuple):
        return [_value(v) for v in value]
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _marts(settings: Settings) -> dict[str, list[str]]:
    marts = warehouse.schemas(settings).marts
    found = {}
    with warehouse.connect(settings, read_only=True) as con:
        for table in MARTS:
            columns = [c for c in warehouse.columns(con, marts, table) if c not in MINTED]
            quoted = ", ".join(f'"{c}"' for c in columns)
            rows = con.execute(f"select {quoted} from {marts}.{table}").fetchall()
            records = [dict(zip(columns, map(_value, row))) for row in rows]
            for record in records:
                if record.get("signal_id") in CLOCKED_SIGNALS:
                    for column in CLOCKED_COLUMNS:
                        record.pop(column, None)
            found[table] = sorted(json.dumps(r, ensure_ascii=False, sort_keys=True, default=str) for r in records)
    return found


def _action_rows(report: Path) -> list[list]:
    sheet = openpyxl.load_workbook(report, read_only=True)["조치항목"]
    return [
        [cell for cell in row if not (isinstance(cell, str) and cell.startswith("20") and "Z-" in cell)]
        for row in sheet.iter_rows(values_only=True)
    ]


@pytest.fixture(scope="module")
def both_engines(tmp_path_factory, postgres, real_data_dir):
    """{(history, engine): (settings, outcomes)}: each history into a warehouse of its own."""
    synthetic, real = _days(real_data_dir)
    runs = {}
    on_server = []
    for history, days in (("synthetic", synthetic), ("real", real)):
        for engine in ("duckdb", "postgres"):
            settings = settings_in(tmp_path_factory.mktemp(f"{history}_{engine}"))
            settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
            if engine == "postgres":
                settings = on_postgres(settings, history)
                on_server.append(settings)
            outcomes = run_days(settings, DaysSource(days), [(d, None) for d in sorted(days)], SERVICE_KEY)
            runs[history, engine] = (settings, outcomes)
    yield runs
    for settings in on_server:
        drop_schemas(settings)


def _same(duck: Settings, pg: Settings) -> dict[str, list[str]]:
    on_duckdb, on_postgres_ = _marts(duck), _marts(pg)
    for table in MARTS:
        only_duckdb = sorted(set(on_duckdb[table]) - set(on_postgres_[table]))
        only_postgres = sorted(set(on_postgres_[table]) - set(on_duckdb[table]))
        assert (only_duckdb[:3], only_postgres[:3]) == ([], []), table
        assert on_postgres_[table] == on_duckdb[table], table
    return on_duckdb


def _report(outcome) -> Path:
    (report,) = [p for p in outcome.reports if p.suffix == ".xlsx" and "daily" in p.name]
    return report


@pytest.mark.parametrize("history", ["synthetic", "real"])
def test_the_same_loads_give_the_same_marts_verdicts_and_report_on_both_engines(both_engines, history):
    (duck, duck_days), (pg, pg_days) = both_engines[history, "duckdb"], both_engines[history, "postgres"]
    assert [(o.as_of, o.verdict, o.exit_code, o.reason) for o in pg_days] == [
        (o.as_of, o.verdict, o.exit_code, o.reason) for o in duck_days
    ]
    marts = _same(duck, pg)
    if history == "synthetic":
        # the comparison compared something: every kind of event, a reinstatement, a rejected day
        assert [o.exit_code for o in duck_days] == [2 if o.as_of == REJECTED else 0 for o in duck_days]
        events = "\n".join(marts["dmf_events"])
        assert all(f'"event_type": "{kind}"' in events for kind in ("NEW", "CHANGED", "WITHDRAWN", "REINSTATED"))
        assert any('"verdict": "rejected"' in row for row in marts["dmf_day_decisions"])
    else:
        assert [o.exit_code for o in duck_days] == [0, 0]
        assert len(marts["dmf_registrations"]) > 300
    assert len(_action_rows(_report(duck_days[-1]))) > 4
    assert _action_rows(_report(pg_days[-1])) == _action_rows(_report(duck_days[-1]))


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_every_simulated_day_publishes_the_simulators_ground_truth_on_each_engine(both_engines, engine):
    """The held-out check on each engine on its own, not only the one against the other: every
    synthetic day's events against what the simulator changed since the last accepted day (the
    rejected day publishes nothing; the day after it is compared with the day before it)."""
    settings, _ = both_engines["synthetic", engine]
    comparisons = [compare_day(settings, _registry(), day) for day in DATES]
    assert all(day.matches for day in comparisons), comparison_table(comparisons)
    assert sum(day.expected["WITHDRAWN"] for day in comparisons) > 0


def test_postgres_plans_every_model_on_statistics_of_the_rows_it_holds(both_engines):
    """Every table a model wrote and every loader table was analyzed by the build itself (not by
    autoanalyze, which waits for a tenth of a table to change: from about day 10 a morning's load
    never triggers it and the planner takes the new load for one row), and the row count the
    planner knows is the table's (exact below ANALYZE's 30,000-row sample, within 1 % above it:
    a table one load behind is several % off)."""
    pg, _ = both_engines["synthetic", "postgres"]
    prefix = pg.schema_prefix + "_"
    with warehouse.connect(pg, read_only=True) as con:
        tables = [
            (schema.removeprefix(prefix), table, reltuples, analyzed)
            for schema, table, reltuples, analyzed in con.execute(
                "select n.nspname, c.relname, c.reltuples, s.last_analyze is not null "
                "from pg_class as c join pg_namespace as n on n.oid = c.relnamespace "
                "left join pg_stat_user_tables as s on s.relid = c.oid "
                "where c.relkind = 'r' and n.nspname like ?",
                [pg.schema_prefix + "\\_%"],
            ).fetchall()
            if schema.removeprefix(prefix) in ("intermediate", "marts")
            or (schema.removeprefix(prefix), table) in {("mfds_raw", name) for name in LOADER_TABLES}
        ]
        counts = {
            (schema, table): con.execute(f'select count(*) from "{prefix}{schema}"."{table}"').fetchone()[0]
            for schema, table, _, _ in tables
        }
    assert {table for schema, table, _, _ in tables if schema == "mfds_raw"} == LOADER_TABLES
    assert sum(schema == "intermediate" for schema, *_ in tables) > 10
    assert sum(schema == "marts" for schema, *_ in tables) > 5
    assert sorted(f"{schema}.{table}" for schema, table, _, analyzed in tables if not analyzed) == []
    stale = [
        (f"{schema}.{table}", reltuples, counts[schema, table])
        for schema, table, reltuples, _ in tables
        if abs(reltuples - counts[schema, table])
        > (0 if counts[schema, table] < 30_000 else 0.01 * counts[schema, table])
    ]
    assert stale == []


def _plan_without_sequential_scans(con, sql: str) -> str:
    """PostgreSQL's plan of `sql` with sequential scans off for the session: at the test's size
    (ten loads of 300 records) a scan is the cheaper plan; at a year's 3.5 million rows the
    planner takes the index on its own (benchmarks/explain_models.py)."""
    con.execute("set enable_seqscan = off")
    return "\n".join(line for (line,) in con.execute(f"explain {sql}").fetchall())


def test_postgres_reads_one_loads_records_by_the_indexes_the_build_declares(both_engines):
    """The build created the indexes its source and models declare (dmf_load_items on load_id;
    the two per-load tables of every record on (load_seq, load_id), which their watermark walks),
    and the loader's serves a read of one load's records as a morning's models write it (a
    literal list of load ids)."""
    pg, _ = both_engines["synthetic", "postgres"]
    raw = f"{pg.schema_prefix}_mfds_raw"
    with warehouse.connect(pg, read_only=True) as con:
        indexes = con.execute(
            "select indexdef from pg_indexes where schemaname = ? and tablename = 'dmf_load_items'", [raw]
        ).fetchall()
        per_load = con.execute(
            "select tablename, indexdef from pg_indexes where schemaname = ? and indexname like ?",
            [f"{pg.schema_prefix}_intermediate", "%load\\_seq\\_\\_load\\_id"],
        ).fetchall()
        (last_load,) = con.execute(f"select max(load_id) from {raw}.dmf_load_items").fetchone()
        plan = _plan_without_sequential_scans(
            con, f"select item_position from {raw}.dmf_load_items where load_id in ('{last_load}')"
        )
    assert f"CREATE INDEX dmf_load_items__load_id ON {raw}.dmf_load_items USING btree (load_id)" in {
        indexdef for (indexdef,) in indexes
    }
    assert "dmf_load_items__load_id" in plan and "Seq Scan" not in plan, plan
    assert sorted(per_load) == [
        (
            table,
            f"CREATE INDEX {table}__load_seq__load_id ON {pg.schema_prefix}_intermediate.{table} USING btree (load_seq, load_id)",
        )
        for table in ("int_registration_links", "int_registrations_keyed")
    ]


def test_postgres_looks_up_a_row_versions_records_through_staging_by_the_raw_index(both_engines):
    """int_registration_reinstatements finds the earlier appearances of a chain start's keys
    through the row versions that carry them: each a lookup by row_hash through the view
    stg_mfds__load_items (usable loads, quarantine applied), which must reach the raw table's
    declared index on row_hash. A view that computes row_hash (a coalesce with the quarantine's
    replacement) or a CTE read by both of its branches leaves the index out of reach: the plan
    scans every load's records."""
    pg, _ = both_engines["synthetic", "postgres"]
    raw, staging = f"{pg.schema_prefix}_mfds_raw", f"{pg.schema_prefix}_staging"
    with warehouse.connect(pg, read_only=True) as con:
        indexes = con.execute(
            "select indexdef from pg_indexes where schemaname = ? and tablename = 'dmf_load_items'", [raw]
        ).fetchall()
        (row_hash,) = con.execute(f"select max(row_hash) from {raw}.dmf_load_items").fetchone()
        plan = _plan_without_sequential_scans(
            con, f"select record_id from {staging}.stg_mfds__load_items where row_hash = {int(row_hash)}"
        )
    assert f"CREATE INDEX dmf_load_items__row_hash ON {raw}.dmf_load_items USING btree (row_hash)" in {
        indexdef for (indexdef,) in indexes
    }
    assert "dmf_load_items__row_hash" in plan and "Seq Scan on dmf_load_items" not in plan, plan


# The loader's tables (the source mfds), which the build analyzes before any model reads them.
LOADER_TABLES = {"dmf_item_versions", "dmf_load_items", "load_runs", "rejected_load_signals", "load_decisions"}


def _registry_cells(settings: Settings, day: date, out: Path) -> list[tuple]:
    """`dmf registry --as-of day` (what the command runs) written as xlsx, read back cell by
    cell; the load id each run mints is blanked out of the note naming the day shown."""
    from dmf_watch.reports.registry import registry_as_of, write_registry

    path = write_registry(registry_as_of(settings, day), out / f"registry_{day:%Y%m%d}.xlsx")
    rows = openpyxl.load_workbook(path, read_only=True).active.iter_rows(values_only=True)
    return [tuple(re.sub(r"\d{8}T\d{6}Z-[0-9a-f]+", "LOAD", c) if isinstance(c, str) else c for c in r) for r in rows]


@pytest.mark.parametrize("history", ["synthetic", "real"])
def test_dmf_registry_gives_the_same_cells_on_both_engines_for_every_day(both_engines, history, tmp_path):
    (duck, duck_days), (pg, _) = both_engines[history, "duckdb"], both_engines[history, "postgres"]
    for outcome in duck_days:
        day = outcome.as_of
        on_duckdb = _registry_cells(duck, day, tmp_path / "duckdb")
        assert _registry_cells(pg, day, tmp_path / "postgres") == on_duckdb, day
        assert len(on_duckdb) > 100, day  # the title rows, the header and the registrations
        if day == REJECTED and history == "synthetic":
            # the gate rejected this day: the file says so and shows the day before
            assert "반영되지 않았습니다(거부)" in on_duckdb[1][0]
            assert (day - timedelta(days=1)).isoformat() in on_duckdb[1][0]


def _evidence_files(settings: Settings, dmf_key: str, out: Path) -> dict[str, bytes]:
    from dmf_watch.commands.evidence import RAW_RECORDS
    from dmf_watch.reports.evidence import write_evidence

    write_evidence(settings, RAW_RECORDS, out, dmf_key=dmf_key)
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


# What each run of `dmf evidence` carries that the run minted: ids of loads, clocks, the simulator's port.
EVIDENCE_MINTED = {
    "load_id",
    "event_load_id",
    "deciding_load_id",
    "record_id",
    "fetch_started_at",
    "fetch_finished_at",
    "decided_at",
}


def _unminted(document):
    if isinstance(document, dict):
        return {
            k: ("http://127.0.0.1:PORT/" + v.split("/", 3)[3] if k == "url" and v.startswith("http") else _unminted(v))
            for k, v in document.items()
            if k not in EVIDENCE_MINTED
        }
    if isinstance(document, list):
        return [_unminted(v) for v in document if not (isinstance(v, dict) and v.get("signal_id") in CLOCKED_SIGNALS)]
    return document


def test_dmf_evidence_writes_the_same_records_and_manifest_entries_on_both_engines(both_engines, tmp_path):
    """A registration with several events (a renumbering and a comeback are in the synthetic
    history): the record files are the same bytes on both engines and the manifest names them
    with the same digests; the load, decision and event files are equal less what each run minted."""
    (duck, _), (pg, _) = both_engines["synthetic", "duckdb"], both_engines["synthetic", "postgres"]
    with warehouse.connect(duck, read_only=True) as con:
        ((dmf_key, kinds),) = con.execute(
            f"select dmf_key, count(distinct event_type) from {con.schemas.marts}.dmf_events "
            "group by dmf_key order by count(distinct event_type) desc, count(*) desc, dmf_key limit 1"
        ).fetchall()
    assert kinds >= 2
    on_duckdb = _evidence_files(duck, dmf_key, tmp_path / "duckdb")
    on_postgres_ = _evidence_files(pg, dmf_key, tmp_path / "postgres")
    assert sorted(on_postgres_) == sorted(on_duckdb)
    records = sorted(name for name in on_duckdb if "/record_" in name)
    assert len(records) >= 2
    assert {name: on_postgres_[name] for name in records} == {name: on_duckdb[name] for name in records}
    entries = {
        engine: dict(line.split("  ", 1)[::-1] for line in files["SHA256SUMS"].decode().splitlines())
        for engine, files in (("duckdb", on_duckdb), ("postgres", on_postgres_))
    }
    assert {n: entries["postgres"][n] for n in records} == {n: entries["duckdb"][n] for n in records}
    for name in sorted(on_duckdb):
        if name.endswith(".json") and "/record_" not in name:
            assert _unminted(json.loads(on_postgres_[name])) == _unminted(json.loads(on_duckdb[name])), name


def test_dmf_changes_over_the_whole_span_gives_the_same_cells_on_both_engines(both_engines, tmp_path):
    """`dmf changes` over each history's whole span (the synthetic one holds a renumbering, a
    reinstatement and a gate-rejected day): the same workbook cells on DuckDB and PostgreSQL."""
    from dmf_watch.reports.changes import Filters, write_changes
    from support.real_days import DAY_1

    for history, since in (("synthetic", START), ("real", DAY_1)):
        sheets = {}
        for engine in ("duckdb", "postgres"):
            settings, _ = both_engines[history, engine]
            path, span, count = write_changes(settings, since, None, tmp_path / f"{history}_{engine}.xlsx", Filters())
            assert count > 0 and span.since_day == since
            book = openpyxl.load_workbook(path, read_only=True)
            sheets[engine] = {
                name: [list(row) for row in book[name].iter_rows(values_only=True)] for name in book.sheetnames
            }
        assert sheets["postgres"] == sheets["duckdb"], history
        kinds = {row[1] for row in sheets["duckdb"]["전체 변경"][4:]}
        if history == "synthetic":
            assert "재등장" in kinds or "취하 후 재등장(내용 같음)" in kinds, kinds
