"""`dmf registry --as-of D`: the registry a past day listed, as the file a person attaches.

Each day of two real days and of the demo's five days: the file lists exactly that day's load,
every field, compared with the raw records of the load read through the staging model
(stg_mfds__items of that load id), never with the mart the command reads. A date without an
accepted load names the accepted day it shows; a date before the first load or in the future
is one line and no file. A registration withdrawn on day 2 keeps its watch flag and owner in the
registry of day 1."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import openpyxl
import pytest

from dmf_watch.commands.cli import main
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.reports.registry import COLUMNS
from support.cli import refused
from support.real_days import UNWATCHED_WITHDRAWN, WATCHED_WITHDRAWN
from support.worlds import DEMO_DAYS, DEMO_FIVE_DAYS, REAL_TWO_DAYS

pytestmark = pytest.mark.e2e

REAL_DAYS = (date(2026, 10, 8), date(2026, 10, 9))
FIELDS = (
    "permit_no",
    "ingredient_name",
    "applicant",
    "applicant_bizrno",
    "manufacturer",
    "manufacture_place",
    "countries",
    "permit_date",
    "notice_code",
)
HEADER = {col.key: col.header for col in COLUMNS}
HEADER_ROW = 5  # the title, which day it shows, the counts, a blank row, then the header


def _use(settings: Settings, monkeypatch) -> None:
    """The `dmf` entry point reads its warehouse from the environment, as cron runs it."""
    monkeypatch.setenv("DMF_DUCKDB_PATH", str(settings.duckdb_path))
    monkeypatch.setenv("DMF_REPORTS_DIR", str(settings.reports_dir))
    monkeypatch.setenv("DMF_STATE_DIR", str(settings.state_dir))
    monkeypatch.delenv("DMF_WAREHOUSE", raising=False)


def _dmf_registry(capsys, *argv: str) -> str:
    code = main(["registry", *argv])
    out, err = capsys.readouterr()
    assert code == 0, (out, err)
    return out


def _loaded(settings: Settings, day: date) -> Counter:
    """The registrations of the day's load as the staging model reads its raw records: one
    tuple of displayed fields per record (the accepted load of that date)."""
    with warehouse.connect(settings, read_only=True) as con:
        (load_id,) = con.execute(
            f"select load_id from {con.schemas.marts}.dmf_loads where as_of_date = ? and verdict = 'accepted'",
            [day],
        ).fetchone()
        rows = con.execute(
            f"select {', '.join(FIELDS)} from {con.schemas.staging}.stg_mfds__items where load_id = ?",
            [load_id],
        ).fetchall()
    assert rows, day
    return Counter(tuple(row) for row in rows)


def _sheet(path: Path) -> tuple[list, list[dict]]:
    """The title rows and the table of a registry workbook, by Korean header."""
    rows = list(openpyxl.load_workbook(path, read_only=True).active.iter_rows(values_only=True))
    header = rows[HEADER_ROW - 1]
    return rows[: HEADER_ROW - 1], [dict(zip(header, row)) for row in rows[HEADER_ROW:]]


def _listed(table: list[dict]) -> Counter:
    return Counter(tuple(row[HEADER[field]] for field in FIELDS) for row in table)


def _check_days(settings: Settings, days, capsys) -> None:
    for day in days:
        out = _dmf_registry(capsys, "--as-of", day.isoformat())
        path = settings.reports_dir / f"dmf_registry_{day:%Y%m%d}.xlsx"
        titles, table = _sheet(path)
        expected = _loaded(settings, day)
        assert _listed(table) == expected, day
        assert f"등록 {sum(expected.values()):,}건" in out and str(path) in out
        assert titles[0][0] == f"DMF 등록 현황 — {day.isoformat()} 기준"
        assert titles[1][0].startswith(f"{day.isoformat()} 반영 적재(")
        # watched first: no watched row after an unwatched one
        flags = [row[HEADER["watch_label"]] == "관심" for row in table]
        assert flags == sorted(flags, reverse=True) and any(flags), day


def test_registry_of_each_real_day_is_that_days_load(shelf, tmp_path, monkeypatch, capsys):
    with shelf.copied(REAL_TWO_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        _check_days(settings, REAL_DAYS, capsys)


def test_registry_of_each_demo_day_is_that_days_load(shelf, tmp_path, monkeypatch, capsys):
    with shelf.copied(DEMO_FIVE_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        _check_days(settings, DEMO_DAYS, capsys)


def test_csv_holds_the_same_cells_with_a_bom(shelf, tmp_path, monkeypatch, capsys):
    with shelf.copied(REAL_TWO_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        day = REAL_DAYS[0]
        csv_path, xlsx_path = tmp_path / "out" / "registry.csv", tmp_path / "out" / "registry.xlsx"
        _dmf_registry(capsys, "--as-of", day.isoformat(), "--out", str(csv_path))
        _dmf_registry(capsys, "--as-of", day.isoformat(), "--out", str(xlsx_path))
        assert csv_path.read_bytes().startswith(b"\xef\xbb\xbf")
        with csv_path.open(encoding="utf-8-sig", newline="") as handle:
            lines = list(csv.reader(handle))
        header = lines[0]  # a table a tool can read: no title rows
        table = [dict(zip(header, (cell or None for cell in line))) for line in lines[1:]]
        assert {row[HEADER["shown_day"]] for row in table} == {day.isoformat()}
        assert _listed(table) == _loaded(settings, day)
        _, sheet = _sheet(xlsx_path)
        as_text = [{k: (v.date().isoformat() if hasattr(v, "date") else v) for k, v in row.items()} for row in sheet]
        assert table == as_text


def test_a_day_without_an_accepted_load_names_the_day_it_shows(shelf, tmp_path, monkeypatch, capsys):
    with shelf.copied(REAL_TWO_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        later = REAL_DAYS[1] + timedelta(days=3)
        out = _dmf_registry(capsys, "--as-of", later.isoformat())
        shows = f"그 전 마지막 반영일 {REAL_DAYS[1].isoformat()}"
        assert shows in out
        titles, table = _sheet(settings.reports_dir / f"dmf_registry_{later:%Y%m%d}.xlsx")
        assert titles[0][0] == f"DMF 등록 현황 — {later.isoformat()} 기준"
        assert f"{later.isoformat()}에는 적재가 없습니다" in titles[1][0] and shows in titles[1][0]
        assert _listed(table) == _loaded(settings, REAL_DAYS[1])


def test_a_date_before_the_first_load_or_in_the_future_is_one_line_and_no_file(shelf, tmp_path, monkeypatch, capsys):
    with shelf.copied(REAL_TWO_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        before = REAL_DAYS[0] - timedelta(days=1)
        err = refused(capsys, ["registry", "--as-of", before.isoformat()])
        assert "before the first accepted load" in err and REAL_DAYS[0].isoformat() in err
        out = tmp_path / "asked.xlsx"
        refused(capsys, ["registry", "--as-of", before.isoformat(), "--out", str(out)])
        err = refused(capsys, ["registry", "--as-of", REAL_DAYS[0].isoformat(), "--out", str(tmp_path / "r.txt")])
        assert ".xlsx or .csv" in err
        future = subprocess.run(
            [sys.executable, "-m", "dmf_watch.commands.cli", "registry", "--as-of", "2999-01-01", "--out", str(out)],
            capture_output=True,
            text=True,
            env=os.environ.copy(),
            timeout=120,
        )
        assert future.returncode == 1, future
        assert future.stdout == "" and future.stderr.count("\n") == 1 and "after today" in future.stderr
        assert not out.exists() and not (tmp_path / "r.txt").exists()
        assert not settings.reports_dir.exists() or not list(settings.reports_dir.glob("dmf_registry_*"))


def test_a_watched_registration_withdrawn_on_day_two_is_flagged_with_its_owner_on_day_one(
    shelf, tmp_path, monkeypatch, capsys
):
    with shelf.copied(REAL_TWO_DAYS, tmp_path) as settings:
        _use(settings, monkeypatch)
        tables = {}
        for day in REAL_DAYS:
            _dmf_registry(capsys, "--as-of", day.isoformat())
            _, table = _sheet(settings.reports_dir / f"dmf_registry_{day:%Y%m%d}.xlsx")
            tables[day] = {row[HEADER["permit_no"]]: row for row in table}
        # seeds/watchlist.csv: 클로피도그렐 (base name), owner 김지현; support/real_days.py withdraws it on day 2
        withdrawn = tables[REAL_DAYS[0]][WATCHED_WITHDRAWN]
        assert withdrawn[HEADER["watch_label"]] == "관심"
        assert "클로피도그렐" in withdrawn[HEADER["watch_terms"]].split(", ")
        assert withdrawn[HEADER["watch_owners"]] == "김지현"
        assert WATCHED_WITHDRAWN not in tables[REAL_DAYS[1]]
        unwatched = tables[REAL_DAYS[0]][UNWATCHED_WITHDRAWN]
        assert unwatched[HEADER["watch_label"]] is None and unwatched[HEADER["watch_owners"]] is None
