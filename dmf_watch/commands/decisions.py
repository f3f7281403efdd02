"""`dmf accept-load` / `dmf reject-load`: a person's verdict on one day's load, recorded and applied.

The gates are strict on purpose, so a person who checked a rejected load against the MFDS site
may accept it; and a published day found bad later may be rejected. The decision is a row in
the append-only `mfds_raw.load_decisions` (who, when, why; the latest per load wins), which dbt
reads through `stg_mfds__load_decisions`: the warehouse, not this module, decides what is
published. This module checks that the decision applies, records it, rebuilds, and says which
published days changed (event counts per date before and after).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime

from dmf_watch.commands.build import build
from dmf_watch.commands.lock import check_lock_held
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.warehouse import table_exists

DECISIONS_TABLE = "load_decisions"
EVENT_TYPES = ("NEW", "CHANGED", "WITHDRAWN")

Echo = Callable[[str], None]
DayCounts = dict[date, dict[str, int]]


@dataclass(frozen=True)
class DayLoad:
    """The load a decision for a date is about: that date's latest load attempt."""

    load_id: str
    verdict: str
    fetch_status: str
    reason: str | None
    rejected_gates: str | None
    decision: str | None


def _marts_built(con: warehouse.Connection) -> bool:
    return table_exists(con, con.schemas.marts, "dmf_loads")


def day_load(con: warehouse.Connection, as_of: date) -> DayLoad | None:
    row = con.execute(
        "select load_id, verdict, fetch_status, reason, rejected_gates, decision "
        f"from {con.schemas.marts}.dmf_day_decisions where as_of_date = ?",
        [as_of],
    ).fetchone()
    return DayLoad(*row) if row else None


def refusal(decision: str, as_of: date, load: DayLoad | None, today: date | None = None) -> str | None:
    """Why the decision does not apply to the day's load, in one sentence; None when it does.
    A load dated after `today` (a wrong clock stored it) can always be rejected."""
    if load is None:
        return f"no load is recorded for {as_of}; there is nothing to decide on."
    if decision == "accept":
        if load.fetch_status != "complete" or (load.reason or "").startswith("incomplete"):
            return (
                f"load {load.load_id} of {as_of} is incomplete: an incomplete load cannot be accepted, "
                "it is partial; the next complete load is compared with the last accepted one "
                "(a past day can be loaded again only from a dump: `dmf backfill`)."
            )
        if load.verdict == "accepted":
            return f"load {load.load_id} of {as_of} is already published; nothing to accept."
        if not load.rejected_gates and load.decision != "reject":
            return (
                f"load {load.load_id} of {as_of} was not rejected by a gate ({load.reason}); "
                "only a gate's rejection can be overruled."
            )
        return None
    future = today is not None and as_of > today
    if load.decision == "reject":
        return f"load {load.load_id} of {as_of} is already rejected by a person; nothing to reject."
    if load.verdict != "accepted" and not future:
        return f"load {load.load_id} of {as_of} is not published ({load.reason}); nothing to reject."
    return None


def published_counts(con: warehouse.Connection) -> DayCounts:
    """Events per type per published date, as `marts.dmf_events` holds them now."""
    counts: DayCounts = {}
    for as_of, event_type, n in con.execute(
        f"select as_of_date, event_type, count(*) from {con.schemas.marts}.dmf_events group by 1, 2"
    ).fetchall():
        counts.setdefault(as_of, {})[event_type] = n
    return counts


def _counts_text(counts: dict[str, int] | None) -> str:
    if not counts:
        return "nothing"
    return ", ".join(f"{counts.get(t, 0)} {t}" for t in EVENT_TYPES)


def changed_days(before: DayCounts, after: DayCounts) -> list[str]:
    """One line per date whose published events changed: counts by type before → after."""
    lines = []
    for as_of in sorted(set(before) | set(after)):
        if before.get(as_of) != after.get(as_of):
            lines.append(f"{as_of}  {_counts_text(before.get(as_of))} → {_counts_text(after.get(as_of))}")
    return lines


def decide_load(
    settings: Settings, as_of: date, decision: str, decided_by: str, reason: str, *, echo: Echo = print
) -> int:
    """Checks, records and applies a person's decision; returns the exit code of the command."""
    if decision not in ("accept", "reject"):
        raise ConfigError(f"unknown decision {decision!r}; use accept or reject.")
    if not decided_by.strip() or not reason.strip():
        raise ConfigError("a decision needs who decides (--by NAME) and why (--reason TEXT).")
    if not warehouse.exists(settings):
        raise DmfError(f"the warehouse {warehouse.describe(settings)} does not exist; run `dmf run` first.")
    with warehouse.connect(settings) as con:
        if not _marts_built(con):
            raise DmfError("the warehouse has not been built; run `dmf build` first.")
        load = day_load(con, as_of)
        problem = refusal(decision, as_of, load, today_in_seoul())
        if problem:
            raise DmfError(problem)
        assert load is not None
        before = published_counts(con)
        check_lock_held("recording the decision")
        table = f"{con.schemas.raw}.{DECISIONS_TABLE}"
        con.execute(f"alter table {table} add column if not exists decision_seq bigint")
        ((latest,),) = con.execute(f"select max(decision_seq) from {table}").fetchall()
        con.execute(
            f"insert into {table} (load_id, as_of_date, decision, decided_by, reason, decided_at, decision_seq) "
            "values (?, ?, ?, ?, ?, ?, ?)",
            [load.load_id, as_of, decision, decided_by.strip(), reason.strip(), datetime.now(UTC), (latest or 0) + 1],
        )
    verb = "accepted" if decision == "accept" else "rejected"
    echo(f"{as_of}  load {load.load_id} {verb} by {decided_by.strip()}: {reason.strip()}")

    outcome = build(settings)
    echo(f"{as_of}  build   {outcome.summary()}")
    if not outcome.success and not outcome.gate_fired:
        raise DmfError(f"the decision is recorded but dbt build failed: {'; '.join(outcome.failures[:3])}.")
    with warehouse.connect(settings, read_only=True) as con:
        after = published_counts(con)
    lines = changed_days(before, after)
    for line in lines or ["no published day changed"]:
        echo(f"published  {line}")
    if outcome.success:
        # a report that still said what the decision changed would contradict the day's events
        from dmf_watch.reports.daily_report import render_daily

        for day in sorted({as_of, *(date.fromisoformat(line.split()[0]) for line in lines)}):
            echo(f"{day}  report  {render_daily(settings, day)}")
    return 0 if outcome.success else 2
