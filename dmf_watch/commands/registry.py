"""`dmf registry --as-of D`: every registration listed on D, as the accepted day showed it."""

from __future__ import annotations

import argparse
from pathlib import Path

from dmf_watch.commands.command import Command, add_as_of
from dmf_watch.core.config import Settings
from dmf_watch.reports.registry import check_out, default_path, registry_as_of, write_registry


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_as_of(
        parser, "the date whose registry to show (a day without an accepted load shows the one before)", required=True
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="the file to write, .xlsx or .csv (default: DMF_REPORTS_DIR/dmf_registry_YYYYMMDD.xlsx)",
    )


def _check(args: argparse.Namespace, settings: Settings) -> None:
    check_out(args.out or default_path(settings, args.as_of))


def _registry(args: argparse.Namespace, settings: Settings) -> int:
    day = registry_as_of(settings, args.as_of)
    path = write_registry(day, args.out or default_path(settings, args.as_of))
    print(day.note)
    print(f"{path}: 등록 {len(day.rows):,}건 (관심목록 {day.watched:,}건)")
    return 0


COMMANDS = (
    Command(
        "registry",
        "every registration listed on a date, with its fields then and today's watch flags (xlsx or csv)",
        _registry,
        locks_warehouse=False,  # read-only, like `dmf history`
        arguments=_arguments,
        check=_check,
    ),
)
