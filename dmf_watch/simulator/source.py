"""What the simulator's HTTP server needs from a source of daily snapshots.

The server serves either a generated registry (`SyntheticRegistry`) or recorded real dumps
(`ReplaySource`); both answer the same four questions, so the server never knows which.
"""

from __future__ import annotations

from datetime import date
from typing import Protocol, runtime_checkable


@runtime_checkable
class SnapshotSource(Protocol):
    """Daily snapshots of the MFDS DMF list, numbered from day 1."""

    @property
    def day_count(self) -> int | None:
        """How many days exist (None: unbounded, every day ≥ 1 can be computed)."""

    def items_for(self, day: int) -> list[dict[str, str | None]]:
        """The list as published on `day`, in list order, as fresh dicts."""

    def day_of(self, as_of: date) -> int:
        """The day number that serves `as_of`; raises ValueError when none does."""

    def date_of(self, day: int) -> date:
        """The as-of date of `day`."""

    def truth_for(self, day: int) -> list[dict[str, object]]:
        """The changes made on `day` when known (a generated registry), else []."""
