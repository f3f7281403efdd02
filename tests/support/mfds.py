"""The simulated MFDS world every test shares: the fake service key, the first day, the real
samples beside the checkout, and simulated registries."""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import date
from pathlib import Path

from dmf_watch.core.config import Settings
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer

# A distinctive fake key: if any byte of it shows up in a file or a log, a test says so.
SERVICE_KEY = "SECRET-KEY-9f3b1c7e+Zq/Wx=="
START_DATE = date(2026, 11, 29)
REAL_DATA_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "mfds_real"


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@functools.lru_cache(maxsize=8)
def small_registry(size: int, start_date: date = START_DATE):
    """A registry of `size` records for fast tests (1,200 records = 3 pages of 500).

    Shared between tests (building one takes most of a second); the server only reads it.
    """
    return SyntheticRegistry(seed=DEFAULT_SEED, size=size, start_date=start_date)


def pointed_at(settings: Settings, server: SimulatorServer) -> Settings:
    return dataclasses.replace(settings, api_base_url=server.base_url)
