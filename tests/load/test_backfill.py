"""`dmf backfill PATH`: dated dumps imported through the live writer give exactly the events of
the same days loaded one by one (a gate-rejected day included); published days never change
silently; broken dumps are refused in one line before anything is written."""

from __future__ import annotations

import dataclasses
import json
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from dmf_watch.commands.backfill import backfill
from dmf_watch.commands.status import day_statuses
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.replay import write_replay
from support.mfds import SERVICE_KEY, small_registry
from support.scenarios import DaysSource, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

START = date(2026, 11, 2)
DAYS = [START + timedelta(days=n) for n in range(5)]
COLLAPSED = DAYS[2]  # every manufacturer null: field_fill_collapse rejects it


def _settings(root: Path) -> Settings:
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    return dataclasses.replace(settings, agy_binary="/nonexistent/agy")


def _days(count: int = len(DAYS)) -> dict[date, list[dict]]:
    registry = small_registry(1200, START)
    days = {START + timedelta(days=n): registry.items_for(n + 1) for n in range(count)}
    if COLLAPSED in days:
        days[COLLAPSED] = [{**item, "MNFCTR_NAME": None} for item in days[COLLAPSED]]
    return days


def _published(settings: Settings, *, with_load_id: bool) -> str:
    """Every published event and field change as sorted JSON: equal text means equal rows."""
    tables = {}
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        for table in ("dmf_events", "dmf_event_field_changes", "dmf_loads"):
            columns = [
                row[0]
                for row in con.execute(
                    "select column_name from information_schema.columns where table_schema = 'marts' "
                    "and table_name = ? order by ordinal_position",
                    [table],
                ).fetchall()
            ]
            if table == "dmf_loads":
                columns = ["as_of_date", "verdict", "is_baseline", "previous_accepted_as_of", "reason"]
            elif not with_load_id:
                columns = [c for c in columns if c != "load_id"]
            rows = con.execute(f"select {', '.join(columns)} from marts.{table}").fetchall()
            tables[table] = sorted(json.dumps(dict(zip(columns, row)), ensure_ascii=False, default=str) for row in rows)
    return json.dumps(tables, ensure_ascii=False, indent=0)


def _day_rows(settings: Settings, day: date) -> str:
    """One day's published events and field changes, load id included, as sorted JSON."""
    out = []
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        for table in ("dmf_events", "dmf_event_field_changes"):
            cursor = con.execute(f"select * from marts.{table} where as_of_date = ?", [day])
            names = [d[0] for d in cursor.description]
            out += sorted(
                json.dumps(dict(zip(names, row)), ensure_ascii=False, default=str) for row in cursor.fetchall()
            )
    return "\n".join(out)


@pytest.fixture(scope="module")
def day_by_day(tmp_path_factory):
    settings = _settings(tmp_path_factory.mktemp("day_by_day"))
    # The first two days in a call of their own: run_days shelves them as a prefix, and the
    # published-days test starts from a copy instead of building them again (support/replays.py).
    # Each day is its own morning either way; the days after them run on this warehouse.
    outcomes = run_days(settings, DaysSource(_days()), [(day, None) for day in DAYS[:2]], SERVICE_KEY)
    outcomes += run_days(settings, DaysSource(_days()), [(day, None) for day in DAYS[2:]], SERVICE_KEY)
    return settings, outcomes


def test_backfill_gives_the_same_events_and_field_changes_as_loading_the_days_one_by_one(day_by_day, tmp_path, capsys):
    settings_live, outcomes = day_by_day
    assert [o.exit_code for o in outcomes] == [0, 0, 2, 0, 0]  # the collapsed day was rejected
    settings = _settings(tmp_path / "warehouse")
    write_replay(tmp_path / "dumps", _days())

    assert backfill(settings, tmp_path / "dumps", progress=False) == 2  # a day was rejected
    printed = capsys.readouterr().out
    assert f"{COLLAPSED}  REJECTED" in printed
    assert "4 of 5 imported day(s) published, 1 rejected by a gate" in printed

    assert _published(settings, with_load_id=False) == _published(settings_live, with_load_id=False)
    # The day after the rejected one was judged against the last accepted day, not the rejected one.
    assert query(
        settings, "select verdict, previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[3]]
    ) == [("accepted", DAYS[1])]
    assert query(settings, "select count(*) from marts.dmf_events where as_of_date > ?", [DAYS[1]])[0][0] > 0

    # After a gate rejection the advice is a person's acceptance, never a live load of the past day.
    advice = {s.day: s.next_command for s in day_statuses(settings, len(DAYS), DAYS[-1])}
    assert advice[COLLAPSED].endswith(f"dmf accept-load --as-of {COLLAPSED} --by NAME --reason TEXT")
    assert not any(a and a.startswith(("dmf run", "dmf load")) for a in advice.values())


def test_a_published_day_stays_byte_identical_after_later_days_a_rerun_and_a_backfill(tmp_path, capsys):
    settings = _settings(tmp_path / "warehouse")
    days = _days(6)
    days[COLLAPSED] = small_registry(1200, START).items_for(3)  # no rejection here: every day publishes
    first, second, third = DAYS[0], DAYS[1], DAYS[2]
    run_days(settings, DaysSource(days), [(first, None), (second, None)], SERVICE_KEY)
    published = {day: _day_rows(settings, day) for day in (first, second)}
    assert published[second].count("\n") > 5  # the day really has events

    # Later days, then the latest day run again (skipped), then later days from dumps.
    run_days(settings, DaysSource(days), [(third, None), (third, None)], SERVICE_KEY)
    write_replay(tmp_path / "later", {day: days[day] for day in (DAYS[3], DAYS[4])})
    assert backfill(settings, tmp_path / "later", progress=False) == 0
    assert "no day published before this backfill changed" in capsys.readouterr().out
    assert {day: _day_rows(settings, day) for day in (first, second)} == published

    # Inserting a day before the published ones is refused without the flag, and nothing is written.
    write_replay(tmp_path / "earlier", {START - timedelta(days=1): days[first][3:]})  # 3 records fewer
    loads = query(settings, "select count(*) from mfds_raw.load_runs")
    with pytest.raises(Exception, match="before the latest load in the warehouse .* --insert-before-published"):
        backfill(settings, tmp_path / "earlier", progress=False)
    assert query(settings, "select count(*) from mfds_raw.load_runs") == loads
    assert {day: _day_rows(settings, day) for day in (first, second)} == published

    # With the flag it is imported, and the changed published days are printed before → after.
    assert backfill(settings, tmp_path / "earlier", insert_before_published=True, progress=False) == 0
    printed = capsys.readouterr().out
    assert f"published  {first}  nothing → 3 NEW, 0 CHANGED, 0 WITHDRAWN" in printed  # the old baseline
    assert "re-render the changed days' reports" in printed
