"""`dmf status`: the last days at a glance, and what to run when one of them is wrong.

One row per calendar day of the window (a day without any load is a row too, since a missing
cron run is exactly what this command is for), read from the marts and the optional enrichment
table, never from the API. The next command is derived from the row: a failed fetch of today is
loaded again (a past day only from a dump, `dmf backfill`), a gate rejection is looked at and
perhaps accepted by a person, a missing report is rendered, an AI failure goes to `dmf doctor`.

When the latest build failed, the marts hold the build before it, so the days they do not know are
read from the raw layer (`load_runs`, `rejected_load_signals`, `load_decisions`, `build_runs`):
a load stored since is shown as `no build` with the build's first failure, and the advice is what
unblocks it (setting the load aside with `dmf reject-load`, or fixing the named seed or model),
never `dmf build` again. A load the plausibility cap refused names `dmf accept-load --list-size`.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dmf_watch.commands.command import Command, add_as_of, day_of
from dmf_watch.commands.load_dates import live_load_problem, load_dates, withdraw_command
from dmf_watch.commands.upgrade import layout_problem
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import NO_LOAD_ADVICE, holds_a_load, table_exists
from dmf_watch.pipelines.mfds.helpers import IMPLAUSIBLE_MARKER
from dmf_watch.pipelines.mfds.settings import LIST_SIZE_DECISIONS_TABLE

#: AI outcomes that need a person (the others — no changes, disabled, circuit open — do not).
AI_NEEDS_PERSON = frozenset(
    {
        "binary_missing",
        "auth",
        "model_not_found",
        "schema_invalid",
        "invalid_output",
        "agy_error",
        "timeout",
        "internal_error",
        "storage_error",
        "parse_failed",
    }
)
REASON_WIDTH = 46


@dataclass(frozen=True)
class DayStatus:
    day: date
    verdict: str  # accepted | baseline | rejected | no load
    reason: str
    new: int | None
    changed: int | None
    withdrawn: int | None
    critical: int | None
    high: int | None
    ai: str
    report: Path | None
    next_command: str | None


def _rows(con: warehouse.Connection, first: date, last: date) -> dict[date, tuple]:
    marts = con.schemas.marts
    has_ai = table_exists(con, con.schemas.enrichment, "enrichment_run")
    ai = (
        f"""left join (
                select as_of_date, status, skip_reason,
                       row_number() over (partition by as_of_date order by created_at desc, run_id desc) as n
                from {con.schemas.enrichment}.enrichment_run where kind = 'daily'
             ) as ai on ai.as_of_date = loads.as_of_date and ai.n = 1"""
        if has_ai
        else (
            "left join (select cast(null as date) as as_of_date, cast(null as varchar) as status,"
            " cast(null as varchar) as skip_reason) as ai on false"
        )
    )
    rows = con.execute(
        f"""
        with loads as (
            select * from {marts}.dmf_day_decisions where as_of_date between ? and ?
        )
        select loads.as_of_date, loads.verdict, loads.is_baseline, loads.reason, loads.rejected_gates,
               summary.new_count, summary.changed_count, summary.withdrawn_count,
               summary.critical_count, summary.high_count, ai.status, ai.skip_reason
        from loads
        left join {marts}.dmf_daily_summary as summary on summary.as_of_date = loads.as_of_date
        {ai}
    """,
        [first, last],
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


def _reload(day: date, today: date, latest: date | None, why: str, live: LiveAdvice | None = None) -> str:
    """How a day's list can be had again: live only today (in the form the CLI accepts now); a past
    day only from a dump."""
    if day == today:
        return (live or LiveAdvice()).command(day, why)
    flag = " --insert-before-published" if latest is not None and day < latest else ""
    return (
        f"dmf backfill PATH{flag}  ({why}; only with a dump of {day.isoformat()}: "
        "the live API serves only today's list)"
    )


@dataclass(frozen=True)
class LiveAdvice:
    """Today's live load in the form `dmf run` accepts now (dmf_watch.commands.load_dates decides both)."""

    blocked_by_future: date | None = None
    needs_explicit_date: bool = False

    def command(self, day: date, why: str) -> str:
        if self.blocked_by_future is not None:
            return f"{withdraw_command(self.blocked_by_future)}  ({why}; a load dated after today blocks live loads)"
        if self.needs_explicit_date:
            return f"dmf run --as-of {day.isoformat()}  ({why}: load it again; the last load is long ago)"
        return f"dmf run  ({why}: load it again)"


