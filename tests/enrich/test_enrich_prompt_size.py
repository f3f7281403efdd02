"""A 500-event day (real MFDS records) still renders a daily prompt under 30,000 characters,
so it goes through the `-p` argument; the events that do not fit are summarised as counts."""

from __future__ import annotations

from datetime import date

import pytest

from dmf_watch.core import warehouse
from dmf_watch.enrich.ai_config import load_ai_config
from dmf_watch.enrich.daily_briefing import build_prompt, read_day
from dmf_watch.enrich.render import load_schema
from fake_agy.support import Marts, event_from_record, make_settings, real_records, signal, unmatched_term

# the prompt is handed to the fake agy, a child process: the integration tier.
pytestmark = pytest.mark.integration

DAY = date(2026, 10, 8)
KINDS = [("WITHDRAWN", "HIGH"), ("CHANGED", "MEDIUM"), ("NEW", "INFO"), ("CHANGED", "COSMETIC"), ("NEW", "MEDIUM")]


def big_day(tmp_path, n=500):
    settings = make_settings(tmp_path)
    events, seen = [], set()
    for i, rec in enumerate(real_records()):
        et, sev = KINDS[i % len(KINDS)]
        ev = event_from_record(rec, DAY, et, sev, on_watchlist=(i % 50 == 0), index=i)
        if ev["dmf_key"] in seen:
            continue
        seen.add(ev["dmf_key"])
        events.append(ev)
        if len(events) == n:
            break
    Marts(settings.duckdb_path).add_day(
        DAY,
        events,
        [signal(), signal("event_burst")],
        [unmatched_term(), unmatched_term("에스오메프라졸", ("S-오메프라졸마그네슘삼수화물", "오메프라졸"))],
    )
    return settings, events


def test_500_event_day_prompt_stays_under_the_argv_limit(tmp_path):
    settings, events = big_day(tmp_path)
    assert len(events) == 500
    with warehouse.connect(settings) as con:
        facts = read_day(con, DAY)
    prompt, payload = build_prompt(DAY, facts, load_schema("uc1_briefing.schema.json"), load_ai_config(settings))
    print(
        f"\n500-event day: prompt {len(prompt.text):,} characters, {len(payload.events)} events in prompt, "
        f"{sum(payload.omitted.values())} summarised as counts"
    )
    assert len(prompt.text) < 30_000
    assert 15 <= len(payload.events) <= 60
    assert len(payload.events) + sum(payload.omitted.values()) == 500
    assert payload.counts["event_count"] == 500
    first = payload.events[0]
    assert first["on_watchlist"] is True and first["event_type"] == "WITHDRAWN"
