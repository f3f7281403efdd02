"""What changed between two dates: the net change per registration over a span, as xlsx or CSV.

The SQL lives in the dbt project: `marts.dmf_registration_span_changes` holds the net change
between every two states of a registration (its kind, severity and reason from today's rules,
its watch flag and owners) and `marts.dmf_registration_version_changes` every field that differs
between two of its versions, classified as the daily diff classifies it. This module only
resolves the two dates to accepted days, picks the pair valid on them
(valid_from <= day < valid_to) and the filters the command was given, and writes the rows.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, check_as_of
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import Connection, table_exists
from dmf_watch.reports.actions import ACTION_SEVERITIES, describe_change
from dmf_watch.reports.layout import (
    CHANGE_KIND_LABEL,
    FIELD_LABEL,
    Col,
    Formats,
    print_setup,
    quarantine,
    workbook,
    write_sheet_title,
    write_table,
)

#: The net change over a span, in Korean (dmf_registration_span_changes.net_change).
NET_CHANGE_LABEL = {
    "NEW": "신규",
    "REINSTATED": "재등장",
    "WITHDRAWN": "취하",
    "CHANGED": "변경",
    "CHANGED_BACK": "변경 후 원복",
    "WITHDRAWN_AND_BACK": "취하 후 재등장(내용 같음)",
    "APPEARED_AND_WITHDRAWN": "기간 중 신규 후 취하",
    "REINSTATED_AND_WITHDRAWN": "기간 중 재등장 후 다시 취하",
}
WHAT_HAPPENED = {
    "NEW": "기간 중 신규 등록",
    "REINSTATED": "기간 중 목록에 다시 나타남",
    "WITHDRAWN": "기간 중 등록 취하(목록에서 사라짐)",
    "CHANGED_BACK": "기간 중 바뀌었다가 시작일과 같은 내용으로 되돌아옴",
    "WITHDRAWN_AND_BACK": "기간 중 목록에서 사라졌다가 같은 내용으로 다시 나타남",
    "APPEARED_AND_WITHDRAWN": "기간 중 새로 나타났다가 종료일에는 목록에 없음",
    "REINSTATED_AND_WITHDRAWN": "기간 중 다시 나타났다가 종료일에는 다시 목록에 없음",
}
WHAT_TO_CHECK = {
    "WITHDRAWN": "공급처에 등록 취하 여부와 공급 지속 가능성을 확인",
    "APPEARED_AND_WITHDRAWN": "기간 중 나타났다 사라진 등록: 공급처 후보였는지 확인",
    "REINSTATED_AND_WITHDRAWN": "공급처에 등록 상태를 확인",
    "NEW": "공급처 후보로 검토",
    "REINSTATED": "공급 재개 여부와 이력이 이어지는지 확인",
    "WITHDRAWN_AND_BACK": "기간 중 취하 이력이 있음: 공급처에 사유 확인",
    "CHANGED_BACK": "기간 중 변경 이력(dmf history)을 확인",
    "CHANGED": "변경 신고 필요 여부 검토",
}


@dataclass(frozen=True)
class Span:
    since: date  # as asked
    until: date | None
    since_day: date  # the accepted day at or before `since`
    until_day: date  # the accepted day at or before `until` (or the latest)

    @property
    def title(self) -> str:
        asked = f"{self.since.isoformat()} ~ {self.until.isoformat() if self.until else '최신'}"
        return f"등록 변경 내역 {asked} (비교한 반영일: {self.since_day.isoformat()} → {self.until_day.isoformat()})"


@dataclass(frozen=True)
class Filters:
    ingredient: str | None = None
    applicant: str | None = None
    manufacturer: str | None = None
    watchlist: bool = False


def _fetch(con: Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def resolve_span(con: Connection, since: date, until: date | None) -> Span:
    """The accepted days the span compares; a date before the first accepted load, an until
    before since, or a future date is a DmfError (one line)."""
    for option, asked in (("--since", since), ("--until", until)):
        if asked is not None:
            check_as_of(asked, option=option)
    if until is not None and until < since:
        raise DmfError(
            f"--until {until.isoformat()} is before --since {since.isoformat()}; give the earlier date first."
        )
    loads = f"{con.schemas.marts}.dmf_loads"
    first, latest = con.execute(
        f"select min(as_of_date), max(as_of_date) from {loads} where verdict = 'accepted'"
    ).fetchone()
    if first is None:
        raise DmfError("no accepted load in the warehouse yet: run `dmf run` first.")
    if since < first:
        raise DmfError(
            f"--since {since.isoformat()} is before the first accepted load ({first.isoformat()}); "
            "nothing is known about the registry before it."
        )

    def day_at(asked: date) -> date:
        return con.execute(
            f"select max(as_of_date) from {loads} where verdict = 'accepted' and as_of_date <= ?", [asked]
        ).fetchone()[0]

    return Span(since, until, day_at(since), day_at(until) if until else latest)


def _conditions(span: Span, filters: Filters, pair: str = "") -> tuple[list[str], list[Any]]:
    """The where clauses (and their parameters) that pick, from dmf_registration_span_changes
    (aliased `pair` when given), the pair valid on the span's two days and the filters' rows."""
    p = f"{pair}." if pair else ""

    def valid(side: str) -> str:
        return (
            f"({p}{side}_valid_from is null or {p}{side}_valid_from <= ?)"
            f" and ({p}{side}_valid_to is null or ? < {p}{side}_valid_to)"
        )

    def contains(column: str) -> str:
        return (
            f"(position(lower(?) in lower(coalesce({p}from_{column}, ''))) > 0"
            f" or position(lower(?) in lower(coalesce({p}to_{column}, ''))) > 0)"
        )

    where = [valid("from"), valid("to")]
    params: list[Any] = [span.since_day, span.since_day, span.until_day, span.until_day]
    if filters.ingredient:
        where.append(contains("ingredient_name"))
        params += [filters.ingredient.strip()] * 2
    if filters.applicant:
        text, bizrno = filters.applicant.strip(), filters.applicant.strip().replace("-", "")
        where.append(f"({contains('applicant')} or {p}from_applicant_bizrno = ? or {p}to_applicant_bizrno = ?)")
        params += [text, text, bizrno, bizrno]
    if filters.manufacturer:
        where.append(contains("manufacturer"))
        params += [filters.manufacturer.strip()] * 2
    if filters.watchlist:
        where.append(f"{p}on_watchlist")
    return where, params


def span_rows(con: Connection, span: Span, filters: Filters) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(one row per registration that changed over the span, one row per changed field)."""
    marts = con.schemas.marts
    where, params = _conditions(span, filters)
    rows = _fetch(
        con,
        f"""
        select * from {marts}.dmf_registration_span_changes
        where {" and ".join(where)}
        order by severity_rank, rule_priority, coalesce(to_ingredient_name, from_ingredient_name), dmf_key
    """,
        params,
    )
    pair_where, pair_params = _conditions(span, filters, "pair")
    fields = _fetch(
        con,
        f"""
        select pair.dmf_key, field.field_name, field.before_value, field.after_value, field.change_kind,
               field.change_detail, field.removed_entries, field.added_entries, field.severity,
               field.severity_rank, field.rationale_ko
        from {marts}.dmf_registration_span_changes as pair
        inner join {marts}.dmf_registration_version_changes as field
            on pair.dmf_key = field.dmf_key
            and pair.from_version_no = field.from_version_no
            and pair.to_version_no = field.to_version_no
        where pair.net_change = 'CHANGED' and {" and ".join(pair_where)}
        order by field.dmf_key, field.severity_rank, field.field_name
    """,
        pair_params,
    )
    by_key: dict[str, list[dict[str, Any]]] = {}
    for field in fields:
        by_key.setdefault(field["dmf_key"], []).append(field)
    for row in rows:
        row["fields"] = by_key.get(row["dmf_key"], [])
        row["net_change_ko"] = NET_CHANGE_LABEL.get(row["net_change"], row["net_change"])
        row["permit_no"] = row["to_permit_no"] or row["from_permit_no"]
        row["ingredient_name"] = row["to_ingredient_name"] or row["from_ingredient_name"]
        row["applicant"] = row["to_applicant"] or row["from_applicant"]
        row["manufacturer"] = row["to_manufacturer"] or row["from_manufacturer"]
        row["watch"] = "예" if row["on_watchlist"] else "아니오"
        row["renumbered"] = (
            f"{row['from_permit_no']} → {row['to_permit_no']}"
            if row["from_permit_no"] and row["to_permit_no"] and row["from_permit_no"] != row["to_permit_no"]
            else None
        )
        if row["net_change"] == "CHANGED":
            row["what"] = "; ".join(
                describe_change(
                    f["field_name"],
                    f["change_detail"],
                    f["before_value"],
                    f["after_value"],
                    f["removed_entries"],
                    f["added_entries"],
                )
                for f in row["fields"]
            )
        else:
            row["what"] = WHAT_HAPPENED[row["net_change"]]
        row["check"] = WHAT_TO_CHECK.get(row["net_change"])
    for field in fields:
        field["field_ko"] = FIELD_LABEL.get(field["field_name"], field["field_name"])
        field["change_kind_ko"] = CHANGE_KIND_LABEL.get(field["change_kind"], field["change_kind"])
    return rows, fields