def _live_advice(settings: Settings, today: date) -> LiveAdvice:
    dates = load_dates(settings, today)
    if dates.future:
        return LiveAdvice(blocked_by_future=dates.future[-1])
    problem = live_load_problem(settings, today, today, explicit=False)
    return LiveAdvice(needs_explicit_date=problem is not None and dates.latest is not None and today > dates.latest)


@dataclass(frozen=True)
class BuildFailure:
    """The latest build, when it failed: when, and its first failure (a node and what it said)."""

    finished_at: str
    first: str

    @property
    def on_a_node(self) -> bool:
        """A model or test failed (`node_name: what dbt said`), as opposed to a build that was
        stopped (a signal, the deadline, a full disk), which `dmf build` simply finishes."""
        return re.match(r"[A-Za-z0-9_.]+: ", self.first) is not None

    def advice(self, day: date) -> str:
        """What unblocks a day whose stored load the failing build has not published: setting the
        load aside (when its records break the build), or fixing the seed or model it names."""
        return (
            f"dmf reject-load --as-of {day.isoformat()} --by NAME --reason TEXT  (the build fails since this "
            f"load was stored: {self.first}; rejecting sets the load aside and builds without it; if a seed or "
            "model edit broke the build instead, fix what it names and run `dmf build`)"
        )


@dataclass(frozen=True)
class CapRefusal:
    """A day whose newest load the plausibility cap refused, and a person's size decision since."""

    reported: int
    accepted_size: int | None = None
    accepted_by: str | None = None

    def advice(self, day: date, today: date, latest: date | None, live: LiveAdvice | None) -> str:
        if self.accepted_size is not None and self.accepted_size >= self.reported:
            why = f"the list size {self.accepted_size:,} was accepted by {self.accepted_by}"
            return _reload(day, today, latest, why, live)
        return (
            f"check the list's size on the MFDS site; if it lists {self.reported:,} registrations: "
            f"dmf accept-load --as-of {day.isoformat()} --by NAME --reason TEXT --list-size {self.reported}"
        )


def _next(
    day: date,
    verdict: str,
    reason: str | None,
    gates: str | None,
    ai: str | None,
    report: Path | None,
    today: date,
    latest: date | None,
    first_load: date | None = None,
    live: LiveAdvice | None = None,
    cap: CapRefusal | None = None,
) -> str | None:
    """The command for a day that needs one, in a form the CLI accepts and that changes the
    day's state when run. Never a live load of a past date (it would store today's list under
    that date); after a gate rejection only a person's acceptance."""
    d = day.isoformat()
    if verdict == "future":
        return withdraw_command(day)
    if verdict == "not built":
        return f"dmf build --as-of {d}  (a load of this day is stored but was never built: the run stopped)"
    if verdict == "no load":
        if first_load is not None and day < first_load:
            return None  # before the warehouse's history starts: not a missed run
        return _reload(day, today, latest, "no load", live)
    if verdict == "rejected" and gates:
        return (
            f"read the report's 적재 거부 box (dmf report --as-of {d}); if the list checks out against "
            f"the MFDS site: dmf accept-load --as-of {d} --by NAME --reason TEXT"
        )
    if verdict == "rejected" and cap is not None:
        return cap.advice(day, today, latest, live)
    if verdict == "rejected":
        return _reload(day, today, latest, "the fetch was incomplete", live)
    if report is None:
        return f"dmf report --as-of {d}"
    if ai in AI_NEEDS_PERSON:
        return f"dmf enrich --as-of {d}  (the AI step failed: {ai}; `dmf doctor` says why; the report is complete without it)"
    return None


