"""Named warehouses, each built once per test session and copied for each test that starts from it.

Replaying days through the real daily job (HTTP loader, `dbt build`, reports) costs seconds a
day; many modules replayed the same days from an empty warehouse. A world here is built the first
time a test asks for it (under pytest-xdist, by whichever worker asks first, the other waits on a
file lock), and every test gets a copy in its own tmp dir (milliseconds): it replays only the
days it is about.

A shared world is never written: its files are made read-only, and the copying fixture compares
their SHA-256 after the test with what they were when the world was built, failing the test that
changed them (permissions do not stop root, the digest does).
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from dmf_watch.core.config import Settings
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from support.mfds import REAL_DATA_DIR, SERVICE_KEY, read_jsonl
from support.real_days import two_days, with_cosmetic_watched_change
from support.scenarios import DaysSource, run_days, settings_in
from support.shelved import NOT_COPIED, SharedWorldWritten, digests, make_read_only


@dataclass(frozen=True)
class World:
    """`build(root)` makes the world under `root` (settings_in(root): the warehouse, reports and
    state), AI off, no destination; it raises if the days did not end as the world promises."""

    name: str
    build: Callable[[Path], None]
    about: str


class Shelf:
    """Where the session's worlds are built, once each."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, world: World) -> Path:
        """The built world (read-only): built now if no test of this session asked for it before."""
        built = self.folder / world.name
        with open(self.folder / f"{world.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker building it: wait for it
            if not built.is_dir():
                building = self.folder / f"{world.name}.building"
                shutil.rmtree(building, ignore_errors=True)
                world.build(building)
                (self.folder / f"{world.name}.sha256").write_text(digests(building), encoding="utf-8")
                make_read_only(building)
                building.rename(built)
        return built

    def copy(self, world: World, into: Path, **replaced) -> Settings:
        """A writable copy of `world` under `into`, and the settings that point at it."""
        copy_writable(self.path(world), into)
        return dataclasses.replace(settings_in(into), **replaced) if replaced else settings_in(into)

    @contextmanager
    def copied(self, world: World, into: Path, **replaced) -> Iterator[Settings]:
        """`copy`, then a check that the test left the shared world as it was built."""
        yield self.copy(world, into, **replaced)
        self.check_unchanged(world)

    def check_unchanged(self, world: World) -> None:
        """Raises SharedWorldWritten naming the files that differ from what the build left."""
        built = self.folder / world.name
        recorded = (self.folder / f"{world.name}.sha256").read_text(encoding="utf-8")
        now = digests(built)
        if now != recorded:
            was = dict(line.split("  ", 1)[::-1] for line in recorded.splitlines())
            is_ = dict(line.split("  ", 1)[::-1] for line in now.splitlines())
            changed = sorted(name for name in was.keys() | is_.keys() if was.get(name) != is_.get(name))
            raise SharedWorldWritten(
                f"the shared world {world.name!r} was written by a test (changed: {', '.join(changed)}); "
                "a test must write only to its copy (worlds.copy)"
            )


def shelf_folder(basetemp: Path) -> Path:
    """The session's shelf: beside the workers' own temp dirs under pytest-xdist (one shelf for
    the run), in the session's temp dir otherwise."""
    return (basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp) / "worlds"


def copy_writable(source: Path, target: Path) -> None:
    """`source` copied into `target` (what a shared world never needs copied left out), every
    file writable by its owner: a world is read-only, its copies are not."""
    shutil.copytree(source, target, ignore=NOT_COPIED, dirs_exist_ok=True)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def replayed(root: Path, source, days: list[date]) -> None:
    """Each day of `source` (a DaysSource, or a registry the simulator serves) through the real
    daily job into settings_in(root), AI off and no destination; raises unless every day was
    accepted."""
    saved = {name: os.environ.pop(name, None) for name in ("DMF_AI_DISABLED", "DMF_NOTIFY_URLS")}
    os.environ["DMF_AI_DISABLED"] = "1"
    try:
        outcomes = run_days(settings_in(root), source, [(day, None) for day in days], SERVICE_KEY)
    finally:
        os.environ.pop("DMF_AI_DISABLED")
        os.environ.update({name: value for name, value in saved.items() if value is not None})
    if [(o.verdict, o.exit_code) for o in outcomes] != [("accepted", 0)] * len(days):
        raise RuntimeError(f"a day of the world did not pass: {[(o.verdict, o.reason) for o in outcomes]}")


def _replayed(days: dict[date, list[dict]], root: Path) -> None:
    replayed(root, DaysSource(days), sorted(days))


def _real_tails(root: Path) -> None:
    tails = [
        [r for r in read_jsonl(REAL_DATA_DIR / name) if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
        for name in ("tail_A_2026-09-23.jsonl", "tail_B_2026-10-08.jsonl")
    ]
    _replayed(dict(zip(REAL_TAILS_DAYS, tails, strict=True)), root)


def _real_two_days(root: Path) -> None:
    _replayed(with_cosmetic_watched_change(two_days(REAL_DATA_DIR)), root)


REAL_TAILS_DAYS = (date(2026, 9, 25), date(2026, 10, 8))
REAL_TAILS = World(
    "real_tails",
    _real_tails,
    "the real tails of two MFDS dumps 13 days apart (records permitted from 2026-07-31 on: 143 and "
    "165), as 2026-09-25 and 2026-10-08: 22 NEW and one renumbering",
)
REAL_TWO_DAYS = World(
    "real_two_days",
    _real_two_days,
    "the 367-record real sample as 2026-10-08 and its edited next day (support/real_days.py: a "
    "removed manufacturer, withdrawals, a new watched record, a cosmetic watched change)",
)


DEMO_DAYS_START = date(2026, 11, 30)
DEMO_DAYS = tuple(DEMO_DAYS_START + timedelta(days=n) for n in range(5))


def _demo_days(root: Path) -> None:
    registry = SyntheticRegistry(seed=DEFAULT_SEED, start_date=DEMO_DAYS_START)
    _replayed({as_of: registry.items_for(n + 1) for n, as_of in enumerate(DEMO_DAYS)}, root)


DEMO_FIVE_DAYS = World(
    "demo_five_days",
    _demo_days,
    "the registry `dmf demo` serves (the simulator's default seed and size) over its five days from "
    f"{DEMO_DAYS_START}, without the demo's transient outage (its retries change no record)",
)
