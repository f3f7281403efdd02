"""`dmf report`: the day's (or the week's) xlsx workbook rendered again from the warehouse."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command, add_as_of, day_of
from dmf_watch.commands.upgrade import layout_problem
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.reports.daily_report import render_daily
from dmf_watch.reports.weekly_report import render_weekly
from dmf_watch.transform.build import unpublishable_reason


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_as_of(parser)
    parser.add_argument("--weekly", action="store_true", help="render the weekly report ending on that date")


def _report(args: argparse.Namespace, settings: Settings) -> int:
    day = day_of(args)
    problem = unpublishable_reason(settings, day) or layout_problem(settings)
    if problem:
        raise DmfError(problem)
    print((render_weekly if args.weekly else render_daily)(settings, day))
    return 0


COMMANDS = (
    Command(
        "report",
        "render the day's xlsx report from the warehouse",
        _report,
        locks_warehouse=True,
        arguments=_arguments,
        writes_reports=True,
    ),
)
