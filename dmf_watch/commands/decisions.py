"""`dmf accept-load` / `dmf reject-load`: a person's verdict on one day's load, recorded and applied.

The gates are strict on purpose, so a person who checked a rejected load against the MFDS site
may accept it; and a published day found bad later may be rejected. The decision is a row in
the append-only `mfds_raw.load_decisions` (who, when, why; the latest per load wins), which dbt
reads through `stg_mfds__load_decisions`: the warehouse, not this module, decides what is
published. This module checks that the decision applies, records it, rebuilds, and says which
published days changed (event counts per date before and after).

When the marts cannot be built (the build fails on a load's records), the day's load is looked up
in the raw layer (`load_runs`, `rejected_load_signals`, `load_decisions`), so the load that breaks
the build can be set aside with `dmf reject-load` and the next build passes without it.

`dmf accept-load --list-size N` is the way through for a list the loader's plausibility cap
refused (MFDS merged a list and it tripled overnight): after checking the size on the MFDS site,
a person records it in `mfds_raw.list_size_decisions` (who, why, the size) and the next load
takes it as the last accepted list's size (pipelines/mfds/load.py: accepted_list_size).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime

from dmf_watch.commands.command import Command, add_as_of
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.lock import check_lock_held
from dmf_watch.core.warehouse import table_exists
from dmf_watch.pipelines.mfds.helpers import IMPLAUSIBLE_MARKER
from dmf_watch.pipelines.mfds.settings import LIST_SIZE_DECISIONS_TABLE, RetryPolicy
from dmf_watch.transform.build import build

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
    return table_exists(con, con.schemas.marts, "dmf_loads", "dmf_day_decisions")


def _attempt_order(con: warehouse.Connection) -> str:
    """The newest attempt first, in the warehouse's order (older warehouses lack attempt_seq)."""
    newest = "finished_at desc, load_id desc"
    if "attempt_seq" in warehouse.columns(con, con.schemas.raw, "load_runs"):
        return f"attempt_seq desc nulls last, {newest}"
    return newest


def raw_day_load(con: warehouse.Connection, as_of: date) -> DayLoad | None:
    """The date's load as the raw layer records it (its newest complete attempt, else its newest
    attempt), with the gate that rejected it and a person's latest decision: what the marts would
    say, for when the build that would have written them failed. Verdict `not built` when nothing
    rejected it."""
    raw = con.schemas.raw
    if not table_exists(con, raw, "load_runs"):
        return None
    row = con.execute(
        f"select load_id, fetch_status, reason from {raw}.load_runs where as_of_date = ? "
        f"order by case when fetch_status = 'complete' then 0 else 1 end, {_attempt_order(con)} limit 1",
        [as_of],
    ).fetchone()
    if row is None:
        return None
    load_id, fetch_status, reason = row
    gates = None
    if table_exists(con, raw, "rejected_load_signals"):
        found = con.execute(
            f"select distinct signal_id from {raw}.rejected_load_signals where load_id = ? order by signal_id",
            [load_id],
        ).fetchall()
        gates = ", ".join(name for (name,) in found) or None
    decision = None
    if table_exists(con, raw, DECISIONS_TABLE):
        order = (
            "decision_seq desc nulls last, " if "decision_seq" in warehouse.columns(con, raw, DECISIONS_TABLE) else ""
        )
        found = con.execute(
            f"select decision from {raw}.{DECISIONS_TABLE} where load_id = ? order by {order}decided_at desc limit 1",
            [load_id],
        ).fetchone()
        decision = found[0].strip().lower() if found and found[0] else None
    if fetch_status != "complete":
        verdict, why = "rejected", f"{fetch_status}: {reason}"
    elif decision == "reject":
        verdict, why = "rejected", "rejected by a person"
    elif gates and decision != "accept":
        verdict, why = "rejected", f"integrity gate: {gates}"
    else:
        verdict, why = "not built", "stored, not yet in the marts (the build failed or did not run)"
    return DayLoad(load_id, verdict, fetch_status, why, gates, decision)


def day_load(con: warehouse.Connection, as_of: date) -> DayLoad | None:
    """The load a decision on `as_of` is about: as the marts say, unless the raw layer holds a
    load of that date the marts never saw (the build that would have written it failed), which
    is then the one decided on, as the raw layer says."""
    published = None
    known: set[str] = set()
    if _marts_built(con):
        row = con.execute(
            "select load_id, verdict, fetch_status, reason, rejected_gates, decision "
            f"from {con.schemas.marts}.dmf_day_decisions where as_of_date = ?",
            [as_of],
        ).fetchone()
        published = DayLoad(*row) if row else None
        known = {
            load_id
            for (load_id,) in con.execute(
                f"select load_id from {con.schemas.marts}.dmf_loads where as_of_date = ?", [as_of]
            ).fetchall()
        }
    stored = raw_day_load(con, as_of)
    if stored is not None and stored.load_id not in known and (published is None or stored.fetch_status == "complete"):
        return stored
    return published


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
        if load.verdict == "not built":
            return (
                f"load {load.load_id} of {as_of} was never built (the build failed or did not run) and no gate "
                "rejected it; nothing to accept: `dmf status` says what the build needs."
            )
        if not load.rejected_gates and load.decision != "reject":
            return (
                f"load {load.load_id} of {as_of} was not rejected by a gate ({load.reason}); "
                "only a gate's rejection can be overruled."
            )
        return None
    future = today is not None and as_of > today
    if load.decision == "reject":
        return f"load {load.load_id} of {as_of} is already rejected by a person; nothing to reject."
    if load.verdict not in ("accepted", "not built") and not future:
        return f"load {load.load_id} of {as_of} is not published ({load.reason}); nothing to reject."
    return None


