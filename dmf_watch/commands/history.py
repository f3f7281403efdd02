"""`dmf history`: one registration's timeline, every event and field change, as text."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command
from dmf_watch.core.config import Settings
from dmf_watch.reports.history import history_text


def _arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--ingredient", metavar="TEXT", help="ingredient name (any part of it)")
    which.add_argument("--permit-no", metavar="NO", help="registration number (exact, or its beginning)")
    which.add_argument("--applicant", metavar="TEXT", help="applicant name (any part) or BIZRNO")


def _history(args: argparse.Namespace, settings: Settings) -> int:
    print(history_text(settings, ingredient=args.ingredient, permit_no=args.permit_no, applicant=args.applicant))
    return 0


COMMANDS = (
    Command(
        "history",
        "one registration's timeline: every event and field change",
        _history,
        locks_warehouse=False,  # read-only
        arguments=_arguments,
    ),
)
