"""`dmf sim serve`: the MFDS-compatible simulator in the foreground, for trying a load by hand
(the same options as `dmf-simulator`)."""

from __future__ import annotations

import argparse

from dmf_watch.commands.command import Command
from dmf_watch.simulator.command import add_serve_arguments, serve_command


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="sim_command", required=True, metavar="ACTION", parser_class=type(parser))
    add_serve_arguments(actions.add_parser("serve", help="serve the simulated API on loopback"))


COMMANDS = (
    Command(
        "sim",
        "the MFDS-compatible simulator",
        lambda args, settings: serve_command(args),
        locks_warehouse=False,  # it never opens the warehouse
        arguments=_arguments,
        opens_warehouse=False,
        checks_damage=False,
    ),
)
