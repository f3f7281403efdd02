"""`dmf load`: the day's whole MFDS list into the raw layer, nothing built (a cron chain's first
step; `dmf run` does it as part of the morning)."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command, add_as_of, day_of
from dmf_watch.commands.upgrade import upgrade_warehouse
from dmf_watch.core.config import Settings
from dmf_watch.pipelines.mfds.load import load_day


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_as_of(parser)
    parser.add_argument("--force", action="store_true", help="load again although the date already has a complete load")


def _load(args: argparse.Namespace, settings: Settings) -> int:
    day = day_of(args)
    upgraded = upgrade_warehouse(settings)  # the load reads the marts' columns of this release
    if upgraded:
        print(f"{day}  upgrade {upgraded}")
    outcome = load_day(settings, day, force=args.force)
    print(outcome.summary())
    return {"complete": 0, "skipped": 0, "failed": 1}.get(outcome.fetch_status, 2)


COMMANDS = (
    Command(
        "load",
        "load the whole MFDS list into the raw layer",
        _load,
        locks_warehouse=True,
        arguments=_arguments,
        live_load=True,
    ),
)
