"""Runs the real daily job (`run_day`: load over HTTP from the simulator, dbt build, enrich,
report) for a sequence of days, for the tests of events, gates and reports."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import date

import duckdb

from dmf.run import DayOutcome, run_day
from settings.config import Settings
from simulator.server import SimulatorServer


class DaysSource:
    """A source that serves given raw items on given dates: day n is the n-th date."""

    def __init__(self, days: dict[date, list[dict]]) -> None:
        self._dates = sorted(days)
        self._days = [list(days[as_of]) for as_of in self._dates]

    def items_for(self, day: int) -> list[dict]:
        return [dict(item) for item in self._days[day - 1]]

    def day_of(self, as_of: date) -> int:
        return self._dates.index(as_of) + 1

    def truth_for(self, day: int) -> list[dict]:
        return []


def run_days(settings: Settings, source, days: Sequence[tuple[date, str | None]], service_key: str) -> list[DayOutcome]:
    """Runs the daily job for each (date, faults) against a simulator serving `source`."""
    outcomes = []
    with SimulatorServer(source, service_key=service_key) as simulator:
        settings = dataclasses.replace(settings, api_base_url=simulator.base_url)
        for as_of, faults in days:
            simulator.set_day(as_of)
            simulator.set_faults(faults)
            outcomes.append(run_day(settings, as_of, service_key=service_key, echo=lambda line: None))
    return outcomes


def query(settings: Settings, sql: str, params: Sequence = ()) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute(sql, list(params)).fetchall()
