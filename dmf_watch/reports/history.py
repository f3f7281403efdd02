"""One registration's timeline: when it was first seen and every event and field change since,
from `marts.dmf_registration_history` and the events marts only.

Shared by `dmf history` (printed) and the daily report (a sheet of timelines for the day's
watchlist registrations), so a person sees the same lines in both. A timeline can be cut at a
date (`until`), which is what keeps a re-rendered old report identical.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import Connection, table_exists
from dmf_watch.reports.actions import WHAT_HAPPENED, describe_change
from dmf_watch.reports.layout import EVENT_LABEL, SEVERITY_LABEL

MAX_MATCHES = 20


@dataclass(frozen=True)
class Entry:
    day: date
    kind: str  # FIRST_SEEN | NEW | CHANGED | WITHDRAWN | REINSTATED | …
    severity: str | None
    lines: tuple[str, ...]

    @property
    def label(self) -> str:
        if self.kind == "FIRST_SEEN":
            return "처음 확인"
        return EVENT_LABEL.get(self.kind, self.kind)


@dataclass(frozen=True)
class Timeline:
    dmf_key: str
    permit_no: str | None
    ingredient_name: str | None
    applicant: str | None
    current: dict[str, Any] | None  # the latest version's fields (None: not in the list now)
    entries: list[Entry] = field(default_factory=list)

    @property
    def title(self) -> str:
        return " · ".join(v for v in (self.ingredient_name, self.permit_no or "(등록번호 없음)", self.applicant) if v)


def _fetch(con: Connection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


# One "term (stage)" entry of a mart's comma-joined watch_matches.
WATCH_MATCH_ENTRY = re.compile(r"^(.+) \(([a-z_]+)\)$")


def watched_ingredient_terms(con: Connection) -> set[tuple[str, str]]:
    """The ingredient terms of the watchlist and the registrations each matches, as the build
    matched them: (dmf_key, term) for every "term (stage)" entry of the marts' watch_matches (the
    registry now, and every event, so a withdrawn registration keeps the terms that covered it).
    Applicant and manufacturer entries are left out: `--ingredient` asks about ingredients.
    The entries are split here rather than in SQL because splitting a string into rows and
    regular-expression groups are spelled differently on every engine."""
    marts = con.schemas.marts
    found = con.execute(
        f"""
        select dmf_key, watch_matches from {marts}.dmf_registrations where watch_matches is not null
        union
        select dmf_key, watch_matches from {marts}.dmf_events where watch_matches is not null
    """
    ).fetchall()
    terms = set()
    for dmf_key, watch_matches in found:
        for entry in watch_matches.split(", "):
            match = WATCH_MATCH_ENTRY.match(entry)
            if match and match[2] not in ("applicant", "manufacturer"):
                terms.add((dmf_key, match[1]))
    return terms


def find_keys(
    con: Connection,
    *,
    ingredient: str | None = None,
    permit_no: str | None = None,
    applicant: str | None = None,
) -> list[str]:
    """dmf_keys whose any version matches: a number exactly (or as a prefix), an ingredient or
    an applicant name as a case-insensitive substring, an applicant also by BIZRNO. An
    ingredient text also finds what the watchlist terms containing it match (any script: the
    English "Formoterol" finds the Korean names the term "Formoterol Fumarate" matched), so a
    person can look up a watch term in the watchlist's own words."""
    if permit_no:
        number = permit_no.strip()
        where, params = "permit_no = ? or substr(permit_no, 1, length(?)) = ?", [number, number, number]
    elif ingredient:
        text = ingredient.strip()
        watched = sorted({key for key, term in watched_ingredient_terms(con) if text.lower() in term.lower()})
        where, params = "position(lower(?) in lower(ingredient_name)) > 0", [text]
        if watched:
            where += f" or dmf_key in ({', '.join('?' for _ in watched)})"
            params += watched
    elif applicant:
        where, params = (
            "position(lower(?) in lower(applicant)) > 0 or applicant_bizrno = ?",
            [applicant.strip(), applicant.strip().replace("-", "")],
        )
    else:
        return []
    rows = con.execute(
        f"""
        select dmf_key, max(valid_from) as last_seen
        from {con.schemas.marts}.dmf_registration_history
        where {where}
        group by dmf_key
        order by last_seen desc, dmf_key
    """,
        params,
    ).fetchall()
    return [key for key, _ in rows]


def watch_terms_containing(con: Connection, text: str) -> list[str]:
    """The watchlist's ingredient terms that contain `text` (case-insensitive) and match a
    registration: what `dmf history --ingredient` names when a watch term widened its search."""
    wanted = text.strip().lower()
    return sorted({term for _, term in watched_ingredient_terms(con) if wanted in term.lower()})


