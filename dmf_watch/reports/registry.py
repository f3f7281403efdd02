"""The registry as it stood on a date: every registration the accepted day listed, with its
fields as they were and today's watch flags, as xlsx (Korean headers) or CSV.

The rows are `marts.dmf_registry_versions` (dbt: the history of the accepted loads with the
watch flags); Python only picks the accepted day a date shows and the versions listed on it
(`valid_from <= day < valid_to`). A date without an accepted load (a rejected day, a weekend, a
day nobody loaded) shows the latest accepted day before it and says so. Shared by `dmf
registry`; the same warehouse gives the same cells on DuckDB and PostgreSQL (rows are ordered
here, by code point, not by an engine's collation).
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import Connection, table_exists
from dmf_watch.reports.layout import (
    Col,
    Formats,
    print_setup,
    quarantine,
    watch_matches_label,
    workbook,
    write_table,
)

#: What `dmf registry` may write, by the --out file's extension.
FORMATS = (".xlsx", ".csv")
MART = "dmf_registry_versions"
SHEET = "등록현황"

COLUMNS: tuple[Col, ...] = (
    # on every row, so a CSV (no title rows: a table a tool can read) still says which day it is
    Col("반영일", "shown_day", "date", 11),
    Col("관심목록", "watch_label", "text", 8),
    Col("관심 키워드", "watch_terms", "text", 18),
    Col("담당", "watch_owners", "text", 10),
    Col("일치 방식", "watch_matches_label", "text", 28),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 24),
    Col("신청인", "applicant", "text", 20),
    Col("사업자등록번호", "applicant_bizrno", "text", 13),
    Col("제조소명", "manufacturer", "text", 30),
    Col("제조소 소재지", "manufacture_place", "text", 36),
    Col("제조국", "countries", "text", 12),
    Col("등록일자", "permit_date", "text", 11),
    Col("고시구분", "notice_code", "text", 9),
    Col("번호상 접수일", "permit_date_prefix", "text", 11),
    Col("파생 표시", "permit_derivation", "text", 8),
    Col("이 내용의 시작일", "valid_from", "date", 11),
    Col("식별키", "dmf_key", "text", 20),
)

_FIELDS = (
    "dmf_key",
    "valid_from",
    "permit_no",
    "ingredient_name",
    "applicant",
    "applicant_bizrno",
    "manufacturer",
    "manufacture_place",
    "countries",
    "permit_date",
    "notice_code",
    "permit_date_prefix",
    "permit_derivation",
    "on_watchlist",
    "watch_terms",
    "watch_matches",
    "watch_owners",
)


@dataclass(frozen=True)
class RegistryDay:
    """The registry a date shows: the accepted day (`shown`) and its load, and its rows."""

    asked: date
    shown: date
    load_id: str
    asked_unaccepted: str | None  # why `asked` is not the day shown: "rejected" | "no_load" | None
    rows: list[dict[str, Any]]

    @property
    def watched(self) -> int:
        return sum(1 for row in self.rows if row["on_watchlist"])

    @property
    def title(self) -> str:
        return f"DMF 등록 현황 — {self.asked.isoformat()} 기준"

    @property
    def note(self) -> str:
        """Which accepted day the file shows, and why when it is not the date asked."""
        if self.asked_unaccepted is None:
            return f"{self.shown.isoformat()} 반영 적재({self.load_id})의 목록입니다."
        why = "의 적재는 반영되지 않았습니다(거부)" if self.asked_unaccepted == "rejected" else "에는 적재가 없습니다"
        return (
            f"{self.asked.isoformat()}{why}: 그 전 마지막 반영일 {self.shown.isoformat()}"
            f" 적재({self.load_id})의 목록을 보여 줍니다."
        )

    @property
    def counts(self) -> str:
        return f"등록 {len(self.rows):,}건 (관심목록 해당 {self.watched:,}건, 위에 먼저) · 관심 표시는 오늘의 관심목록 기준"


def default_path(settings: Settings, asked: date) -> Path:
    return settings.reports_dir / f"dmf_registry_{asked:%Y%m%d}.xlsx"


def check_out(path: Path) -> None:
    """An --out the command can write: .xlsx or .csv, in a folder that exists (or whose nearest
    existing parent can hold it) and takes a file, tried for real (root passes os.access).
    Refused in one line before the warehouse is read; nothing is created here."""
    if path.suffix.lower() not in FORMATS:
        found = f"'{path.suffix}'" if path.suffix else "no extension"
        raise DmfError(f"--out {path}: name a .xlsx or .csv file (the extension picks the format), not {found}.")
    if path.is_dir():
        raise DmfError(f"--out {path} is a directory; name a .xlsx or .csv file.")
    folder = path.parent.absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        if not folder.is_dir():
            raise NotADirectoryError(f"{folder} is not a directory")
        with tempfile.TemporaryFile(dir=folder, prefix=".dmf-write-check-"):
            pass
    except OSError as error:
        raise DmfError(
            f"--out {path}: cannot write in {folder} ({error.strerror or error}); choose another file."
        ) from None


def _fetch(con: Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _accepted_day(con: Connection, asked: date) -> tuple[date, str, str | None]:
    """The latest accepted day on or before `asked`, its load, and why `asked` is not it."""
    marts = con.schemas.marts
    days = _fetch(
        con,
        f"select as_of_date, load_id, verdict from {marts}.dmf_day_decisions where as_of_date <= ? "
        "order by as_of_date desc",
        [asked],
    )
    accepted = next((d for d in days if d["verdict"] == "accepted"), None)
    if accepted is None:
        first = con.execute(
            f"select min(as_of_date) from {marts}.dmf_day_decisions where verdict = 'accepted'"
        ).fetchone()[0]
        after = f"; the first accepted load is of {first.isoformat()}" if first else "; no load is accepted yet"
        raise DmfError(f"--as-of {asked.isoformat()} is before the first accepted load{after}.")
    why = None
    if accepted["as_of_date"] != asked:
        why = "rejected" if days[0]["as_of_date"] == asked else "no_load"
    return accepted["as_of_date"], accepted["load_id"], why


def _sort_key(row: dict[str, Any]) -> tuple:
    """Watched first, then by number (none last), ingredient and key: code-point order."""
    return (
        not row["on_watchlist"],
        row["permit_no"] is None,
        row["permit_no"] or "",
        row["ingredient_name"] or "",
        row["dmf_key"],
    )


def registry_as_of(settings: Settings, asked: date) -> RegistryDay:
    """The registry `asked` shows; a date before the first accepted load is a DmfError."""
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    with warehouse.connect(settings, read_only=True) as con:
        marts = con.schemas.marts
        if not table_exists(con, marts, MART, "dmf_day_decisions"):
            raise DmfError(f"{where} has no {MART} yet: run `dmf build` first.")
        shown, load_id, why = _accepted_day(con, asked)
        rows = _fetch(
            con,
            f"select {', '.join(_FIELDS)} from {marts}.{MART} "
            "where valid_from <= ? and (valid_to is null or valid_to > ?)",
            [shown, shown],
        )
    rows.sort(key=_sort_key)
    for row in rows:
        row["shown_day"] = shown
        row["watch_label"] = "관심" if row["on_watchlist"] else None
        row["watch_matches_label"] = watch_matches_label(row["watch_matches"])
    return RegistryDay(asked, shown, load_id, why, rows)


def write_registry(day: RegistryDay, path: Path) -> Path:
    """The file, xlsx or CSV by extension: a title, which accepted day it shows, the counts,
    then one row per registration (watched first)."""
    if path.suffix.lower() == ".csv":
        _write_csv(day, path)
    else:
        _write_xlsx(day, path)
    return path


def _write_xlsx(day: RegistryDay, path: Path) -> None:
    with workbook(path, day.asked, day.title) as wb:
        f = Formats(wb)
        ws = wb.add_worksheet(SHEET)
        ws.write_string(0, 0, day.title, f.title)
        ws.set_row(0, 24)
        ws.write_string(1, 0, day.note, f.warn if day.asked_unaccepted else f.subtitle)
        ws.write_string(2, 0, day.counts, f.subtitle)
        write_table(ws, f, 4, COLUMNS, day.rows, empty_text="등록 없음", source=f"marts.{MART}")
        print_setup(ws)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    return quarantine(value)


def _write_csv(day: RegistryDay, path: Path) -> None:
    """UTF-8 with a BOM, so Korean Excel opens it as UTF-8; the header and the same rows as the
    sheet, without its title rows (the day shown is a column). Written
    beside the target and renamed, so a failure leaves no half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8-sig", newline="") as handle:
            out = csv.writer(handle)
            out.writerow([col.header for col in COLUMNS])
            for row in day.rows:
                out.writerow([_csv_cell(row.get(col.key)) for col in COLUMNS])
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
