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
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dmf_watch.core.warehouse import reader_copy_path
from support.mfds import START_DATE, small_registry
from support.scenarios import settings_in
from support.worlds import Shelf, World, copy_writable, replayed


def _first_morning(size: int):
    def build(root: Path) -> None:
        """START_DATE through the daily job as `dmf run --as-of START_DATE` runs it against a
        simulator serving `small_registry(size)` on that day: AI off, no destination."""
        replayed(root, small_registry(size), [START_DATE])

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
    copy_writable(built.state_dir, state_dir)
    copy_writable(built.reports_dir, reports_dir)
    if backup_dir is not None:
        backup_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(state_dir / "backups", backup_dir)
    yield
    shelf.check_unchanged(world)
