"""One truth, two paths: the identity chain and the events built day by day, incrementally (each
build keys and compares only the loads new since the last one), equal row for row what a
`dbt build --full-refresh` of the same warehouse computes from the whole history, over the
fewest simulated days that hold every kind of day it is about, each followed by days whose events
a key gone wrong would change. (The same proof over 60 days is a benchmark:
benchmarks/soak_incremental.py prints its verdict.)

The days come from the simulator's evolving registry through the real daily job (HTTP loader,
`dmf build`): random withdrawals, registrations, late number assignments, renumberings,
substantive and cosmetic edits every day, scripted registrations withdrawn on day 3 that come
back after 2 and 6 days (REINSTATED under their old key), a renumbering on the same day as a manufacturer edit, a
day whose list lost every manufacturer (a gate rejects it: it must never become a baseline),
and a day skipped and imported at the end with `dmf backfill --insert-before-published` (a load
older than the newest one built: every later load moves one place on). Records the diff cannot read
are held out (int_load_items_quarantined) on days 3, 8, 11 and 12: a number on two rows, an empty
record, and the same two registrations on the skipped day and the day after it, so that day 12's
replacements come from day 10 once day 11 is imported, and from day 10 before."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from dmf_watch.commands.backfill import backfill
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.evolution import IdentityCases
from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.replay import write_replay
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY
from support.postgres import drop_schemas, on_postgres
from support.scenarios import DaysSource, run_days

pytestmark = [pytest.mark.e2e, pytest.mark.longest]  # 12 days of real builds and a full refresh

START = date(2026, 10, 1)
DAY_COUNT = 12  # day 9 the last return, day 11 the skipped one, day 12 a day built after it
DATES = [START + timedelta(days=n) for n in range(DAY_COUNT)]
REJECTED = DATES[5]  # every manufacturer null: the field_fill_collapse gate rejects it
SKIPPED = DATES[10]  # not loaded on its day; imported at the end, before published days
CASES = IdentityCases(day=3, returns_after=(2, 6), renumbered_with_manufacturer=1)

NUMBER_TWICE = (DATES[2], DATES[10], DATES[11])  # a record takes the number of the next one
EMPTY_RECORD = DATES[7]

# (layer, table), compared on every column but the build timestamps
COMPARED = (
    ("marts", "dmf_events"),
    ("marts", "dmf_event_field_changes"),
    ("marts", "dmf_signals"),
    ("marts", "dmf_registrations"),
    ("marts", "dmf_registration_history"),
    ("intermediate", "int_load_items_quarantined"),
    ("intermediate", "int_load_items_screened"),
    ("intermediate", "int_event_evidence"),
    ("marts", "dmf_event_evidence"),
)
BUILD_TIMESTAMPS = {"built_at", "matched_at", "published_at"}
ENGINES = ["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)]


def _settings(root: Path) -> Settings:
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    return dataclasses.replace(settings, agy_binary="/nonexistent/agy")


def _days() -> dict[date, list[dict]]:
    registry = SyntheticRegistry(seed=9, size=300, start_date=START, cases=CASES)
    days = {as_of: registry.items_for(n + 1) for n, as_of in enumerate(DATES)}
    days[REJECTED] = [{**item, "MNFCTR_NAME": None} for item in days[REJECTED]]
    # days 11 and 12: the same two registrations, found by their numbers on day 11
    pairs = {as_of: [days[min(as_of, DATES[10])][n]["DMF_PERMIT_NO"] for n in (5, 6)] for as_of in NUMBER_TWICE}
    for as_of, (taker, giver) in pairs.items():
        days[as_of] = [
            {**item, "DMF_PERMIT_NO": giver} if item["DMF_PERMIT_NO"] == taker else item for item in days[as_of]
        ]
    days[EMPTY_RECORD] = [*days[EMPTY_RECORD], dict.fromkeys(days[EMPTY_RECORD][0])]
    return days


def _query(settings: Settings, sql: str, params=()) -> list[tuple]:
    """`sql` with its layers written `{marts}`, `{intermediate}`, `{raw}`: the settings' schemas."""
    with warehouse.connect(settings, read_only=True) as con:
        s = con.schemas
        return con.execute(sql.format(marts=s.marts, intermediate=s.intermediate, raw=s.raw), list(params)).fetchall()


