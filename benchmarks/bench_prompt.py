"""Prints the size of the rendered daily prompt for days of 5 to 500 events (real MFDS records
from ../shared/data/mfds_real), the number of events that fit, and the transport chosen.

    python benchmarks/bench_prompt.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import duckdb  # noqa: E402

from dmf_watch.enrich.ai_config import load_ai_config  # noqa: E402
from dmf_watch.enrich.daily_briefing import build_prompt, read_day  # noqa: E402
from dmf_watch.enrich.guard import check_prompt  # noqa: E402
from dmf_watch.enrich.render import load_schema  # noqa: E402
from fake_agy.support import Marts, event_from_record, make_settings, real_records, signal, unmatched_term  # noqa: E402

KINDS = [("WITHDRAWN", "HIGH"), ("CHANGED", "MEDIUM"), ("NEW", "INFO"), ("CHANGED", "COSMETIC"), ("NEW", "MEDIUM")]


def main() -> None:
    records = real_records()
    if not records:
        print("no real records found beside the checkout (../shared/data/mfds_real)")
        return
    schema = load_schema("uc1_briefing.schema.json")
    print(f"{'events':>7} {'in prompt':>9} {'omitted':>8} {'chars':>8} {'transport':>9} {'render ms':>9}")
    for n in (5, 30, 60, 100, 250, 500, 900):
        with tempfile.TemporaryDirectory() as tmp:
            settings = make_settings(Path(tmp))
            day = date(2026, 10, 8)
            events, seen = [], set()
            for i, rec in enumerate(records):
                et, sev = KINDS[i % len(KINDS)]
                ev = event_from_record(rec, day, et, sev, on_watchlist=(i % 50 == 0), index=i)
                if ev["dmf_key"] not in seen:
                    seen.add(ev["dmf_key"])
                    events.append(ev)
                if len(events) == n:
                    break
            Marts(settings.duckdb_path).add_day(day, events, [signal()], [unmatched_term()])
            with duckdb.connect(str(settings.duckdb_path)) as con:
                facts = read_day(con, day)
            cfg = load_ai_config(settings)
            started = time.perf_counter()
            prompt, payload = build_prompt(day, facts, schema, cfg)
            ms = (time.perf_counter() - started) * 1000
            verdict = check_prompt(prompt.text, cfg.max_prompt_chars, cfg.cmdline_safe_chars)
            print(
                f"{len(events):>7} {len(payload.events):>9} {sum(payload.omitted.values()):>8} "
                f"{len(prompt.text):>8,} {verdict.transport:>9} {ms:>9.1f}"
            )


if __name__ == "__main__":
    main()
