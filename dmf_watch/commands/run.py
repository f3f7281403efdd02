"""`dmf run`: one logical day end to end — load, dbt build with its gates, enrich, report,
notify, and after an accepted day a backup of what the API can never give again (dmf_watch.commands.backup).

The verdict of the day comes from the warehouse (marts.dmf_day_decisions), never from this module:
Python only sequences the steps and turns the verdict into an exit code.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from dmf_watch.commands.backup import back_up_after_run
from dmf_watch.commands.command import Command, add_as_of, command_line, day_of, scrub
from dmf_watch.commands.upgrade import upgrade_warehouse
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.faults import classify
from dmf_watch.core.interrupts import RunInterrupted, deferred_interruptions
from dmf_watch.core.lock import WarehouseBusy, check_lock_held
from dmf_watch.transform.build import build

log = logging.getLogger(__name__)

Echo = Callable[[str], None]


@dataclass
class DayOutcome:
    as_of: date
    verdict: str
    reason: str | None
    exit_code: int
    reports: list[Path] = field(default_factory=list)
    warning: str | None = None  # a degraded but published day (its backup failed): one line for stderr


def day_verdict(settings: Settings, as_of: date) -> tuple[str, str | None]:
    """The verdict of the load that decides the day, as dbt decided it (marts.dmf_day_decisions)."""
    with warehouse.connect(settings) as con:
        row = con.execute(
            f"select verdict, reason from {con.schemas.marts}.dmf_day_decisions where as_of_date = ?",
            [as_of],
        ).fetchone()
    return (row[0], row[1]) if row else ("missing", "no load was recorded for this date")


def render_reports(settings: Settings, as_of: date) -> list[Path]:
    from dmf_watch.reports.daily_report import render_daily
    from dmf_watch.reports.weekly_report import render_weekly

    paths = [render_daily(settings, as_of)]
    if as_of.weekday() == 0:
        paths.append(render_weekly(settings, as_of))
    return paths


def run_day(
    settings: Settings,
    as_of: date,
    *,
    service_key: str | None = None,
    echo: Echo = print,
    outbox: Path | None = None,
) -> DayOutcome:
    """The day end to end, then its messages. A failed or interrupted run still raises its alert
    before it raises; a delivery failure never changes the outcome."""
    from dmf_watch.notify.day import notify_backup, notify_day

    echo = _logged(echo, service_key)
    stage = Stage()
    try:
        outcome = _run_day(settings, as_of, service_key=service_key, echo=echo, stage=stage)
        stage.name = "notify"
        check_lock_held("sending the day's messages")
        notified = notify_day(settings, as_of, outbox=outbox)
        echo(f"{as_of}  notify  {notified.summary()}")
        if notified.recorded:  # the daily operations sheet lists alerts and deliveries: show today's
            from dmf_watch.reports.daily_report import render_daily

            render_daily(settings, as_of)
        if outcome.verdict == "accepted":  # what the API can never give again, copied under the lock
            stage.name = "backup"
            line, failure = back_up_after_run(settings, as_of)
            echo(f"{as_of}  backup  {line}")
            if settings.warehouse == "duckdb":  # the backup's own alert streak (state folder)
                backup_alert = notify_backup(settings, as_of, failure)
                if backup_alert.alerts:
                    echo(f"{as_of}  notify  {backup_alert.summary()}")
            outcome.warning = failure
    except (Exception, RunInterrupted) as error:
        alert_failed_run(settings, as_of, error, stage=stage.name, echo=echo, outbox=outbox)
        raise
    return outcome


def failure_line(settings: Settings, error: BaseException) -> tuple[str, str | None]:
    """The one line a failed run says (on stderr and in its alert), and the kind of warehouse
    fault it is (core/faults.py) or None: the fault named, never "unexpected"."""
    if isinstance(error, RunInterrupted):
        return error.sentence(), None
    if isinstance(error, WarehouseBusy):  # another dmf run: a streak of its own
        return str(error), "warehouse_busy"
    fault = classify(error, settings)
    if fault is not None:
        return fault.line, fault.kind
    if isinstance(error, DmfError):
        return str(error), None
    return f"unexpected {type(error).__name__}", None


def alert_failed_run(
    settings: Settings,
    as_of: date,
    error: BaseException,
    *,
    stage: str | None = None,
    echo: Echo = print,
    outbox: Path | None = None,
) -> None:
    """Raise the failed morning's alert once (run_day's, or the command line's for a failure
    before the day started: the lock, the server, the file held); never raises."""
    from dmf_watch.notify.day import notify_day

    if getattr(error, "dmf_alerted", False):
        return
    if isinstance(error, RunInterrupted):
        error.stage = error.stage or stage
        error.day = as_of.isoformat()
    why, fault = failure_line(settings, error)
    with deferred_interruptions():  # the alert of a stopped run must get out whole
        echo(f"{as_of}  notify  {notify_day(settings, as_of, run_error=why, fault=fault, outbox=outbox).summary()}")
    try:
        error.dmf_alerted = True  # type: ignore[attr-defined]
    except AttributeError:
        pass


def _logged(echo: Echo, service_key: str | None) -> Echo:
    """Each step's line (load verdict, build result, enrich, report paths, notify, backup, a
    rejection) is also a line of dmf.log, so the log tells every morning's story on its own:
    one line each, line breaks flattened, never the service key."""

    key = service_key or os.environ.get("MFDS_SERVICE_KEY")

    def both(line: str) -> None:
        flat = " ".join(line.splitlines())
        if key:
            flat = flat.replace(key, "***")
        log.info("run %s", flat)
        echo(line)

    return both


@dataclass
class Stage:
    """Which step of the day is running, for the line an interruption prints."""

    name: str = "load"


def _run_day(settings: Settings, as_of: date, *, service_key: str | None, echo: Echo, stage: Stage) -> DayOutcome:
    from dmf_watch.enrich.daily_briefing import enrich_day
    from dmf_watch.enrich.weekly_briefing import enrich_week
    from dmf_watch.pipelines.mfds.load import load_day

    stage.name = "upgrade"  # a warehouse an earlier release built is brought to this release's layout first
    upgraded = upgrade_warehouse(settings)
    if upgraded:
        echo(f"{as_of}  upgrade {upgraded}")

    stage.name = "load"
    loaded = load_day(settings, as_of, service_key=service_key)
    echo(f"{as_of}  load    {loaded.summary()}")

    stage.name = "build"
    built = build(settings, new_loads_only=True, after_load=True)
    echo(f"{as_of}  build   {built.summary()}")
    if not built.success and not built.gate_fired:
        raise DmfError(f"dbt build failed for {as_of}, nothing was published: {'; '.join(built.failures[:3])}.")

    verdict, reason = day_verdict(settings, as_of)
    stage.name = "enrich"
    echo(f"{as_of}  enrich  {enrich_day(settings, as_of).summary()}")
    if loaded.schema_drift:  # a drift rejection: the AI proposes where the fields went (never fatal)
        from dmf_watch.enrich.drift import diagnose_load_drift

        echo(f"{as_of}  enrich  {diagnose_load_drift(settings, as_of, loaded.schema_drift).summary()}")
    if as_of.weekday() == 0:
        echo(f"{as_of}  enrich  {enrich_week(settings, as_of).summary()}")

    stage.name = "report"
    reports = render_reports(settings, as_of)
    echo(f"{as_of}  report  " + ", ".join(str(path) for path in reports))

    if verdict == "accepted":
        exit_code = 0
    elif loaded.fetch_status == "failed":
        exit_code = 1
    else:
        exit_code = 2
    if verdict != "accepted":
        echo(f"{as_of}  REJECTED  {reason}")
    return DayOutcome(as_of, verdict, reason, exit_code, reports)


def _run_command(args: argparse.Namespace, settings: Settings) -> int:
    outcome = run_day(settings, day_of(args))
    if outcome.warning:  # published, but degraded (its backup failed): alerted, and said here
        log.warning("%s %s", command_line(args), outcome.warning)
        print(f"dmf: {scrub(outcome.warning)}", file=sys.stderr)
    return outcome.exit_code


def _alert_failed_morning(args: argparse.Namespace, settings: Settings, error: BaseException) -> None:
    """A morning the warehouse stopped before its day began (the file held by another program,
    the server down or refusing the login, a full disk, another run holding the lock too long)
    still raises its alert; one run_day raised already is not repeated. A refused input (a
    date, a URL) is the caller's to fix and stays a line only."""
    if isinstance(error, WarehouseBusy) or classify(error, settings) is not None:
        alert_failed_run(settings, day_of(args), error, echo=print)


COMMANDS = (
    Command(
        "run",
        "the daily job: load, build with gates, enrich, report",
        _run_command,
        locks_warehouse=True,
        arguments=add_as_of,
        writes_reports=True,
        live_load=True,
        on_failure=_alert_failed_morning,
    ),
)