def timeline(con: Connection, dmf_key: str, until: date | None = None) -> Timeline:
    """Every dated fact about one registration up to `until` (inclusive; None = everything)."""
    limit = until or date.max
    versions = _fetch(
        con,
        f"""
        select version_no, valid_from, valid_to, is_current, permit_no, ingredient_name, applicant,
               manufacturer, manufacture_place, countries
        from {con.schemas.marts}.dmf_registration_history
        where dmf_key = ? and valid_from <= ?
        order by version_no
    """,
        [dmf_key, limit],
    )
    events = _fetch(
        con,
        f"""
        select as_of_date, event_type, severity, permit_no, ingredient_name, applicant
        from {con.schemas.marts}.dmf_events
        where dmf_key = ? and as_of_date <= ?
        order by as_of_date, event_type
    """,
        [dmf_key, limit],
    )
    changes = _fetch(
        con,
        f"""
        select as_of_date, field_name, change_detail, before_value, after_value, removed_entries,
               added_entries, severity
        from {con.schemas.marts}.dmf_event_field_changes
        where dmf_key = ? and as_of_date <= ?
        order by as_of_date, severity_rank, field_name
    """,
        [dmf_key, limit],
    )
    entries: list[Entry] = []
    if versions and not any(e["event_type"] == "NEW" and e["as_of_date"] == versions[0]["valid_from"] for e in events):
        entries.append(
            Entry(
                versions[0]["valid_from"],
                "FIRST_SEEN",
                None,
                ("이 날 적재에 이미 있었음(기준 적재 또는 그 이전부터 등록)",),
            )
        )
    for event in events:
        day, kind = event["as_of_date"], event["event_type"]
        if kind == "CHANGED":
            lines = tuple(
                describe_change(
                    c["field_name"],
                    c["change_detail"],
                    c["before_value"],
                    c["after_value"],
                    c["removed_entries"],
                    c["added_entries"],
                )
                for c in changes
                if c["as_of_date"] == day
            ) or ("변경",)
        else:
            lines = (WHAT_HAPPENED.get(kind, kind),)
        entries.append(Entry(day, kind, event["severity"], lines))
    entries.sort(key=lambda e: (e.day, e.kind != "FIRST_SEEN"))
    latest = versions[-1] if versions else {}
    withdrawn_last = bool(events) and events[-1]["event_type"] == "WITHDRAWN"
    current = (
        None
        if (not versions or withdrawn_last or (latest.get("valid_to") is not None and latest["valid_to"] <= limit))
        else latest
    )
    source = latest or (events[-1] if events else {})
    return Timeline(
        dmf_key, source.get("permit_no"), source.get("ingredient_name"), source.get("applicant"), current, entries
    )


def format_timeline(t: Timeline) -> str:
    lines = [f"{t.title}  (dmf_key {t.dmf_key})"]
    if t.current:
        lines.append(
            f"  현재: 제조소 {t.current.get('manufacturer') or '-'} | 제조국 {t.current.get('countries') or '-'}"
        )
    else:
        lines.append("  현재: 목록에 없음")
    for entry in t.entries:
        severity = f" [{SEVERITY_LABEL.get(entry.severity, entry.severity)}]" if entry.severity else ""
        first, *rest = entry.lines
        lines.append(f"  {entry.day.isoformat()}  {entry.label}{severity}  {first}")
        lines += [f"  {'':10}  {'':{len(entry.label) + len(severity)}}  {line}" for line in rest]
    return "\n".join(lines)


def history_text(
    settings: Settings, *, ingredient: str | None = None, permit_no: str | None = None, applicant: str | None = None
) -> str:
    """What `dmf history` prints; a search that finds nothing is a DmfError (one line, exit 1)."""
    from dmf_watch.core.errors import DmfError

    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.marts, "dmf_registration_history"):
            raise DmfError(f"{where} is not built yet: run `dmf build` first.")
        keys = find_keys(con, ingredient=ingredient, permit_no=permit_no, applicant=applicant)
        if not keys:
            asked = permit_no or ingredient or applicant
            raise DmfError(
                f"no registration matches {asked!r}; try part of the name, or `dmf status` "
                "to see which days are loaded."
            )
        blocks = [format_timeline(timeline(con, key)) for key in keys[:MAX_MATCHES]]
        terms = watch_terms_containing(con, ingredient) if ingredient else []
    if terms:
        blocks.insert(0, "관심목록 용어 " + ", ".join(terms) + "에 해당하는 등록을 포함합니다.")
    if len(keys) > MAX_MATCHES:
        blocks.append(f"외 {len(keys) - MAX_MATCHES}건 — --permit-no 로 좁혀 보세요.")
    return "\n\n".join(blocks)
