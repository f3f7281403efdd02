"""Replaying recorded MFDS dumps: values come back exactly as recorded, days map to files."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.simulator.registry import SyntheticRegistry
from dmf_watch.simulator.replay import ReplaySource
from dmf_watch.simulator.source import SnapshotSource

REAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mfds_real"
SAMPLE = REAL_DIR / "sample_2026-10-08.jsonl"
needs_real = pytest.mark.usefixtures("real_data_dir")  # fails, never skips, without ../shared


def write_day(folder: Path, name: str, items: list[dict]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
    return path


@needs_real
def test_replay_of_the_real_sample_preserves_every_value_byte_for_byte() -> None:
    source = ReplaySource(SAMPLE)
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    items = source.items_for(1)
    assert source.day_count == 1 and len(items) == len(lines) == 367
    for line, item in zip(lines, items):
        assert json.dumps(item, ensure_ascii=False) == line
        assert list(item) == list(json.loads(line))
    raw = SAMPLE.read_bytes()
    assert b"".join(json.dumps(i, ensure_ascii=False).encode() + b"\n" for i in items) == raw


@needs_real
def test_replay_keeps_crlf_trailing_spaces_and_empty_strings() -> None:
    values = [v for item in ReplaySource(SAMPLE).items_for(1) for v in item.values()]
    assert any(isinstance(v, str) and v.endswith("\r\n") for v in values)
    assert any(isinstance(v, str) and "\r\n," in v for v in values)
    assert any(isinstance(v, str) and v.endswith("  ") for v in values)
    assert "" in values


@needs_real
def test_replay_keeps_null_permit_numbers() -> None:
    items = ReplaySource(REAL_DIR / "tail_B_2026-10-08.jsonl").items_for(1)
    assert sum(i["DMF_PERMIT_NO"] is None for i in items) == 4


@needs_real
def test_a_single_file_takes_its_date_from_the_file_name() -> None:
    source = ReplaySource(SAMPLE)
    assert source.date_of(1) == date(2026, 10, 8)
    assert source.day_of(date(2026, 10, 8)) == 1
    with pytest.raises(ValueError):
        source.day_of(date(2026, 10, 9))


def test_a_folder_serves_one_day_per_file_in_file_name_order(tmp_path: Path) -> None:
    registry = SyntheticRegistry(seed=3, size=300)
    write_day(tmp_path, "dmf_2026-10-02.jsonl", registry.items_for(2))
    write_day(tmp_path, "dmf_2026-10-01.jsonl", registry.items_for(1))
    write_day(tmp_path, "truth_day_01.jsonl", [])
    source = ReplaySource(tmp_path)
    assert source.day_count == 2
    assert source.items_for(1) == registry.items_for(1)
    assert source.items_for(2) == registry.items_for(2)
    assert source.day_of(date(2026, 10, 2)) == 2
    assert source.date_of(1) == date(2026, 10, 1)
    assert source.truth_for(2) == []


def test_start_date_maps_days_when_file_names_carry_no_dates(tmp_path: Path) -> None:
    registry = SyntheticRegistry(seed=3, size=200)
    for day in (1, 2, 3):
        write_day(tmp_path, f"day{day}.jsonl", registry.items_for(day))
    with pytest.raises(ValueError):
        ReplaySource(tmp_path).day_of(date(2026, 1, 1))
    source = ReplaySource(tmp_path, start_date=date(2026, 1, 1))
    assert source.day_of(date(2026, 1, 3)) == 3
    assert source.date_of(2) == date(2026, 1, 2)
    with pytest.raises(ValueError):
        source.day_of(date(2026, 1, 4))
    with pytest.raises(ValueError):
        source.items_for(4)


def test_replayed_items_are_fresh_copies(tmp_path: Path) -> None:
    write_day(tmp_path, "d.jsonl", SyntheticRegistry(seed=5, size=50).items_for(1))
    source = ReplaySource(tmp_path / "d.jsonl", start_date=date(2026, 1, 1))
    source.items_for(1)[0]["ENTP_NAME"] = "tampered"
    assert source.items_for(1)[0]["ENTP_NAME"] != "tampered"


def test_missing_replay_data_raises_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="No .jsonl files"):
        ReplaySource(tmp_path)
    with pytest.raises(FileNotFoundError, match="No replay data"):
        ReplaySource(tmp_path / "absent.jsonl")


def test_replay_is_a_snapshot_source(tmp_path: Path) -> None:
    write_day(tmp_path, "d.jsonl", [])
    assert isinstance(ReplaySource(tmp_path), SnapshotSource)