def _unbuilt_dates(con: warehouse.Connection) -> set[date]:
    """Dates with a complete load the raw layer holds and the marts do not know: a run stopped
    (killed, out of time) between its load and its build."""
    found = con.execute(
        f"""select distinct as_of_date from {con.schemas.raw}.load_runs
            where fetch_status = 'complete' and load_id not in (select load_id from {con.schemas.marts}.dmf_loads)"""
    ).fetchall()
    return {row[0] for row in found}


def _build_failure(con: warehouse.Connection) -> BuildFailure | None:
    """The latest recorded build, when it failed."""
    if not table_exists(con, con.schemas.raw, "build_runs"):
        return None
    row = con.execute(
        f"select success, finished_at, failures from {con.schemas.raw}.build_runs order by finished_at desc limit 1"
    ).fetchone()
    if row is None or row[0]:
        return None
    first = (row[2] or "unknown error").split("; ")[0]
    failure = BuildFailure(f"{row[1]:%Y-%m-%d %H:%M}", first[:160])
    return failure if failure.on_a_node else None


def _cap_refusals(con: warehouse.Connection) -> dict[date, CapRefusal]:
    """Dates whose newest load attempt the plausibility cap refused, with the latest size a person
    accepted for them since (`dmf accept-load --list-size`)."""
    raw = con.schemas.raw
    order = "attempt_seq desc nulls last, " if "attempt_seq" in warehouse.columns(con, raw, "load_runs") else ""
    found = con.execute(
        f"""select as_of_date, total_count, reason from (
                select as_of_date, total_count, reason,
                       row_number() over (partition by as_of_date order by {order}finished_at desc, load_id desc) as n
                from {raw}.load_runs
            ) as attempts where n = 1 and total_count is not null"""
    ).fetchall()
    refused = {day: total for day, total, reason in found if IMPLAUSIBLE_MARKER in (reason or "")}
    accepted: dict[date, tuple[int, str]] = {}
    if refused and table_exists(con, raw, LIST_SIZE_DECISIONS_TABLE):
        for day, size, by in con.execute(
            f"select as_of_date, list_size, decided_by from {raw}.{LIST_SIZE_DECISIONS_TABLE} order by decision_seq"
        ).fetchall():
            accepted[day] = (size, by)
    return {day: CapRefusal(total, *accepted.get(day, (None, None))) for day, total in refused.items()}


def _raw_rows(con: warehouse.Connection, first: date, last: date) -> dict[date, tuple]:
    """The days of the window the marts do not know, as the raw layer records them (a verdict and
    a reason): for a warehouse whose latest build failed."""
    from dmf_watch.commands.decisions import raw_day_load

    found = con.execute(
        f"select distinct as_of_date from {con.schemas.raw}.load_runs where as_of_date between ? and ?", [first, last]
    ).fetchall()
    rows = {}
    for (day,) in found:
        load = raw_day_load(con, day)
        if load is not None:
            rows[day] = (load.verdict, load.reason, load.rejected_gates)
    return rows


