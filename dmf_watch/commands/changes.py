"""`dmf changes`: the net change per registration between two dates, as xlsx (or CSV)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dmf_watch.commands.command import Command, as_of_date
from dmf_watch.core.config import Settings
from dmf_watch.reports.changes import Filters, write_changes


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--since", type=as_of_date, required=True, metavar="YYYY-MM-DD", help="start of the span")
    parser.add_argument(
        "--until",
        type=as_of_date,
        default=None,
        metavar="YYYY-MM-DD",
        help="end of the span (default: the latest accepted day)",
    )
    parser.add_argument("--out", type=Path, default=None, metavar="FILE", help="xlsx, or CSV when FILE ends in .csv")
    parser.add_argument("--ingredient", metavar="TEXT", help="ingredient name (any part of it)")
    parser.add_argument("--applicant", metavar="TEXT", help="applicant name (any part) or BIZRNO")
    parser.add_argument("--manufacturer", metavar="TEXT", help="manufacturer name (any part of it)")
    parser.add_argument("--watchlist", action="store_true", help="only registrations today's watchlist covers")


def _changes(args: argparse.Namespace, settings: Settings) -> int:
    filters = Filters(args.ingredient, args.applicant, args.manufacturer, args.watchlist)
    path, span, count = write_changes(settings, args.since, args.until, args.out, filters)
    print(span.title)
    print(f"{path}: 등록 {count:,}건")
    return 0


COMMANDS = (
    Command(
        "changes",
        "the net change per registration between two dates (xlsx or CSV)",
        _changes,
        locks_warehouse=False,  # read-only
        arguments=_arguments,
    ),
)
