"""What a `dmf` command is: its name, arguments and help, what it needs before it runs, and `run`.

Each command module declares its commands (`COMMANDS`, a tuple of `Command`) beside the code
they run, so that a reviewer sees in one place whether a command takes the warehouse lock,
and `cli.py` only lists the modules. This module stays light: `dmf run` imports it, the
command's own module and nothing else of the other commands.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from dmf_watch.core.config import Settings, today_in_seoul

Arguments = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace, Settings], int]


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Run
    # One command at a time per warehouse, through dmf_watch.core.lock: every command that writes the
    # warehouse, or reads it while another may be writing (a report). No default, so that
    # each declaration says it.
    locks_warehouse: bool
    arguments: Arguments = _no_arguments
    # Needs the warehouse's folder (checked before anything runs); `sim` and `doctor` do not.
    opens_warehouse: bool = True
    # Refused before it runs when the warehouse file is damaged. Not for commands that never
    # open it, rebuild it (restore) or make their own (demo).
    checks_damage: bool = True
    writes_reports: bool = False
    # Loads today's list from the MFDS API: needs the service key and the network, its base URL
    # is checked before anything connects, and its date may not go back before the latest load
    # (the API serves only today's list).
    live_load: bool = False
    # Its --as-of may lie in the future (withdrawing a day a backfill stored wrongly).
    future_dates: bool = False
    # Its own inputs, refused in one line before anything connects or writes.
    check: Callable[[argparse.Namespace, Settings], None] | None = None
    # The warehouse whose lock it takes, when not the configured one (the demo's own).
    lock_target: Callable[[Settings], Settings] | None = None
    # Called with the error that stopped it before its own alerting could (the morning job).
    on_failure: Callable[[argparse.Namespace, Settings, BaseException], None] | None = None


def as_of_date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a date; use YYYY-MM-DD") from None


def add_as_of(
    parser: argparse.ArgumentParser,
    help: str = "logical date of the load (default: today in Asia/Seoul)",
    *,
    required: bool = False,
) -> None:
    parser.add_argument("--as-of", type=as_of_date, default=None, required=required, metavar="YYYY-MM-DD", help=help)


def day_of(args: argparse.Namespace) -> date:
    """The day a command is about: its --as-of, else today in Seoul."""
    return getattr(args, "as_of", None) or today_in_seoul()


def command_line(args: argparse.Namespace) -> str:
    day = getattr(args, "as_of", None)
    return f"dmf {args.command}" + (f" --as-of {day.isoformat()}" if day else "")


def scrub(text: str) -> str:
    """The service key out of a line meant for a person or a log."""
    key = os.environ.get("MFDS_SERVICE_KEY")
    return text.replace(key, "***") if key else text