def is_action(row: Mapping[str, Any]) -> bool:
    """What to act on, as the daily action sheet: CRITICAL and HIGH, and every watchlist row
    that is not only cosmetic."""
    return row["severity"] in ACTION_SEVERITIES or (row["on_watchlist"] and row["severity"] != "COSMETIC")


ACTION_COLS = (
    Col("심각도", "severity", "severity", 8),
    Col("관심", "watch", "text", 6),
    Col("담당", "watch_owners", "text", 12),
    Col("성분명", "ingredient_name", "wrap", 24),
    Col("신청인", "applicant", "wrap", 20),
    Col("등록번호", "permit_no", "text", 22),
    Col("기간 중 변화", "net_change_ko", "text", 16),
    Col("무엇이 바뀌었나", "what", "wrap", 50),
    Col("확인할 것", "check", "wrap", 30),
    Col("사유", "rationale_ko", "wrap", 40),
)
ALL_COLS = (
    Col("심각도", "severity", "severity", 8),
    Col("기간 중 변화", "net_change_ko", "text", 16),
    Col("관심", "watch", "text", 6),
    Col("관심목록 용어", "watch_terms", "wrap", 20),
    Col("담당", "watch_owners", "text", 12),
    Col("성분명", "ingredient_name", "wrap", 24),
    Col("신청인", "applicant", "wrap", 20),
    Col("사업자등록번호", "to_applicant_bizrno", "text", 14),
    Col("제조소명", "manufacturer", "wrap", 30),
    Col("시작일 등록번호", "from_permit_no", "text", 22),
    Col("종료일 등록번호", "to_permit_no", "text", 22),
    Col("변경 항목 수", "changed_fields", "int", 8),
    Col("무엇이 바뀌었나", "what", "wrap", 50),
    Col("사유", "rationale_ko", "wrap", 40),
    Col("dmf_key", "dmf_key", "text", 18),
)
FIELD_COLS = (
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "wrap", 24),
    Col("항목", "field_ko", "text", 12),
    Col("시작일 값", "before_value", "wrap", 40),
    Col("종료일 값", "after_value", "wrap", 40),
    Col("변경 종류", "change_kind_ko", "text", 10),
    Col("심각도", "severity", "severity", 8),
    Col("사유", "rationale_ko", "wrap", 40),
    Col("dmf_key", "dmf_key", "text", 18),
)
CSV_COLUMNS = (
    ("기간 시작(요청)", "since"),
    ("기간 끝(요청)", "until"),
    ("비교 시작 반영일", "since_day"),
    ("비교 끝 반영일", "until_day"),
    ("dmf_key", "dmf_key"),
    ("시작일 등록번호", "from_permit_no"),
    ("종료일 등록번호", "to_permit_no"),
    ("성분명", "ingredient_name"),
    ("신청인", "applicant"),
    ("기간 중 변화", "net_change"),
    ("심각도", "severity"),
    ("관심", "watch"),
    ("담당", "watch_owners"),
    ("항목", "field_name"),
    ("시작일 값", "before_value"),
    ("종료일 값", "after_value"),
    ("변경 종류", "change_kind"),
    ("변경 내용", "change_detail"),
    ("사유", "rationale_ko"),
)


