"""Backups of what the API can never give again, and a warehouse rebuilt from one.

Real runs over the MFDS sample take a copy after each accepted day; the warehouse is then cut
short or overwritten in the middle, and `dmf run`, `dmf status` and `dmf doctor` each say so in
one line with the way back; `dmf restore` brings every published day and raw load back."""

from __future__ import annotations

import dataclasses
import os
import shutil
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.commands.backup import copies
from dmf_watch.commands.cli import main
from dmf_watch.core.config import Settings, load_settings
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, point_dmf_at, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt and whole days: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 10, 8), date(2026, 10, 9), date(2026, 10, 10)
PUBLISHED = "select as_of_date, event_type, count(*) from marts.dmf_events group by all order by all"
RAW = "select load_id, as_of_date, fetch_status, distinct_count, attempt_seq from mfds_raw.load_runs order by all"


def settings_in(root: Path) -> Settings:
    return load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )


@pytest.fixture(scope="module")
def history(real_data_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("backups")
    records = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    mp = pytest.MonkeyPatch()
    mp.setenv("DMF_AI_DISABLED", "1")
    try:
        source = DaysSource({DAY_1: records, DAY_2: records[:-1], DAY_3: records[:-3]})
        # The first two days with the default settings are the same replay as
        # tests/commands/test_published_days_are_final.py's, built once for the session and copied
        # (support/replays.py); DMF_BACKUP_KEEP=2 from the third, whose backup prunes the oldest.
        outcomes = run_days(settings_in(root), source, [(DAY_1, None), (DAY_2, None)], SERVICE_KEY)
        settings = dataclasses.replace(settings_in(root), backup_keep=2)
        outcomes += run_days(settings, source, [(DAY_3, None)], SERVICE_KEY)
    finally:
        mp.undo()
    assert [o.exit_code for o in outcomes] == [0, 0, 0]
    return root


@pytest.fixture
def warehouse(history, tmp_path, monkeypatch) -> Settings:
    root = tmp_path / "copy"
    shutil.copytree(history, root)
    point_dmf_at(monkeypatch, root)
    return settings_in(root)


def test_each_accepted_day_leaves_a_copy_and_only_the_last_n_are_kept(history):
    found = copies(history / "state" / "backups")
    assert [copy.as_of for copy in found] == [DAY_3.isoformat(), DAY_2.isoformat()]  # DMF_BACKUP_KEEP=2
    newest = found[0]
    assert newest.tables["mfds_raw.load_runs"] == 3 and newest.tables["mfds_raw.dmf_load_items"] > 0
    assert not [p for p in (history / "state" / "backups").iterdir() if p.name.endswith(".partial")]


def cut_short(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def overwrite_the_headers(path: Path) -> None:
    with path.open("r+b") as handle:  # DuckDB's two database headers, after the file header
        handle.seek(4096)
        handle.write(os.urandom(2 * 4096))


@pytest.mark.fault("a truncated or corrupted warehouse")
@pytest.mark.parametrize("damage", [cut_short, overwrite_the_headers], ids=["truncated", "overwritten"])
def test_a_damaged_warehouse_is_named_by_run_status_and_doctor_and_restored_from_its_backup(warehouse, capsys, damage):
    """run, status and doctor name the damaged file and `dmf restore`; restore brings published days and raw loads back"""
    published, raw = query(warehouse, PUBLISHED), query(warehouse, RAW)
    damage(warehouse.duckdb_path)

    lines = {}
    for command in (["run", "--as-of", DAY_3.isoformat()], ["status"]):
        capsys.readouterr()
        assert main(command) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        lines[command[0]] = err
    assert main(["doctor"]) == 1
    doctor = [line for line in capsys.readouterr().out.splitlines() if line.startswith("BAD") and "warehouse" in line]
    for line in [*lines.values(), *doctor]:
        assert f"the warehouse {warehouse.duckdb_path} is damaged (" in line
        assert "rebuild it from the newest backup with `dmf restore` (2 in " in line
    assert doctor

    assert main(["restore"]) == 0
    out = capsys.readouterr().out
    assert "restore: the current warehouse was moved to" in out and "3 load attempts 2026-10-08 … 2026-10-10" in out

    assert query(warehouse, PUBLISHED) == published
    assert query(warehouse, RAW) == raw
    broken = [p for p in warehouse.duckdb_path.parent.iterdir() if p.name.startswith("dmf.duckdb.broken-")]
    assert len(broken) == 1  # kept, not deleted
    assert main(["status", "--as-of", DAY_3.isoformat(), "--days", "3"]) == 0
