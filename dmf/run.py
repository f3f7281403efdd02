"""`dmf run`: one logical day end to end — load, dbt build with its gates, enrich, report.

The verdict of the day comes from the warehouse (marts.dmf_day_decisions), never from this module:
Python only sequences the steps and turns the verdict into an exit code.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import pickle
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from dmf.build import build, parse_project
from settings.config import Settings
from settings.errors import DmfError

if TYPE_CHECKING:
    from pipelines.mfds.load import LoadOutcome

log = logging.getLogger(__name__)

Echo = Callable[[str], None]


@dataclass
class DayOutcome:
    as_of: date
    verdict: str
    reason: str | None
    exit_code: int
    reports: list[Path] = field(default_factory=list)


def day_verdict(settings: Settings, as_of: date) -> tuple[str, str | None]:
    """The verdict of the load that decides the day, as dbt decided it (marts.dmf_day_decisions)."""
    with duckdb.connect(str(settings.duckdb_path)) as con:
        row = con.execute(
            "select verdict, reason from marts.dmf_day_decisions where as_of_date = ?",
            [as_of],
        ).fetchone()
    return (row[0], row[1]) if row else ("missing", "no load was recorded for this date")


def render_reports(settings: Settings, as_of: date) -> list[Path]:
    from reports.daily import render_daily
    from reports.weekly import render_weekly

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
    last_in_process: bool = False,
) -> DayOutcome:
    """The day end to end, then its messages. A failed run still raises its alert before it
    raises; a delivery failure never changes the outcome.

    `last_in_process`: the process ends once the day is done, without freeing what it holds
    (`dmf run` from cron, dmf.cli.end_process). Python's cyclic collector is then off until the
    end: each dbt command pauses it anyway (dmf.build), and the collections that followed the
    parse and the build walked dbt's millions of live objects to free garbage the process's end
    drops all the same: 0.5-0.6 s of each morning at day 372-377 (gc.callbacks), and no more
    peak memory (527 against 531 MiB: DuckDB's share sets it). The load's child process, and a
    process that runs several days, keep collecting.
    """
    from notify.day import notify_day

    if last_in_process:
        gc.disable()

    try:
        outcome = _run_day(settings, as_of, service_key=service_key, echo=echo)
    except Exception as error:
        why = str(error) if isinstance(error, DmfError) else f"unexpected {type(error).__name__}"
        echo(f"{as_of}  notify  {notify_day(settings, as_of, run_error=why, outbox=outbox).summary()}")
        raise
    notified = notify_day(settings, as_of, outbox=outbox)
    echo(f"{as_of}  notify  {notified.summary()}")
    if notified.recorded:  # the daily operations sheet lists alerts and deliveries: show today's
        from reports.daily import render_daily

        render_daily(settings, as_of)
    return outcome


def load_while_dbt_starts(settings: Settings, as_of: date, service_key: str | None) -> tuple[LoadOutcome, Any]:
    """The day's load, and dbt's parsed project (parse_project) for the build that follows.

    A cron start pays about two seconds to import dbt and read its manifest before the first
    model runs, all of it Python under one lock. So, when this process has no other thread, the
    load runs in a forked child while this process starts dbt: both use a core of their own and
    the morning is shorter by the load's time. The loader and dlt are imported in the child
    only. parse_project reads no warehouse, so it never meets the loader's write lock. With other
    threads alive (an in-process simulator, a test runner's), a fork could copy a lock some
    thread holds; the two then run one after the other. Either way the load, its outcome and its
    errors are the same: the child's are sent back.
    """
    if threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        from pipelines.mfds.load import load_day

        loaded = load_day(settings, as_of, service_key=service_key)
        return loaded, parse_project(settings)
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as child:
        loading = child.submit(_load_in_child, settings, as_of, service_key)
        manifest = parse_project(settings)
        try:
            return loading.result(), manifest
        except BrokenProcessPool:
            raise DmfError(
                f"the load of {as_of} ended without a result (its process was killed or crashed); nothing was "
                "built. The next run finishes or discards what it left, as after any interrupted load."
            ) from None


def _load_in_child(settings: Settings, as_of: date, service_key: str | None) -> LoadOutcome:
    """load_day in the forked child; an error that cannot travel back whole travels as its type
    name and message, and its traceback stays in the child's log (the same dmf.log)."""
    from pipelines.mfds.load import load_day

    gc.enable()  # the load runs as it runs alone: only the process that builds may leave it off (run_day)
    try:
        return load_day(settings, as_of, service_key=service_key)
    except Exception as error:
        try:
            pickle.loads(pickle.dumps(error))
        except Exception:
            log.exception("the load failed in its child process")
            raise RuntimeError(f"{type(error).__name__}: {error}") from None
        raise


def _run_day(settings: Settings, as_of: date, *, service_key: str | None, echo: Echo) -> DayOutcome:
    from enrich.daily import enrich_day
    from enrich.weekly import enrich_week

    loaded, manifest = load_while_dbt_starts(settings, as_of, service_key)
    echo(f"{as_of}  load    {loaded.summary()}")

    built = build(settings, new_loads_only=True, manifest=manifest, after_load=True)
    echo(f"{as_of}  build   {built.summary()}")
    if not built.success and not built.gate_fired:
        raise DmfError(f"dbt build failed for {as_of}, nothing was published: {'; '.join(built.failures[:3])}.")

    verdict, reason = day_verdict(settings, as_of)
    echo(f"{as_of}  enrich  {enrich_day(settings, as_of).summary()}")
    if loaded.schema_drift:  # a drift rejection: the AI proposes where the fields went (never fatal)
        from enrich.drift import diagnose_load_drift

        echo(f"{as_of}  enrich  {diagnose_load_drift(settings, as_of, loaded.schema_drift).summary()}")
    if as_of.weekday() == 0:
        echo(f"{as_of}  enrich  {enrich_week(settings, as_of).summary()}")

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