def _field_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        for field in row["fields"]:
            out.append({**field, "permit_no": row["permit_no"], "ingredient_name": row["ingredient_name"]})
    return out


def write_xlsx(path: Path, span: Span, rows: Sequence[Mapping[str, Any]]) -> None:
    with workbook(path, span.until_day, span.title) as wb:
        f = Formats(wb)
        sheets = (
            ("조치항목", "조치할 것 (긴급·높음, 관심목록)", ACTION_COLS, [r for r in rows if is_action(r)]),
            ("전체 변경", "등록별 순 변화 (한 등록 한 줄)", ALL_COLS, list(rows)),
            ("항목별 변경", "항목별 시작일 값과 종료일 값", FIELD_COLS, _field_rows(rows)),
        )
        for name, note, cols, sheet_rows in sheets:
            ws = wb.add_worksheet(name)
            top = write_sheet_title(ws, f, span.title, note)
            write_table(ws, f, top, cols, sheet_rows, source="dmf_registration_span_changes")
            print_setup(ws)


def write_csv(path: Path, span: Span, rows: Sequence[Mapping[str, Any]]) -> None:
    """One row per registration-field (a registration without field rows: one row, field empty),
    UTF-8 with a BOM so Excel reads the Korean; every value passes the report's quarantine (a
    registry value that starts like a formula is escaped, as in the workbook)."""
    tmp = path.with_name(path.name + ".tmp")
    dates = {
        "since": span.since.isoformat(),
        "until": span.until.isoformat() if span.until else "",
        "since_day": span.since_day.isoformat(),
        "until_day": span.until_day.isoformat(),
    }
    try:
        with open(tmp, "w", encoding="utf-8-sig", newline="") as out:
            writer = csv.writer(out)
            writer.writerow([header for header, _ in CSV_COLUMNS])
            for row in rows:
                for field in row["fields"] or [{}]:
                    merged = {
                        **dates,
                        **row,
                        **{k: v for k, v in field.items() if k not in ("severity", "rationale_ko")},
                    }
                    if field:
                        merged["severity"], merged["rationale_ko"] = field["severity"], field["rationale_ko"]
                    writer.writerow([quarantine(merged.get(key)) for _, key in CSV_COLUMNS])
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def write_changes(
    settings: Settings, since: date, until: date | None, out: Path | None, filters: Filters
) -> tuple[Path, Span, int]:
    """Resolve, pick, write; returns (file, span, rows). Nothing is written when it refuses."""
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.marts, "dmf_registration_span_changes"):
            raise DmfError(f"{where} has no span changes yet: run `dmf build` first.")
        span = resolve_span(con, since, until)
        rows, _ = span_rows(con, span, filters)
    path = out or settings.reports_dir / f"dmf_changes_{span.since_day:%Y%m%d}_{span.until_day:%Y%m%d}.xlsx"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".csv":
            write_csv(path, span, rows)
        else:
            write_xlsx(path, span, rows)
    except OSError as error:
        raise DmfError(f"cannot write {path}: {error.strerror or error}; choose another --out.") from None
    return path, span, len(rows)


__all__ = ["Filters", "Span", "NET_CHANGE_LABEL", "write_changes", "span_rows", "resolve_span"]