def day_statuses(settings: Settings, days: int, today: date) -> list[DayStatus]:
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    first = today - timedelta(days=days - 1)
    try:
        with warehouse.connect(settings, read_only=True) as con:
            marts = con.schemas.marts
            built = table_exists(con, marts, "dmf_day_decisions", "dmf_daily_summary")
            failure = _build_failure(con)
            if not built:
                if not holds_a_load(con, con.schemas.raw):
                    raise DmfError(f"{where} holds no load yet: {NO_LOAD_ADVICE}.")
                if failure is None:
                    raise DmfError(f"{where} is not built yet: run `dmf build` first.")
            rows = _rows(con, first, today) if built else {}
            raw_rows = _raw_rows(con, first, today)
            loads_of = f"{marts}.dmf_loads" if built else f"{con.schemas.raw}.load_runs"
            first_load, latest = con.execute(f"select min(as_of_date), max(as_of_date) from {loads_of}").fetchone()
            unbuilt = _unbuilt_dates(con) if built else {d for d, r in raw_rows.items() if r[0] == "not built"}
            caps = _cap_refusals(con)
    except warehouse.Error as exc:
        from dmf_watch.commands.backup import warehouse_problem
        from dmf_watch.core.faults import classify

        damage = warehouse_problem(settings, exc) if settings.warehouse == "duckdb" else None
        fault = classify(exc, settings)  # a program holding the file, the server down, a login refused
        raise DmfError(
            damage
            or (fault.line if fault else None)
            or f"{where} cannot be read ({str(exc).splitlines()[0][:120]}); is another dmf command writing it?"
        ) from None
    seoul_today = today_in_seoul()
    live = _live_advice(settings, seoul_today)
    out = [
        DayStatus(
            day,
            "future",
            "dated after today: the clock was wrong",
            None,
            None,
            None,
            None,
            None,
            "-",
            None,
            _next(day, "future", None, None, None, None, seoul_today, latest),
        )
        for day in reversed(load_dates(settings, seoul_today).future)
    ]
    for offset in range(days):
        day = today - timedelta(days=offset)
        path = settings.reports_dir / f"dmf_daily_{day:%Y%m%d}.xlsx"
        report = path if path.is_file() else None
        row = rows.get(day)
        if day in unbuilt and failure is not None and raw_rows.get(day, ("not built",))[0] != "not built":
            # set aside already (a person, a gate) and the build still fails: the failure line says what to fix
            out.append(DayStatus(day, raw_rows[day][0], raw_rows[day][1], *(None,) * 5, "-", report, None))
            continue
        if day in unbuilt and failure is not None:
            out.append(
                DayStatus(
                    day,
                    "no build",
                    f"build failed: {failure.first}",
                    *(row[4:9] if row else (None,) * 5),
                    "-",
                    report,
                    failure.advice(day),
                )
            )
            continue
        if day in unbuilt:
            out.append(
                DayStatus(
                    day,
                    "not built",
                    "a stored load is not in the marts yet",
                    *(row[4:9] if row else (None,) * 5),
                    "-",
                    report,
                    _next(day, "not built", None, None, None, report, seoul_today, latest),
                )
            )
            continue
        if row is None and day in raw_rows:  # the marts never saw the day: the raw layer says what it is
            verdict, reason, gates = raw_rows[day]
            out.append(
                DayStatus(
                    day,
                    verdict,
                    reason or "-",
                    None,
                    None,
                    None,
                    None,
                    None,
                    "-",
                    report,
                    _next(day, verdict, reason, gates, None, report, seoul_today, latest, live=live, cap=caps.get(day)),
                )
            )
            continue
        if row is None:
            out.append(
                DayStatus(
                    day,
                    "no load",
                    "-",
                    None,
                    None,
                    None,
                    None,
                    None,
                    "-",
                    report,
                    _next(day, "no load", None, None, None, report, seoul_today, latest, first_load, live),
                )
            )
            continue
        verdict, baseline, reason, gates, new, changed, withdrawn, critical, high, ai_status, ai_reason = row
        shown = "baseline" if verdict == "accepted" and baseline else verdict
        ai = ai_reason or (ai_status.lower() if ai_status else "not run")
        out.append(
            DayStatus(
                day,
                shown,
                reason or "-",
                new,
                changed,
                withdrawn,
                critical,
                high,
                ai,
                report,
                _next(
                    day, verdict, reason, gates, ai_reason, report, seoul_today, latest, live=live, cap=caps.get(day)
                ),
            )
        )
    return out


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def last_build_failure(settings: Settings) -> BuildFailure | None:
    """The latest build, when it failed (None also when the warehouse cannot be read: day_statuses
    says why)."""
    try:
        with warehouse.connect(settings, read_only=True) as con:
            return _build_failure(con)
    except warehouse.Error:
        return None