def _contents(settings: Settings) -> dict[str, Counter]:
    """Each compared table's rows (every column but the build timestamps), counted."""
    found = {}
    with warehouse.connect(settings, read_only=True) as con:
        for layer, table in COMPARED:
            schema = getattr(con.schemas, layer)
            columns = ", ".join(f'"{c}"' for c in warehouse.columns(con, schema, table) if c not in BUILD_TIMESTAMPS)
            found[f"{layer}.{table}"] = Counter(
                map(repr, con.execute(f"select {columns} from {schema}.{table}").fetchall())
            )
    return found


@pytest.fixture(params=ENGINES)
def day_by_day(request, tmp_path):
    settings = _settings(tmp_path / "warehouse")
    if request.param == "postgres":
        request.getfixturevalue("postgres")
        settings = on_postgres(settings, "incremental")
    days = _days()
    live = [(as_of, None) for as_of in DATES if as_of != SKIPPED]
    try:
        outcomes = run_days(settings, DaysSource({d: days[d] for d, _ in live}), live, SERVICE_KEY)
        write_replay(tmp_path / "skipped", {SKIPPED: days[SKIPPED]})
        backfilled = backfill(
            settings, tmp_path / "skipped", insert_before_published=True, echo=lambda line: None, progress=False
        )
        yield settings, outcomes, backfilled
    finally:
        if request.param == "postgres":
            drop_schemas(settings)


def test_day_by_day_incremental_builds_equal_a_full_refresh_row_for_row(day_by_day):
    settings, outcomes, backfilled = day_by_day
    query = functools.partial(_query, settings)
    assert [o.exit_code for o in outcomes] == [2 if d == REJECTED else 0 for d in DATES if d != SKIPPED]
    assert backfilled == 0
    # the incremental path really ran incrementally: no full refresh was recorded
    assert query("select count(*) from {raw}.build_runs where full_refresh") == [(0,)]
    # the scenario holds what it claims to exercise
    kinds = dict(query("select event_type, count(*) from {marts}.dmf_events group by 1"))
    assert kinds.get("REINSTATED", 0) >= 2 and kinds.get("WITHDRAWN", 0) > 0 and kinds.get("NEW", 0) > 0
    details = {row[0] for row in query("select distinct change_detail from {marts}.dmf_event_field_changes")}
    assert {"renumbered", "assigned", "cosmetic"} <= details
    assert query("select verdict from {marts}.dmf_loads where as_of_date = ?", [REJECTED]) == [("rejected",)]
    held_out = query(
        "select as_of_date, quarantine_kind, count(*), count(replacement_row_hash) "
        "from {intermediate}.int_load_items_quarantined group by 1, 2 order by 1",
    )
    assert held_out == [
        (DATES[2], "permit_no_on_several_rows", 2, 2),
        (EMPTY_RECORD, "empty_record", 1, 0),
        (DATES[10], "permit_no_on_several_rows", 2, 2),
        (DATES[11], "permit_no_on_several_rows", 2, 2),
    ], held_out
    # day 12 held out the registrations day 11 held out too: their versions come from day 10
    sources = query(
        "select distinct as_of_date from {raw}.dmf_load_items where load_id in "
        "(select replacement_load_id from {intermediate}.int_load_items_quarantined where as_of_date = ?)",
        [DATES[11]],
    )
    assert sources == [(DATES[9],)], sources

    incremental = _contents(settings)
    assert build(settings, full_refresh=True).success
    assert query("select count(*) from {raw}.build_runs where full_refresh") == [(1,)]
    full = _contents(settings)

    differences = {
        table: (sum(rows.values()), sum((rows - full[table]).values()), sum((full[table] - rows).values()))
        for table, rows in incremental.items()
    }
    print(
        "\n"
        + "\n".join(
            f"{t}: {r} rows, {a} only incremental, {b} only full refresh" for t, (r, a, b) in differences.items()
        )
    )
    assert all(rows > 0 for rows, _, _ in differences.values())
    assert {t: (a, b) for t, (_, a, b) in differences.items()} == {t: (0, 0) for t in incremental}
