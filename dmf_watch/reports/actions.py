"""The day's action list: what an RA person must look at first, each with one Korean line.

CRITICAL and HIGH events and every watchlist event of an accepted day, ordered by severity
(then the severity rule, ingredient and key, so the list is stable), each described from the
marts alone: a withdrawal says the registration left the list, a change quotes before → after
per field, and the reason is the winning severity rule's `rationale_ko`. A cosmetic change is
not an action (it stays on the 변경 sheet and in the counts). Shared by the report and the
delivered messages (`dmf_watch/notify/`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from dmf_watch.core.warehouse import Connection
from dmf_watch.reports.layout import EVENT_LABEL, FIELD_LABEL, SEVERITY_LABEL

ACTION_SEVERITIES = ("CRITICAL", "HIGH")
MAX_VALUE_CHARS = 80

WHAT_HAPPENED = {
    "WITHDRAWN": "등록 취하(목록에서 사라짐)",
    "NEW": "신규 등록",
    "REINSTATED": "재등록(목록에 다시 나타남)",
}
CHANGE_VERB = {
    "added": "추가",
    "removed": "삭제",
    "replaced": "변경",
    "assigned": "부여",
    "renumbered": "변경",
    "modified": "변경",
    "cosmetic": "표기 변경",
    "reordered": "순서 변경",
}
ENTRY_SEPARATOR = " / "  # entries themselves hold commas ("Co., Ltd.")


@dataclass(frozen=True)
class Action:
    severity: str
    event_type: str
    on_watchlist: bool
    dmf_key: str
    permit_no: str | None
    ingredient_name: str | None
    applicant: str | None
    what: str  # Korean, one line: what happened
    reason: str  # Korean, the winning severity rule's rationale_ko: why it matters
    owners: tuple[str, ...] = ()  # owners of the watch terms the registration matched

    @property
    def line(self) -> str:
        """`[긴급·관심] 성분 · 신청인 · 등록번호 — 등록 취하(목록에서 사라짐) (사유: …)`"""
        tag = SEVERITY_LABEL.get(self.severity, self.severity) + ("·관심" if self.on_watchlist else "")
        who = " · ".join(v for v in (self.ingredient_name, self.applicant, self.permit_no or "(등록번호 없음)") if v)
        return f"[{tag}] {who} — {self.what} (사유: {self.reason})"

    def owned_by(self, owner: str) -> bool:
        return owner in self.owners


def _short(value: Any) -> str:
    text = " ".join(str(value).split()) if value not in (None, "") else "(없음)"
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def describe_change(
    field_name: str,
    detail: str | None,
    before: Any,
    after: Any,
    removed: list[str] | None = None,
    added: list[str] | None = None,
) -> str:
    """'제조소명 변경: A → B' (the values are quoted as they are, never computed). For a list
    field the entries SQL found removed/added are named in full instead of the whole values:
    '제조소명 삭제: Devika Active Pharma Sciences Ltd'."""
    name = FIELD_LABEL.get(field_name, field_name)
    removed, added = list(removed or []), list(added or [])
    if detail == "reordered":
        return f"{name} 순서 변경: {_short(before)} → {_short(after)}"
    if removed and added:
        if len(removed) == 1 and len(added) == 1:
            return f"{name} 변경: {removed[0]} → {added[0]}"
        return f"{name} 변경 — 삭제: {ENTRY_SEPARATOR.join(removed)}; 추가: {ENTRY_SEPARATOR.join(added)}"
    if removed:
        return f"{name} 삭제: {ENTRY_SEPARATOR.join(removed)}"
    if added:
        return f"{name} 추가: {ENTRY_SEPARATOR.join(added)}"
    verb = CHANGE_VERB.get(detail or "", "변경")
    return f"{name} {verb}: {_short(before)} → {_short(after)}"


def owners_of(watch_owners: str | None) -> tuple[str, ...]:
    """The owners in a mart's comma-joined `watch_owners`."""
    return tuple(o.strip() for o in (watch_owners or "").split(",") if o.strip())


def _fetch(con: Connection, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def day_actions(con: Connection, as_of: date) -> list[Action]:
    """The action list of `as_of`; empty when the day's load was not accepted (nothing published)."""
    verdict = con.execute(
        f"select verdict from {con.schemas.marts}.dmf_daily_summary where as_of_date = ?", [as_of]
    ).fetchone()
    if not verdict or verdict[0] != "accepted":
        return []
    events = _fetch(
        con,
        f"""
        select dmf_key, permit_no, event_type, severity, on_watchlist, ingredient_name, applicant,
               rationale_ko, watch_owners
        from {con.schemas.marts}.dmf_events
        where as_of_date = ? and (severity in ('CRITICAL', 'HIGH') or on_watchlist)
            and severity <> 'COSMETIC'
        order by severity_rank, rule_priority, ingredient_name nulls last, dmf_key
    """,
        [as_of],
    )
    changes = _fetch(
        con,
        f"""
        select dmf_key, field_name, change_detail, before_value, after_value, removed_entries,
               added_entries
        from {con.schemas.marts}.dmf_event_field_changes
        where as_of_date = ?
        order by dmf_key, severity_rank, field_name
    """,
        [as_of],
    )
    by_key: dict[str, list[str]] = {}
    for change in changes:
        by_key.setdefault(change["dmf_key"], []).append(
            describe_change(
                change["field_name"],
                change["change_detail"],
                change["before_value"],
                change["after_value"],
                change["removed_entries"],
                change["added_entries"],
            )
        )
    out = []
    for event in events:
        kind = event["event_type"]
        if kind == "CHANGED":
            what = "; ".join(by_key.get(event["dmf_key"], [])) or "변경"
        else:
            what = WHAT_HAPPENED.get(kind, EVENT_LABEL.get(kind, kind))
        out.append(
            Action(
                event["severity"],
                kind,
                bool(event["on_watchlist"]),
                event["dmf_key"],
                event["permit_no"],
                event["ingredient_name"],
                event["applicant"],
                what,
                event["rationale_ko"] or "",
                owners_of(event["watch_owners"]),
            )
        )
    return out


def week_actions(con: Connection, first_day: date, last_day: date) -> list[tuple[date, Action]]:
    """The action lists of the accepted days from first_day to last_day, day by day."""
    days = con.execute(
        f"select as_of_date from {con.schemas.marts}.dmf_daily_summary where as_of_date between ? and ? order by 1",
        [first_day, last_day],
    ).fetchall()
    return [(day, action) for (day,) in days for action in day_actions(con, day)]
