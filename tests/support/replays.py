"""Days replayed once per session: `run_days` starts a test from the longest prefix of its days
that any test of the session already replayed the same way, copied (support/worlds.py).

Most tests replay a few days to reach the morning they are about, and many start with the same
days (the real sample as 2026-10-08, a simulated registry's first day). A prefix is the same
world when everything the daily job reads is the same: the items the simulator serves each day
(by content) and the faults, the dates, the project's files, every setting but the three paths,
and the environment variables the job reads. Only replays with nothing outside the warehouse to
show are shared: DuckDB, a warehouse that did not exist yet, no `agy` to call (AI off or none
found) and no destination to deliver to; any other replay runs day by day as before.

Each prefix is a world on the session's shelf, read-only and checked against its digest before
every copy (a test that wrote to one fails the next test that would start from it, naming it),
with the outcomes of its days (report paths moved to the copy's folder).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import shutil
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from dmf_watch.commands.run import DayOutcome
from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import reader_copy_path
from support.shared_manifest import project_digest
from support.shelved import NOT_COPIED, SharedWorldWritten, digests, make_read_only

# Environment variables that change what the daily job does, besides the settings object.
READ_PREFIXES = ("DMF_", "MFDS_", "FAKE_AGY", "PG")
PATH_VARIABLES = {"DMF_DUCKDB_PATH", "DMF_STATE_DIR", "DMF_REPORTS_DIR", "DMF_TEST_PG_ENV"}


class Replays:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def key_of(self, settings: Settings, service_key: str) -> str | None:
        """What every prefix of this test's days shares, or None when its replay is not shareable."""
        if settings.warehouse != "duckdb" or settings.duckdb_path.exists():
            return None
        if any(name.startswith("DMF_NOTIFY_URL") for name in os.environ):
            return None
        ai_off = os.environ.get("DMF_AI_DISABLED") == "1"
        agy = settings.agy_binary or shutil.which("agy")
        if not ai_off and agy and Path(agy).exists():
            return None
        state = settings.state_dir
        if not settings.backup_dir.is_relative_to(state):  # backups elsewhere would not be copied
            return None
        before = digests(state) if state.is_dir() else ""  # agy.toml, notify.toml written ahead
        if "notify.toml" in before:
            return None
        fixed = dataclasses.replace(
            settings,
            duckdb_path=Path(settings.duckdb_path.name),
            reports_dir=Path("r"),
            state_dir=Path("s"),
            backup_dir=settings.backup_dir.relative_to(state),
        )
        environment = sorted(
            (name, value)
            for name, value in os.environ.items()
            if name.startswith(READ_PREFIXES) and name not in PATH_VARIABLES
        )
        parts = [repr(fixed), project_digest(settings.project_dir), service_key, repr(environment), before]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]

    @staticmethod
    def day_key(source, as_of: date, faults: str | None) -> str:
        day = source.day_of(as_of)
        items = json.dumps(source.items_for(day), sort_keys=True, default=repr, ensure_ascii=False)
        return hashlib.sha256(f"{as_of}|{day}|{faults}|{items}".encode()).hexdigest()[:20]

    def _path(self, key: str, day_keys: Sequence[str]) -> Path:
        chain = hashlib.sha256("/".join([key, *day_keys]).encode()).hexdigest()[:24]
        return self.folder / chain

    def start(self, settings: Settings, key: str, day_keys: Sequence[str]) -> list[DayOutcome]:
        """Copies the longest replayed prefix into `settings`' paths; returns its days' outcomes."""
        for length in range(len(day_keys), 0, -1):
            world = self._path(key, day_keys[:length])
            if (world / "outcomes.pickle").is_file():
                if digests(world / "copy") != (world / "digest").read_text(encoding="utf-8"):
                    raise SharedWorldWritten(f"the replayed days in {world} were written by a test")
                copy = world / "copy"
                settings.duckdb_path.parent.mkdir(parents=True, exist_ok=True)
                for name, target in _warehouse_files(settings).items():
                    if (copy / name).is_file():
                        shutil.copyfile(copy / name, target)
                for name, target in (("reports", settings.reports_dir), ("state", settings.state_dir)):
                    if (copy / name).is_dir():
                        shutil.copytree(copy / name, target, ignore=NOT_COPIED, dirs_exist_ok=True)
                for path in [settings.reports_dir, settings.state_dir]:
                    for each in [path, *path.rglob("*")] if path.exists() else []:
                        each.chmod(each.stat().st_mode | 0o200)
                outcomes = pickle.loads((world / "outcomes.pickle").read_bytes())
                return [_moved(outcome, copy / "reports", settings.reports_dir) for outcome in outcomes]
        return []

    def keep(self, settings: Settings, key: str, day_keys: Sequence[str], outcomes: list[DayOutcome]) -> None:
        """Shelves the warehouse as these days left it (once; the first test to replay them).

        `run_days` keeps the first day and the whole sequence it was given, the prefixes other tests
        start from (a baseline day, or the days a module fixture builds), about 17 MB each."""
        world = self._path(key, day_keys)
        if world.exists() or settings.duckdb_path.with_name(settings.duckdb_path.name + ".wal").exists():
            return  # shelved already, or a write-ahead log a copy of the file alone would lose
        building = world.with_suffix(f".{os.getpid()}")
        copy = building / "copy"
        copy.mkdir(parents=True)
        for name, path in _warehouse_files(settings).items():
            if path.is_file():
                shutil.copyfile(path, copy / name)
        for name, source in (("reports", settings.reports_dir), ("state", settings.state_dir)):
            if source.is_dir():
                shutil.copytree(source, copy / name, ignore=NOT_COPIED)
        # the paths the outcomes will have once `building` is renamed into place
        outcomes = [_moved(outcome, settings.reports_dir, world / "copy" / "reports") for outcome in outcomes]
        (building / "outcomes.pickle").write_bytes(pickle.dumps(outcomes))
        (building / "digest").write_text(digests(copy), encoding="utf-8")
        make_read_only(copy)
        try:
            building.rename(world)
        except OSError:  # another worker shelved the same days first
            shutil.rmtree(building, ignore_errors=True)


def _warehouse_files(settings: Settings) -> dict[str, Path]:
    """The warehouse file and the readers' copy beside it (warehouse.reader_copy_path)."""
    return {"dmf.duckdb": settings.duckdb_path, "readers.duckdb": reader_copy_path(settings)}


def _moved(outcome: DayOutcome, old: Path, new: Path) -> DayOutcome:
    reports = [new / path.relative_to(old) if path.is_relative_to(old) else path for path in outcome.reports]
    return dataclasses.replace(outcome, reports=reports)


replays: Replays | None = None  # set for the session by conftest.py
