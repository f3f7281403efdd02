"""Runs the real daily job (`run_day`: load over HTTP from the simulator, dbt build, enrich,
report) for a sequence of days, for the tests of events, gates and reports."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import date

import duckdb

from dmf_watch.commands.run import DayOutcome, run_day
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.server import SimulatorServer
from fake_agy.support import FAKE_AGY
from support import replays


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
    """Runs the daily job for each (date, faults) against a simulator serving `source`.

    A prefix of the days that a test of this session already replayed the same way, into a new
    DuckDB warehouse with nothing outside it to show, is copied instead (support/replays.py)."""
    shelf = replays.replays
    key = shelf.key_of(settings, service_key) if shelf is not None else None
    day_keys = [shelf.day_key(source, as_of, faults) for as_of, faults in days] if key else []
    outcomes = shelf.start(settings, key, day_keys) if key else []
    if len(outcomes) == len(days):
        return outcomes
    with SimulatorServer(source, service_key=service_key) as simulator:
        settings = dataclasses.replace(settings, api_base_url=simulator.base_url)
        for as_of, faults in days[len(outcomes) :]:
            simulator.set_day(as_of)
            simulator.set_faults(faults)
            outcomes.append(run_day(settings, as_of, service_key=service_key, echo=lambda line: None))
            if key and len(outcomes) in (1, len(days)):
                shelf.keep(settings, key, day_keys[: len(outcomes)], outcomes)
    return outcomes


def query(settings: Settings, sql: str, params: Sequence = ()) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute(sql, list(params)).fetchall()


def point_dmf_at(monkeypatch, root, **extra: str) -> None:
    """`dmf`'s command line (dmf.cli.main) pointed at the warehouse, reports and state under
    `root`, as cron's environment would, with the AI off and the test's service key."""
    from support.mfds import SERVICE_KEY

    values = {
        "DMF_DUCKDB_PATH": root / "dmf.duckdb",
        "DMF_REPORTS_DIR": root / "reports",
        "DMF_STATE_DIR": root / "state",
        "DMF_AI_DISABLED": "1",
        "MFDS_SERVICE_KEY": SERVICE_KEY,
        **extra,
    }
    for name, value in values.items():
        monkeypatch.setenv(name, str(value))
    for name in ("DMF_NOTIFY_URLS", "DMF_LOCK_WAIT_S", "DMF_MAX_LOAD_GAP_DAYS", "DMF_BACKUP_DIR"):
        if name not in values:
            monkeypatch.delenv(name, raising=False)


def dmf_process_env(tmp_path, base_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `dmf` child process (cron's): this machine's, less any MFDS_, DMF_ or
    fake agy setting, with the warehouse, reports, state and home under `tmp_path`, the AI off
    and the simulator at `base_url`."""
    import os

    from support.mfds import SERVICE_KEY

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_", "FAKE_AGY"))}
    env.update(
        DMF_DUCKDB_PATH=str(tmp_path / "data" / "dmf.duckdb"),
        DMF_STATE_DIR=str(tmp_path / "state"),
        DMF_REPORTS_DIR=str(tmp_path / "reports"),
        HOME=str(tmp_path / "home"),
        DMF_AI_DISABLED="1",
        MFDS_API_BASE_URL=base_url,
        MFDS_SERVICE_KEY=SERVICE_KEY,
        **extra,
    )
    return env


def settings_in(root):
    """Settings whose warehouse, reports and state live under `root`."""
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    return dataclasses.replace(settings)


def settings_with_fake_agy(root):
    """Settings under `root` with the fake agy and an AI config that retries and times out fast."""
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "agy.toml").write_text(
        '[enrich]\nretry_backoff_seconds = 0\nprint_timeout = "3s"\nhard_kill_grace_seconds = 1\n', encoding="utf-8"
    )
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=state
    )
    return dataclasses.replace(settings, agy_binary=str(FAKE_AGY))
