"""`dmf notify`: the day's messages and alerts sent again by hand (each only once unless
--resend), or `dmf notify test` to try every configured destination."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command, add_as_of, day_of
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.notify.day import notify_day, notify_test, unconfigured
from dmf_watch.reports.daily_report import render_daily


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action", nargs="?", choices=["test"], help="`test`: a test message to every configured destination"
    )
    add_as_of(parser)
    parser.add_argument("--resend", action="store_true", help="send the day's messages again")


def _test(settings: Settings) -> int:
    """One line per destination: its name, never its URL."""
    results = notify_test(settings)
    if not results:
        skipped = ", ".join(unconfigured(settings))
        raise DmfError(
            "no notification destination is configured: set DMF_NOTIFY_URLS or "
            "DMF_NOTIFY_URL_<NAME> for a destination of dmf_watch/notify/notify.toml"
            + (f" ({skipped})" if skipped else "")
            + "."
        )
    for name, owner, ok, error in results:
        serves = f"{owner}'s items" if owner else "everything"
        print(f"{name} ({serves}): {'ok' if ok else 'failed'}{'  ' + error if error else ''}")
    return 0 if all(ok for _, _, ok, _ in results) else 1


def _notify(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "test":
        return _test(settings)
    day = day_of(args)
    outcome = notify_day(settings, day, resend=args.resend)
    print(f"{day}  notify  {outcome.summary()}")
    if outcome.recorded:
        render_daily(settings, day)  # its operations sheet lists the new alerts and deliveries
    return 0


COMMANDS = (
    Command(
        "notify",
        "send the day's messages and alerts (each only once)",
        _notify,
        locks_warehouse=True,
        arguments=_arguments,
        writes_reports=True,
    ),
)
