"""Which date a live load may take: the clock proposes it, the warehouse's history checks it.

A live load stores today's list under its `--as-of` date, and that date decides where the day
sits in the history. A wrong clock must not be able to lock the warehouse: one run a year ahead
would store next year's day, and then every honest morning is "before the latest load". So:

- a live load is never dated before the latest load (replaying the past is `dmf backfill`);
- a load dated after today is "future-dated": it does not count as the latest load, and live
  loads are refused until a person withdraws it with `dmf reject-load` (always allowed for it);
- a live load whose date only came from the clock and lies more than DMF_MAX_LOAD_GAP_DAYS after
  the latest load is refused until the date is given explicitly (`--as-of`).

Loads a person withdrew (`reject-load`) count for nothing here. `dmf status` asks the same
questions, so it never advises a command that this module refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import ConfigError
from dmf_watch.core.warehouse import table_exists


@dataclass(frozen=True)
class LoadDates:
    latest: date | None  # the latest load dated today or before, withdrawn ones left out
    future: tuple[date, ...]  # complete loads dated after today that nobody withdrew yet


def load_dates(settings: Settings, today: date) -> LoadDates:
    """The warehouse's latest load and its future-dated loads, as of the real `today`."""
    if not warehouse.exists(settings):
        return LoadDates(None, ())
    with warehouse.connect(settings, read_only=True) as con:
        s = con.schemas
        if not table_exists(con, s.raw, "load_runs"):
            return LoadDates(None, ())
        withdrawn = (
            f"select load_id from {s.marts}.dmf_loads where load_status = 'rejected_by_person'"
            if table_exists(con, s.marts, "dmf_loads")
            else "select cast(null as varchar) as load_id where false"
        )
        runs = f"select * from {s.raw}.load_runs where load_id not in ({withdrawn})"
        ((latest,),) = con.execute(
            f"select max(as_of_date) from ({runs}) as runs where as_of_date <= ?", [today]
        ).fetchall()
        future = con.execute(
            f"select distinct as_of_date from ({runs}) as runs where as_of_date > ? and fetch_status = 'complete' "
            "order by 1",
            [today],
        ).fetchall()
    return LoadDates(latest, tuple(row[0] for row in future))


def withdraw_command(day: date) -> str:
    return f'dmf reject-load --as-of {day.isoformat()} --by NAME --reason "dated after today: the clock was wrong"'


def live_load_problem(settings: Settings, as_of: date, today: date, *, explicit: bool) -> str | None:
    """Why a live load of `as_of` is refused, in one sentence; None when it may run."""
    dates = load_dates(settings, today)
    if dates.future:
        day = dates.future[-1]
        return (
            f"the warehouse holds a load dated {day.isoformat()}, after today in Seoul ({today.isoformat()}): "
            f"a run with a wrong clock stored it, and the days after it would be compared with it; withdraw it "
            f"with `{withdraw_command(day)}`, then run again."
        )
    latest = dates.latest
    if latest is None:
        return None
    if as_of < latest:
        return (
            f"--as-of {as_of.isoformat()} is before the latest load in the warehouse ({latest.isoformat()}); "
            "the live API serves only today's list, so replaying the past is `dmf backfill`, not a live load."
        )
    gap = (as_of - latest).days
    if not explicit and gap > settings.max_load_gap_days:
        return (
            f"today in Seoul is {as_of.isoformat()}, {gap} days after the latest load ({latest.isoformat()}), more "
            f"than DMF_MAX_LOAD_GAP_DAYS ({settings.max_load_gap_days}); if the clock is right and the warehouse "
            f"really missed those days, run again with --as-of {as_of.isoformat()}; otherwise correct the clock."
        )
    return None


def check_live_load(settings: Settings, as_of: date, today: date, *, explicit: bool) -> None:
    problem = live_load_problem(settings, as_of, today, explicit=explicit)
    if problem:
        raise ConfigError(problem)
