"""`dmf status`: the last days at a glance, and what to run when one of them is wrong.

One row per calendar day of the window (a day without any load is a row too, since a missing
cron run is exactly what this command is for), read from the marts and the optional enrichment
table, never from the API. The next command is derived from the row: a failed fetch of today is
loaded again (a past day only from a dump, `dmf backfill`), a gate rejection is looked at and
perhaps accepted by a person, a missing report is rendered, an AI failure goes to `dmf doctor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dmf_watch.commands.load_dates import live_load_problem, load_dates, withdraw_command
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import NO_LOAD_ADVICE, holds_a_load, table_exists

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


def day_statuses(settings: Settings, days: int, today: date) -> list[DayStatus]:
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    first = today - timedelta(days=days - 1)
    try:
        with warehouse.connect(settings, read_only=True) as con:
            marts = con.schemas.marts
            built = table_exists(con, marts, "dmf_day_decisions", "dmf_daily_summary")
            if not built:
                if not holds_a_load(con, con.schemas.raw):
                    raise DmfError(f"{where} holds no load yet: {NO_LOAD_ADVICE}.")
                raise DmfError(f"{where} is not built yet: run `dmf build` first.")
            rows = _rows(con, first, today)
            first_load, latest = con.execute(
                f"select min(as_of_date), max(as_of_date) from {marts}.dmf_loads"
            ).fetchone()
            unbuilt = _unbuilt_dates(con)
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
                _next(day, verdict, reason, gates, ai_reason, report, seoul_today, latest, live=live),
            )
        )
    return out


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def format_table(statuses: list[DayStatus]) -> str:
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
    if todo:
        lines.append("Next:")
        lines += [f"  {s.day.isoformat()}  {s.next_command}" for s in todo]
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