def published_counts(con: warehouse.Connection) -> DayCounts:
    """Events per type per published date, as `marts.dmf_events` holds them now."""
    counts: DayCounts = {}
    if not table_exists(con, con.schemas.marts, "dmf_events"):
        return counts
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


def cap_refusal(con: warehouse.Connection, as_of: date) -> tuple[str, int] | None:
    """The date's newest load attempt, when the plausibility cap refused it: its id and the
    totalCount the API reported."""
    raw = con.schemas.raw
    if not table_exists(con, raw, "load_runs"):
        return None
    row = con.execute(
        f"select load_id, total_count, reason from {raw}.load_runs where as_of_date = ? "
        f"order by {_attempt_order(con)} limit 1",
        [as_of],
    ).fetchone()
    if row is None or row[1] is None or IMPLAUSIBLE_MARKER not in (row[2] or ""):
        return None
    return row[0], row[1]


def accept_list_size(
    settings: Settings, as_of: date, decided_by: str, reason: str, list_size: int, *, echo: Echo = print
) -> int:
    """Records a person's word that a list the plausibility cap refused is real, after checking
    its size on the MFDS site; the next load fetches a list of up to that size grown as much as
    an ordinary day may (RetryPolicy.plausible_total of it). Nothing is built: the refused
    attempt holds only page 1, so the list itself comes with the next load."""
    if not decided_by.strip() or not reason.strip():
        raise ConfigError("a decision needs who decides (--by NAME) and why (--reason TEXT).")
    if list_size < 1:
        raise ConfigError("--list-size is the number of registrations the MFDS site lists, 1 or more.")
    if not warehouse.exists(settings):
        raise DmfError(f"the warehouse {warehouse.describe(settings)} does not exist; run `dmf run` first.")
    with warehouse.connect(settings) as con:
        refused = cap_refusal(con, as_of)
        if refused is None:
            raise DmfError(
                f"the latest load of {as_of} was not refused by the plausibility cap; --list-size only lets "
                "through a list the loader refused as larger than it can plausibly hold (`dmf status` says what "
                "the day needs)."
            )
        load_id, reported = refused
        if list_size < reported:
            raise DmfError(
                f"the MFDS API reported {reported:,} records for {as_of}, more than the {list_size:,} given; "
                "check the list's size on the MFDS site again and give that with --list-size."
            )
        table = f"{con.schemas.raw}.{LIST_SIZE_DECISIONS_TABLE}"
        con.execute(
            f"create table if not exists {table} (load_id varchar, as_of_date date, reported_count bigint, "
            "list_size bigint, decided_by varchar, reason varchar, decided_at timestamp with time zone, "
            "decision_seq bigint)"
        )
        ((latest,),) = con.execute(f"select max(decision_seq) from {table}").fetchall()
        con.execute(
            f"insert into {table} (load_id, as_of_date, reported_count, list_size, decided_by, reason, decided_at, "
            "decision_seq) values (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                load_id,
                as_of,
                reported,
                list_size,
                decided_by.strip(),
                reason.strip(),
                datetime.now(UTC),
                (latest or 0) + 1,
            ],
        )
    cap = RetryPolicy().plausible_total(list_size)
    echo(
        f"{as_of}  list size {list_size:,} accepted by {decided_by.strip()}: {reason.strip()} "
        f"(load {load_id} reported {reported:,}); loads now believe a totalCount up to {cap:,} "
        f"until a list of {as_of} or later is published"
    )
    today = today_in_seoul()
    when = (
        f"`dmf run --as-of {as_of}` loads it now (or the next cron run)"
        if as_of >= today
        else "the next `dmf run` (cron's) loads today's list with it; a past day only from a dump (`dmf backfill`)"
    )
    echo(f"{as_of}  next    {when}")
    return 0


def _decision_arguments(verb: str) -> Callable[[argparse.ArgumentParser], None]:
    def arguments(parser: argparse.ArgumentParser) -> None:
        add_as_of(parser, "the day whose latest load is decided on", required=True)
        parser.add_argument("--by", required=True, metavar="NAME", help="who decides (recorded)")
        parser.add_argument("--reason", required=True, metavar="TEXT", help="why (recorded, shown on the day's report)")
        if verb == "accept":
            parser.add_argument(
                "--list-size",
                type=int,
                metavar="N",
                help="let through a list the plausibility cap refused: the size checked on the MFDS site (recorded)",
            )

    return arguments


def _decide(args: argparse.Namespace, settings: Settings) -> int:
    if getattr(args, "list_size", None) is not None:
        return accept_list_size(settings, args.as_of, args.by, args.reason, args.list_size)
    return decide_load(settings, args.as_of, args.command.removesuffix("-load"), args.by, args.reason)


COMMANDS = (
    Command(
        "accept-load",
        "publish a complete load a gate rejected, after checking it against the MFDS site",
        _decide,
        locks_warehouse=True,
        arguments=_decision_arguments("accept"),
    ),
    Command(
        "reject-load",
        "withdraw a published day found bad later (the next day compares with the one before)",
        _decide,
        locks_warehouse=True,
        arguments=_decision_arguments("reject"),
        future_dates=True,  # a backfill may have stored a day with a wrong, future date
    ),
)
