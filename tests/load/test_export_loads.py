"""`dmf export-loads DIR` then `dmf backfill DIR` into an empty warehouse rebuilds the same
history: the same raw lists (positions, pages, repeat counts, values byte for byte), the same
people's decisions, and so the same published events, field changes and verdicts."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from dmf_watch.commands.backfill import backfill
from dmf_watch.commands.decisions import decide_load
from dmf_watch.commands.export_loads import export_loads, listed
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.core.errors import ConfigError
from dmf_watch.pipelines.mfds.dumps import DumpError
from dmf_watch.simulator.replay import write_replay
from support.mfds import small_registry
from support.postgres import drop_schemas, on_postgres

START = date(2026, 11, 2)
DAYS = [START + timedelta(days=n) for n in range(4)]
COLLAPSED = DAYS[2]  # every manufacturer null: field_fill_collapse rejects it, then a person accepts it


def _settings(root: Path) -> Settings:
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    return dataclasses.replace(settings, agy_binary="/nonexistent/agy")


def _days() -> dict[date, list[dict]]:
    registry = small_registry(1200, START)
    days = {day: registry.items_for(n + 1) for n, day in enumerate(DAYS)}
    days[COLLAPSED] = [{**item, "MNFCTR_NAME": None} for item in days[COLLAPSED]]
    # the list served one record twice and one three times, as the real API sometimes does
    listed_again = days[DAYS[1]]
    days[DAYS[1]] = [*listed_again[:40], listed_again[5], *listed_again[40:700], listed_again[5], listed_again[9]]
    days[DAYS[1]] += listed_again[700:]
    return days


def _history(settings: Settings) -> dict[str, list]:
    """The raw lists and the published history, without the load ids a new warehouse mints."""
    s = warehouse.schemas(settings)
    queries = {
        "raw lists": f"select r.as_of_date, m.item_position, m.page_no, m.repeat_count, m.row_hash "
        f"from {s.raw}.dmf_load_items as m join {s.raw}.load_runs as r on r.load_id = m.load_id "
        "where r.fetch_status = 'complete'",
        "decisions": f"select as_of_date, decision, decided_by, reason, decided_at from {s.raw}.load_decisions",
        "events": f"select as_of_date, dmf_key, event_type, severity, changed_fields from {s.marts}.dmf_events",
        "field changes": f"select as_of_date, dmf_key, field_name, before_value, after_value, severity "
        f"from {s.marts}.dmf_event_field_changes",
        "verdicts": f"select as_of_date, verdict, reason, rejected_gates from {s.marts}.dmf_day_decisions",
        "registrations": f"select dmf_key, permit_no, ingredient_name, applicant, first_seen_as_of, last_event_as_of "
        f"from {s.marts}.dmf_registrations",
    }
    with warehouse.connect(settings, read_only=True) as con:
        return {name: sorted(map(_row, con.execute(sql).fetchall())) for name, sql in queries.items()}


def _row(row: tuple) -> str:
    """A row as text both engines' drivers agree on (instants in UTC, lists as lists)."""
    return repr(
        [
            v.astimezone(UTC).isoformat() if isinstance(v, datetime) else list(v) if isinstance(v, tuple) else v
            for v in row
        ]
    )


@pytest.fixture(scope="module")
def source_warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("source")
    settings = _settings(root)
    write_replay(root / "dumps", _days())  # a dump keeps a record listed twice with its repeat count
    assert backfill(settings, root / "dumps", progress=False) == 2  # the collapsed day was rejected
    # accepted by a person, the collapsed day is the baseline of the next one, which a gate then rejects
    assert decide_load(settings, COLLAPSED, "accept", "김지현", "MFDS 사이트에서 확인함", echo=lambda line: None) == 2
    return settings


@pytest.mark.e2e
def test_export_then_backfill_rebuilds_the_same_history(source_warehouse, tmp_path, capsys):
    folder = tmp_path / "export"
    assert export_loads(source_warehouse, folder) == 0
    printed = capsys.readouterr().out
    assert f"exported {len(DAYS)} day(s) and 1 decision(s)" in printed
    assert sorted(p.name for p in folder.iterdir()) == [f"{day}.jsonl" for day in DAYS] + ["load_decisions.jsonl"]
    # one raw record a line, as served: the listed-twice records are there as often as served
    lines = (folder / f"{DAYS[1]}.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(_days()[DAYS[1]])
    assert json.loads(lines[0]) == _days()[DAYS[1]][0]

    target = _settings(tmp_path / "target")
    assert backfill(target, folder, progress=False) == 2
    assert "1 decision(s) on the imported days recorded as exported" in capsys.readouterr().out

    moved, source = _history(target), _history(source_warehouse)
    assert moved["events"] and moved["field changes"] and len(moved["verdicts"]) == len(DAYS)
    assert moved == source


@pytest.mark.e2e
@pytest.mark.postgres
def test_export_from_duckdb_then_backfill_into_postgresql_gives_the_same_history(
    source_warehouse, postgres, tmp_path, capsys
):
    folder = tmp_path / "export"
    export_loads(source_warehouse, folder)
    target = on_postgres(_settings(tmp_path / "target"), "export")
    try:
        assert backfill(target, folder, progress=False) == 2
        assert "1 decision(s) on the imported days recorded as exported" in capsys.readouterr().out
        assert _history(target) == _history(source_warehouse)
    finally:
        drop_schemas(target)


def test_a_repeat_goes_back_into_the_gap_it_left():
    # first positions 0, 1, 3, 4: position 2 was a repeat of record a; d was listed three times
    assert listed([(0, 2, "a"), (1, 1, "b"), (3, 1, "c"), (4, 3, "d")]) == [
        ("a",),
        ("b",),
        ("a",),
        ("c",),
        ("d",),
        ("d",),
        ("d",),
    ]


def test_export_refuses_a_folder_holding_dumps_and_backfill_a_broken_decisions_file(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "2026-11-02.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="already holds dumps; export into an empty folder"):
        export_loads(_settings(tmp_path / "w"), folder)

    from dmf_watch.commands.backfill import read_decisions

    (folder / "load_decisions.jsonl").write_text('{"as_of_date": "2026-11-02", "decision": "maybe"}\n')
    with pytest.raises(DumpError, match=r"load_decisions.jsonl:1: not a decision as `dmf export-loads` writes it"):
        read_decisions(folder)
