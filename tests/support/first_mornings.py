"""The first morning of a small simulated registry, built once per session, for the tests whose
`dmf run` child processes are about a later morning.

A test that stops, kills or starves a real `dmf run` (signals, a full disk, a held file) needs a
warehouse that already holds an accepted day before the morning it is about. Its child process
used to build that day first, paying Python's start-up, dbt's full parse and a first build
(12-15 s) for a morning no assertion is about. Here the day is built once, in-process, through the
same daily job (`run_days`: the simulator over loopback HTTP, the real loader, real dbt), and each
test gets a copy placed where its child process will look for the warehouse, the state and the
reports; the children then run only the mornings under test.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dmf_watch.core.warehouse import reader_copy_path
from support.mfds import SERVICE_KEY, START_DATE, small_registry
from support.scenarios import run_days, settings_in
from support.shelved import NOT_COPIED
from support.worlds import Shelf, World


def _first_morning(size: int):
    def build(root: Path) -> None:
        """START_DATE through the daily job as `dmf run --as-of START_DATE` runs it against a
        simulator serving `small_registry(size)` on that day: AI off, no destination."""
        saved = {name: os.environ.pop(name, None) for name in ("DMF_AI_DISABLED", "DMF_NOTIFY_URLS")}
        os.environ["DMF_AI_DISABLED"] = "1"
        try:
            outcomes = run_days(settings_in(root), small_registry(size), [(START_DATE, None)], SERVICE_KEY)
        finally:
            os.environ.pop("DMF_AI_DISABLED")
            os.environ.update({name: value for name, value in saved.items() if value is not None})
        if [(o.verdict, o.exit_code) for o in outcomes] != [("accepted", 0)]:
            raise RuntimeError(f"the first morning did not pass: {[(o.verdict, o.reason) for o in outcomes]}")

    return build


SMALL_FIRST_MORNING = World(
    "small_1200_first_morning",
    _first_morning(1200),
    "small_registry(1200) (the simulator's default) served on START_DATE and run as of START_DATE: "
    "one accepted day, its report and its backup",
)
SMALL_300_FIRST_MORNING = World(
    "small_300_first_morning",
    _first_morning(300),
    "small_registry(300) served on START_DATE and run as of START_DATE: one accepted day, its report and its backup",
)


def _copy_into(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, ignore=NOT_COPIED, dirs_exist_ok=True)
        for path in [target, *target.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


@contextmanager
def placed(
    shelf: Shelf,
    world: World,
    *,
    duckdb_path: Path,
    state_dir: Path,
    reports_dir: Path,
    backup_dir: Path | None = None,
) -> Iterator[None]:
    """A writable copy of `world` where a `dmf` child process with these settings looks for it
    (DMF_DUCKDB_PATH, DMF_STATE_DIR, DMF_REPORTS_DIR and, when given, DMF_BACKUP_DIR: the day's
    backup moved there from the state folder), then the check that the shared world was not written."""
    built = settings_in(shelf.path(world))
    duckdb_path.parent.mkdir(parents=True, exist_ok=True)
    placed_at = dataclasses.replace(built, duckdb_path=duckdb_path)
    for source, target in [
        (built.duckdb_path, duckdb_path),
        (reader_copy_path(built), reader_copy_path(placed_at)),  # the readers' copy beside the warehouse
    ]:
        shutil.copyfile(source, target)
        target.chmod(target.stat().st_mode | stat.S_IWUSR)
    _copy_into(built.state_dir, state_dir)
    _copy_into(built.reports_dir, reports_dir)
    if backup_dir is not None:
        backup_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(state_dir / "backups", backup_dir)
    yield
    shelf.check_unchanged(world)
