"""The simulator alone, in the foreground, for trying a load by hand: `dmf-simulator` (or
`python -m simulator`), and `dmf sim serve`, which shares these options."""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from dmf_watch.core.config import today_in_seoul
from dmf_watch.core.errors import ConfigError
from dmf_watch.simulator.faults import Faults, FaultSpecError
from dmf_watch.simulator.registry import DEFAULT_SEED
from dmf_watch.simulator.server import DEFAULT_SERVICE_KEY, serve


def _date(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a date; use YYYY-MM-DD") from None


def add_serve_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--size", type=int, default=9200, help="records on the first day")
    parser.add_argument("--start", type=_date, default=None, metavar="YYYY-MM-DD", help="date of day 1 (default today)")
    parser.add_argument("--day", type=int, default=1, help="day to serve (1 = start date)")
    parser.add_argument("--faults", default="", help="fault spec, e.g. 'http503:2,truncate_last_page'")
    parser.add_argument(
        "--replay", default=None, help="JSON Lines file, or folder of them (one per day), to serve instead"
    )
    parser.add_argument("--service-key", default=None, help="the key the simulator accepts (default: the demo key)")
    return parser


def serve_command(args: argparse.Namespace) -> int:
    start = args.start or today_in_seoul()
    if args.replay:
        from dmf_watch.simulator.replay import ReplaySource

        path = Path(args.replay)
        if not path.exists():
            raise ConfigError(f"there is nothing to replay at {path}; give a JSON Lines file or a folder of them.")
        source = ReplaySource(path, start_date=start)
    else:
        from dmf_watch.simulator.registry import SyntheticRegistry

        source = SyntheticRegistry(seed=args.seed, size=args.size, start_date=start)
    try:
        faults = Faults.parse(args.faults)
    except FaultSpecError as error:
        raise ConfigError(f"the fault spec is not valid: {error}") from None
    serve(
        "127.0.0.1", args.port, source, service_key=args.service_key or DEFAULT_SERVICE_KEY, day=args.day, faults=faults
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = add_serve_arguments(
        argparse.ArgumentParser(
            prog="dmf-simulator",
            description="Serve the MFDS-compatible DMF API on loopback.",
        )
    )
    try:
        return serve_command(parser.parse_args(argv))
    except ConfigError as error:
        print(f"dmf-simulator: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