def format_table(statuses: list[DayStatus], failure: BuildFailure | None = None) -> str:
    header = (
        f"{'date':<10}  {'verdict':<8}  {'reason':<{REASON_WIDTH}}  {'NEW/CHG/WDR':>11}  "
        f"{'CRIT/HIGH':>9}  {'AI':<14}  report"
    )
    lines = [header, "-" * len(header)]
    for s in statuses:
        reason = s.reason if len(s.reason) <= REASON_WIDTH else s.reason[: REASON_WIDTH - 1] + "…"
        counts = f"{_n(s.new)}/{_n(s.changed)}/{_n(s.withdrawn)}"
        severe = f"{_n(s.critical)}/{_n(s.high)}"
        lines.append(
            f"{s.day.isoformat():<10}  {s.verdict:<8}  {reason:<{REASON_WIDTH}}  {counts:>11}  "
            f"{severe:>9}  {s.ai:<14}  {s.report or '(none)'}"
        )
    todo = [s for s in statuses if s.next_command]
    lines.append("")
    if failure is not None:
        lines.append(
            f"The last build failed ({failure.finished_at} UTC): {failure.first}; the marts and reports are "
            "the build's before it."
        )
        if not any(s.verdict == "no build" for s in statuses):  # no new load to blame: a seed or model edit
            lines.append("  fix what it names (a seed: `dmf seeds check` lists the problems), then run `dmf build`")
    if todo:
        lines.append("Next:")
        lines += [f"  {s.day.isoformat()}  {s.next_command}" for s in todo]
    elif failure is not None:
        pass
    else:
        lines.append("Nothing to do: every day was loaded, published and reported.")
    return "\n".join(lines)


def open_alerts(settings: Settings) -> str:
    """The faults alerted and not over yet (a failing morning, a backup that fails), from the
    alert ledger in the state folder, which holds them even when the warehouse cannot be read."""
    from dmf_watch.notify.state_ledger import open_conditions

    # a rejected load is the table's story; these are the faults only this ledger knows
    found = [(n, e) for n, e in open_conditions(settings.state_dir) if n != "pipeline" or ":" in e["state"]]
    if not found:
        return ""
    lines = ["Open alerts (alerted once; the next good morning sends the recovery):"]
    for name, entry in found:
        what = {"pipeline": "dmf run", "backup": "backup"}.get(name, name)
        detail = f": {entry['detail']}" if entry.get("detail") else ""
        lines.append(f"  {what} failing since {entry['since']} (last {entry['last_date']}){detail}")
    return "\n".join(lines)


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_as_of(parser)
    parser.add_argument("--days", type=int, default=7, help="how many days back from --as-of (default 7)")


def _status(args: argparse.Namespace, settings: Settings) -> int:
    if args.days < 1:
        raise DmfError("--days must be at least 1.")
    alerts = open_alerts(settings)  # from the state folder: shown even when the warehouse is not
    try:
        statuses = day_statuses(settings, args.days, day_of(args))
    except (DmfError, *warehouse.Error) as error:
        upgrade = layout_problem(settings) if not isinstance(error, DmfError) else None
        if alerts:
            print(alerts)
        if upgrade:  # the days cannot be read from marts of an earlier release: say why, once
            raise DmfError(upgrade) from None
        raise
    print(format_table(statuses, last_build_failure(settings)) + (f"\n\n{alerts}" if alerts else ""))
    upgrade = layout_problem(settings)  # read-only: what the next run does first, in one line
    if upgrade:
        print(f"Upgrade: {upgrade[0].upper()}{upgrade[1:]}")
    return 0


COMMANDS = (
    Command(
        "status",
        "the last days at a glance, and what to run next",
        _status,
        locks_warehouse=False,  # read-only, and must answer while a morning holds the lock
        arguments=_arguments,
    ),
)
