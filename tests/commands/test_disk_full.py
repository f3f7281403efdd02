"""A full disk ends in one line that says where to free space; the next run recovers.

The warehouse, the state dir (dlt's working dir, dbt's target, logs) and the reports each live
on their own small tmpfs, so each can be filled for real (the kernel answers ENOSPC) while the
others keep working: the failing write is then DuckDB's / dlt's, dbt's or the report's.

The morning before the full disk is the session's copy of START_DATE as `dmf run` leaves it
(support/first_mornings.py), placed on the three disks where the child looks for it: that morning
holds the warehouse, the state and a report to fill around, and no assertion is about it, so only
the failing morning and the one that recovers are `dmf run` processes of their own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import pytest

from dmf_watch.core.config import load_settings
from support.disks import fill, tmpfs
from support.first_mornings import SMALL_FIRST_MORNING, placed
from support.mfds import SERVICE_KEY, START_DATE
from support.scenarios import query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY2 = START_DATE + timedelta(days=1)


@pytest.fixture
def disks(tmp_path: Path, shelf) -> Iterator[dict[str, Path]]:
    """The three disks, holding START_DATE as `dmf run --as-of START_DATE` left it (the simulator's default registry)."""
    with ExitStack() as stack:
        mounted = {
            name: stack.enter_context(tmpfs(tmp_path / name, "96m")) for name in ("warehouse", "state", "reports")
        }
        stack.enter_context(
            placed(
                shelf,
                SMALL_FIRST_MORNING,
                duckdb_path=mounted["warehouse"] / "dmf.duckdb",
                state_dir=mounted["state"],
                reports_dir=mounted["reports"],
            )
        )
        yield mounted


def _dmf(disks: dict[str, Path], base_url: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_", "FAKE_AGY"))}
    env.update(
        DMF_DUCKDB_PATH=str(disks["warehouse"] / "dmf.duckdb"),
        DMF_STATE_DIR=str(disks["state"]),
        DMF_REPORTS_DIR=str(disks["reports"]),
        HOME=str(disks["state"].parent / "home"),
        DMF_AI_DISABLED="1",
        MFDS_API_BASE_URL=base_url,
        MFDS_SERVICE_KEY=SERVICE_KEY,
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )


@pytest.mark.parametrize(
    ("full", "setting"),
    [
        ("warehouse", "DMF_DUCKDB_PATH"),
        ("state", "DMF_STATE_DIR"),
        ("reports", "DMF_REPORTS_DIR"),
    ],
)
@pytest.mark.fault("the disk fills up")
def test_a_full_disk_is_one_line_naming_it_and_the_next_run_recovers(disks, start_simulator, full, setting):
    """A full warehouse, state or reports disk: one line naming it and its free space, exit 1; the next run recovers with 0 duplicates."""
    settings = load_settings({"DMF_DUCKDB_PATH": str(disks["warehouse"] / "dmf.duckdb")})
    assert query(settings, "select as_of_date, verdict from marts.dmf_loads") == [(START_DATE, "accepted")]
    assert (disks["reports"] / f"dmf_daily_{START_DATE:%Y%m%d}.xlsx").is_file()
    server = start_simulator(day=DAY2)

    filler = fill(disks[full])
    failed = _dmf(disks, server.base_url, "run", "--as-of", DAY2.isoformat())

    assert failed.returncode == 1, (failed.stdout, failed.stderr)
    line = failed.stderr
    assert line.count("\n") == 1 and line.startswith("dmf: could not write to "), line
    assert f"{disks[full]} ({setting})" in line and "free there" in line and "free space on that disk" in line
    assert "Traceback" not in line and "bug" not in line and SERVICE_KEY not in line
    assert list(disks["reports"].glob("*.tmp")) == []  # nothing half-written
    assert not (disks["reports"] / f"dmf_daily_{DAY2:%Y%m%d}.xlsx").exists()
    leaks = [
        p
        for disk in disks.values()
        for p in disk.rglob("*")
        if p.is_file() and p != filler and SERVICE_KEY.encode() in p.read_bytes()
    ]
    assert leaks == []  # logs, dlt's state and trace, DuckDB: the key nowhere, disk-full run included

    filler.unlink()
    again = _dmf(disks, server.base_url, "run", "--as-of", DAY2.isoformat())

    assert again.returncode == 0, (again.stdout, again.stderr)
    assert query(settings, "select as_of_date, verdict from marts.dmf_loads order by 1") == [
        (START_DATE, "accepted"),
        (DAY2, "accepted"),
    ]
    per_load = query(
        settings,
        "select r.as_of_date, count(*), count(distinct i.item_position), any_value(r.distinct_count) "
        "from mfds_raw.dmf_items i join mfds_raw.load_runs r using (load_id) "
        "where r.fetch_status = 'complete' group by all order by 1",
    )
    assert [(day, n == distinct == expected) for day, n, distinct, expected in per_load] == [
        (START_DATE, True),
        (DAY2, True),
    ]
    assert query(
        settings, "select count(*) from mfds_raw.load_runs where as_of_date = ? and fetch_status = 'complete'", [DAY2]
    ) == [(1,)]
    assert (disks["reports"] / f"dmf_daily_{DAY2:%Y%m%d}.xlsx").is_file()
