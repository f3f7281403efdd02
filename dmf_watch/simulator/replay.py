"""Serve recorded MFDS dumps (JSON Lines, one item per line) as daily snapshots.

Replaying real dumps is how the pipeline is checked against the texture no generator
foresees, so items are handed out exactly as recorded: key order, nulls, "", `\\r\\n` and
trailing spaces included. A path is one file (one day) or a folder of files, one per day,
in file-name order. When every file name carries a distinct YYYY-MM-DD date in ascending
order, those dates map as-of dates to days; otherwise `start_date` does (day 1 = start_date).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

Item = dict[str, str | None]
_DATE_IN_NAME = re.compile(r"(\d{4}-\d{2}-\d{2})")


class ReplaySource:
    """A `SnapshotSource` over recorded JSON Lines files; it knows no truth."""

    def __init__(self, path: str | Path, start_date: date | None = None) -> None:
        root = Path(path)
        if root.is_dir():
            files = sorted(p for p in root.glob("*.jsonl") if not p.name.startswith("truth_"))
        elif root.is_file():
            files = [root]
        else:
            raise FileNotFoundError(f"No replay data at {root}: give a .jsonl file or a folder of them.")
        if not files:
            raise FileNotFoundError(f"No .jsonl files in {root}: add one file per day.")
        self.files: list[Path] = files
        self.start_date = start_date
        self._file_dates = _dates_from_names(files)
        self._cache: dict[int, list[Item]] = {}

    @property
    def day_count(self) -> int:
        return len(self.files)

    def items_for(self, day: int) -> list[Item]:
        """The items of the day's file, as recorded; fresh dicts on every call."""
        self._check(day)
        if day not in self._cache:
            self._cache[day] = _read_items(self.files[day - 1])
        return [dict(item) for item in self._cache[day]]

    def date_of(self, day: int) -> date:
        self._check(day)
        if self.start_date is not None:
            return self.start_date + timedelta(days=day - 1)
        if self._file_dates is not None:
            return self._file_dates[day - 1]
        raise ValueError("The replay files carry no dates: pass start_date to map days to dates.")

    def day_of(self, as_of: date) -> int:
        if self.start_date is not None:
            day = (as_of - self.start_date).days + 1
        elif self._file_dates is not None:
            day = self._file_dates.index(as_of) + 1 if as_of in self._file_dates else 0
        else:
            raise ValueError("The replay files carry no dates: pass start_date to map dates to days.")
        if not 1 <= day <= self.day_count:
            raise ValueError(f"No replay file serves {as_of.isoformat()}: the replay has {self.day_count} day(s).")
        return day

    def truth_for(self, day: int) -> list[dict[str, object]]:
        self._check(day)
        return []

    def _check(self, day: int) -> None:
        if not 1 <= day <= self.day_count:
            raise ValueError(f"Day {day} does not exist: the replay has days 1 to {self.day_count}.")


def _read_items(path: Path) -> list[Item]:
    items: list[Item] = []
    with path.open(encoding="utf-8", newline="") as fh:
        for line in fh:
            if line.strip():
                items.append(json.loads(line))
    return items


def _dates_from_names(files: list[Path]) -> list[date] | None:
    found: list[date] = []
    for path in files:
        match = _DATE_IN_NAME.search(path.name)
        if match is None:
            return None
        try:
            found.append(date.fromisoformat(match.group(1)))
        except ValueError:
            return None
    if any(b <= a for a, b in zip(found, found[1:])):
        return None
    return found


def write_replay(folder: str | Path, days: dict[date, list[Item]]) -> list[Path]:
    """Write days as the replay format (`YYYY-MM-DD.jsonl`, one item a line, exactly as given):
    what `ReplaySource` serves and `dmf backfill` imports, e.g. days of the synthetic registry."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for as_of in sorted(days):
        path = root / f"{as_of.isoformat()}.jsonl"
        with path.open("w", encoding="utf-8", newline="") as handle:
            for item in days[as_of]:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
        paths.append(path)
    return paths
