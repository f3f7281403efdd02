"""`dmf build`: the dbt build of every stored load (dmf_watch.transform.build), and the verdict of
a day once built."""

from __future__ import annotations

import argparse
import logging
from datetime import date

from dmf_watch.commands.command import Command, add_as_of
from dmf_watch.core.config import Settings
from dmf_watch.transform.build import build, unpublishable_reason

log = logging.getLogger(__name__)


def _build_arguments(parser: argparse.ArgumentParser) -> None:
    # The build always covers every load; --as-of (the same flag as the other steps, so a cron
    # chain can pass it to each) names the day whose verdict is printed after it.
    add_as_of(parser, "also print that day's verdict once built (the build covers every load)")
    parser.add_argument("--full-refresh", action="store_true", help="rebuild every table from the raw loads")


def _build_command(args: argparse.Namespace, settings: Settings) -> int:
    outcome = build(settings, full_refresh=args.full_refresh, unit_tests=True)
    log.info("build %s", outcome.summary())
    print(outcome.summary())
    if args.as_of is not None:
        print(_built_verdict(settings, args.as_of))
    return 0 if outcome.success else (2 if outcome.gate_fired else 1)


def _built_verdict(settings: Settings, as_of: date) -> str:
    """`dmf build --as-of`: the day's verdict as the marts now say it, or why they cannot."""
    from dmf_watch.commands.run import day_verdict  # run builds: imported here, not at the top

    problem = unpublishable_reason(settings, as_of)
    if problem:
        return f"{as_of}  verdict unknown: {problem}"
    verdict, reason = day_verdict(settings, as_of)
    return f"{as_of}  {verdict}" + (f": {reason}" if reason and verdict != "accepted" else "")


COMMANDS = (
    Command(
        "build",
        "dbt build: models, integrity gates, data and unit tests",
        _build_command,
        locks_warehouse=True,
        arguments=_build_arguments,
    ),
)
