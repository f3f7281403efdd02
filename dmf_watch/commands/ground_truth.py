"""Compares the events the pipeline published with what the simulator says it changed.

The simulator keeps its own ground truth per day (`truth_for(day)`). An event is matched on its
type and the registration's number, or, for a registration without one, on its fallback
identity (ingredient, BIZRNO, permit date); a CHANGED event must also name the same fields.
When a day was rejected, the next accepted day is compared with the last accepted one, so the
truth of the days in between is composed record by record. A registration that came back is
expected as REINSTATED when its absence is within the pipeline's window (the dbt var
`reinstatement_window_days`), else as NEW.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import yaml

from dmf_watch.core import warehouse
from dmf_watch.core.config import PROJECT_DIR, Settings

EVENT_TYPES = ("NEW", "REINSTATED", "CHANGED", "WITHDRAWN")


def reinstatement_window_days(project_dir: Path = PROJECT_DIR) -> int:
    """The dbt var the pipeline uses, read from its one home (dbt_project.yml)."""
    project = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8"))
    return int(project["vars"]["reinstatement_window_days"])


def _clean(value: object) -> str | None:
    if value is None:
        return None
    text = re.sub(r"\s+", " ", str(value).replace("\r", "").replace("\n", "")).strip()
    return text or None


def _identity(event_type: str, permit_no, ingredient, bizrno, permit_date) -> tuple:
    number = _clean(permit_no)
    if number:
        return (event_type, "P", number.upper())
    return (event_type, "F", _clean(ingredient), _clean(bizrno), str(permit_date) if permit_date else None)


@dataclass
class DayComparison:
    as_of: date
    expected: Counter = field(default_factory=Counter)
    published: Counter = field(default_factory=Counter)
    missing: list[tuple] = field(default_factory=list)
    extra: list[tuple] = field(default_factory=list)
    wrong_fields: list[tuple] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return not (self.missing or self.extra or self.wrong_fields)


def composed_truth(source, since: date, until: date) -> list[dict]:
    """What changed between the registry of `since` and that of `until`, one entry per record.

    A record added (or back) and then changed is NEW (or REINSTATED); added and then withdrawn
    is nothing; withdrawn and back is nothing; changed and then withdrawn is WITHDRAWN; changed
    twice is CHANGED with both days' fields.
    """
    by_record: dict[object, dict] = {}
    for day in range(source.day_of(since) + 1, source.day_of(until) + 1):
        for entry in source.truth_for(day):
            if entry["event_type"] not in EVENT_TYPES:
                continue
            earlier = by_record.get(entry["record_id"])
            if earlier is None:
                by_record[entry["record_id"]] = dict(entry)
            elif earlier["event_type"] in ("NEW", "REINSTATED") and entry["event_type"] == "WITHDRAWN":
                del by_record[entry["record_id"]]
            elif earlier["event_type"] == "WITHDRAWN" and entry["event_type"] == "REINSTATED":
                del by_record[entry["record_id"]]
            elif earlier["event_type"] in ("NEW", "REINSTATED"):
                by_record[entry["record_id"]] = {
                    **entry,
                    "event_type": earlier["event_type"],
                    "fields": [],
                    "absent_days": earlier.get("absent_days"),
                }
            elif entry["event_type"] == "CHANGED":
                fields = sorted(set(earlier["fields"]) | set(entry["fields"]))
                by_record[entry["record_id"]] = {**entry, "fields": fields}
            else:
                by_record[entry["record_id"]] = dict(entry)
    return list(by_record.values())


def _day_load(con: warehouse.Connection, as_of: date) -> tuple[str, bool, date | None] | None:
    return con.execute(
        "select verdict, is_baseline, previous_accepted_as_of "
        f"from {con.schemas.marts}.dmf_day_decisions where as_of_date = ?",
        [as_of],
    ).fetchone()


def _expected_type(entry: dict, window_days: int) -> str:
    if entry["event_type"] == "REINSTATED" and entry["absent_days"] > window_days:
        return "NEW"
    return entry["event_type"]


def compare_day(settings: Settings, source, as_of: date, window_days: int | None = None) -> DayComparison:
    """The day's published events against the simulator's truth since the last accepted day."""
    window = reinstatement_window_days() if window_days is None else window_days
    with warehouse.connect(settings) as con:
        load = _day_load(con, as_of)
    if load is None or load[0] != "accepted" or load[1]:
        truth = []  # no load, a rejected load or the baseline: nothing may be published
    else:
        truth = [{**t, "event_type": _expected_type(t, window)} for t in composed_truth(source, load[2], as_of)]
    expected = {
        _identity(
            t["event_type"],
            t.get("permit_no"),
            t.get("ingredient_name"),
            t.get("applicant_bizrno"),
            t.get("permit_date"),
        ): frozenset(t.get("fields") or ()) if t["event_type"] == "CHANGED" else frozenset()
        for t in truth
    }
    with warehouse.connect(settings) as con:
        rows = con.execute(
            "select event_type, permit_no, ingredient_name, applicant_bizrno, permit_date, changed_fields "
            f"from {con.schemas.marts}.dmf_events where as_of_date = ?",
            [as_of],
        ).fetchall()
    published = {
        _identity(event_type, permit_no, ingredient, bizrno, permit_date): frozenset((changed or "").split(",")) - {""}
        for event_type, permit_no, ingredient, bizrno, permit_date, changed in rows
    }
    day = DayComparison(as_of)
    day.expected = Counter(key[0] for key in expected)
    day.published = Counter(key[0] for key in published)
    day.missing = sorted(set(expected) - set(published), key=str)
    day.extra = sorted(set(published) - set(expected), key=str)
    day.wrong_fields = sorted(
        (key, sorted(expected[key]), sorted(published[key]))
        for key in set(expected) & set(published)
        if expected[key] != published[key]
    )
    return day


def compare_days(settings: Settings, source, first_day: date, days: int) -> list[DayComparison]:
    return [compare_day(settings, source, first_day + timedelta(days=n)) for n in range(days)]


def compare_dates(settings: Settings, source, dates: list[date]) -> list[DayComparison]:
    """Like compare_days for loads far apart: only the given as-of dates."""
    return [compare_day(settings, source, as_of) for as_of in dates]


def table(comparisons: list[DayComparison]) -> str:
    """A per-day table a person can read: expected vs published counts per event type."""
    header = f"{'date':<11} " + " ".join(f"{t:>15}" for t in EVENT_TYPES) + "  missing  extra  fields  result"
    lines = [header, "-" * len(header)]
    for day in comparisons:
        cells = " ".join(f"{day.published[t]:>7} / {day.expected[t]:<5}" for t in EVENT_TYPES)
        lines.append(
            f"{day.as_of.isoformat():<11} {cells}  {len(day.missing):>7}  {len(day.extra):>5}  "
            f"{len(day.wrong_fields):>6}  {'match' if day.matches else 'MISMATCH'}"
        )
    lines.append("(each cell: published / simulator ground truth)")
    return "\n".join(lines)
