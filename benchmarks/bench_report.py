"""How long the daily report takes for a day with 10,000 events (aim: under 10 s).

Builds the report-test warehouse (contract marts in a temporary DuckDB file) with 10,000 extra
events on one day, renders that day's report twice and prints the timings and file size.
Run: python benchmarks/bench_report.py [n_events]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dmf_watch.core.config import load_settings  # noqa: E402
from dmf_watch.reports.daily_report import render_daily  # noqa: E402
from support.report_warehouse import RICH_DAY, build_warehouse  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        settings = load_settings({}).with_paths(
            duckdb_path=tmp_path / "dmf.duckdb", reports_dir=tmp_path / "reports", state_dir=tmp_path / "state"
        )
        started = time.perf_counter()
        build_warehouse(settings.duckdb_path, bulk_day_events=n)
        print(f"warehouse with {n:,} extra events on {RICH_DAY}: {time.perf_counter() - started:.2f} s")
        for attempt in (1, 2):
            started = time.perf_counter()
            path = render_daily(settings, RICH_DAY)
            elapsed = time.perf_counter() - started
            print(f"render_daily #{attempt}: {elapsed:.2f} s  ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
