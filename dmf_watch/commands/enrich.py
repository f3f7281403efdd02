"""`dmf enrich` and `dmf explain-anomaly`: the AI steps a person can run again by hand. Neither
is ever fatal: agy writes prose beside the facts, never the facts."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command, add_as_of, day_of
from dmf_watch.core.config import Settings
from dmf_watch.enrich.anomaly import explain_anomaly
from dmf_watch.enrich.daily_briefing import enrich_day


def _enrich(args: argparse.Namespace, settings: Settings) -> int:
    print(enrich_day(settings, day_of(args)).summary())
    return 0


def _explain_anomaly(args: argparse.Namespace, settings: Settings) -> int:
    print(explain_anomaly(settings, day_of(args)).summary())
    return 0


COMMANDS = (
    Command(
        "enrich",
        "ask agy for the day's Korean briefing (optional, never fatal)",
        _enrich,
        locks_warehouse=True,  # it writes the enrichment tables beside the marts
        arguments=add_as_of,
    ),
    Command(
        "explain-anomaly",
        "ask agy again to explain a past day's signals",
        _explain_anomaly,
        locks_warehouse=True,  # it writes the enrichment tables beside the marts
        arguments=add_as_of,
    ),
)
