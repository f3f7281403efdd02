"""`dmf sim serve`: the simulator alone, in the foreground, for trying a load by hand."""
from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.config import today_in_seoul
from pipelines.errors import ConfigError
from pipelines.simulator.faults import FaultSpecError, Faults
from pipelines.simulator.server import DEFAULT_SERVICE_KEY, serve


def serve_command(args: argparse.Namespace) -> int:
    start = args.start or today_in_seoul()
    if args.replay:
        from pipelines.simulator.replay import ReplaySource

        path = Path(args.replay)
        if not path.exists():
            raise ConfigError(f"there is nothing to replay at {path}; give a JSON Lines file or a folder of them.")
        source = ReplaySource(path, start_date=start)
    else:
        from pipelines.simulator.registry import SyntheticRegistry

        source = SyntheticRegistry(seed=args.seed, size=args.size, start_date=start)
    try:
        faults = Faults.parse(args.faults)
    except FaultSpecError as error:
        raise ConfigError(f"the fault spec is not valid: {error}") from None
    serve("127.0.0.1", args.port, source, service_key=args.service_key or DEFAULT_SERVICE_KEY, day=args.day, faults=faults)
    return 0
