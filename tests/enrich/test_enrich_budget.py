"""Budget file, result cache and circuit breaker: small state files that never break a run."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta

from dmf_watch.enrich.ai_config import load_ai_config
from dmf_watch.enrich.budget import CircuitBreaker, ResultCache, TokenBudget
from fake_agy.support import make_settings


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 10, 8, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_corrupt_budget_file_is_replaced(tmp_path):
    path = tmp_path / "agy_budget.json"
    path.write_text("{not json")
    budget = TokenBudget(path, token_cap=100, call_cap=2)
    assert budget.state()["calls"] == 0
    budget.record("daily_briefing", 60)
    assert budget.state()["tokens"] == 60 and budget.check()[0]
    budget.record("daily_briefing", 60)
    allowed, reason, _ = budget.check()
    assert not allowed and reason == "call_cap"


def test_budget_resets_on_a_new_seoul_day(tmp_path):
    clock = Clock()
    budget = TokenBudget(tmp_path / "b.json", token_cap=100, call_cap=10, clock=clock)
    budget.record("x", 150)
    assert budget.check()[1] == "token_cap"
    clock.now += timedelta(hours=15)  # 00:00 UTC -> next day 00:00 KST
    assert budget.check()[0]


def test_cache_respects_ttl(tmp_path):
    cache = ResultCache(tmp_path, ttl_seconds=60)
    key = ResultCache.key("p", "prompt", "m", "e", "s")
    assert key != ResultCache.key("p", "prompt", "m", "high", "s")
    cache.put(key, {"a": 1})
    assert cache.get(key) == {"a": 1}
    old = time.time() - 120
    os.utime(tmp_path / f"{key}.json", (old, old))
    assert cache.get(key) is None


def test_breaker_opens_after_three_failures_and_half_opens_after_cooldown(tmp_path):
    clock = Clock()
    breaker = CircuitBreaker(tmp_path / "c.json", threshold=3, open_hours=24, clock=clock)
    for _ in range(2):
        breaker.record_failure("timeout")
    assert breaker.allow()[0]
    breaker.record_failure("timeout")
    assert not breaker.allow()[0]
    clock.now += timedelta(hours=23)
    assert not breaker.allow()[0]
    clock.now += timedelta(hours=2)
    assert breaker.peek()[0] and breaker.read().state == "OPEN"  # peek changes nothing
    assert breaker.allow()[0] and breaker.read().state == "HALF_OPEN"
    breaker.record_failure("timeout")  # the trial failed: open again
    assert breaker.read().state == "OPEN" and not breaker.allow()[0]
    clock.now += timedelta(hours=25)
    breaker.allow()
    breaker.record_success()
    assert breaker.read().state == "CLOSED" and breaker.read().failures == 0


def test_quota_opens_the_breaker_at_once(tmp_path):
    breaker = CircuitBreaker(tmp_path / "c.json")
    breaker.record_failure("quota")
    allowed, why = breaker.allow()
    assert not allowed and "quota" in why


def test_corrupt_breaker_file_reads_as_closed(tmp_path):
    (tmp_path / "c.json").write_text("[1, 2")
    assert CircuitBreaker(tmp_path / "c.json").allow()[0]


def test_config_override_and_kill_switch(tmp_path):
    settings = make_settings(tmp_path, config='model = "other-model"\ndaily_call_cap = "nine"\n')
    cfg = load_ai_config(settings, env={})
    assert cfg.model == "other-model" and cfg.daily_call_cap == 4 and cfg.retry_backoff_seconds == 0
    assert cfg.binary.endswith("agy") and cfg.weekly_enabled is False
    assert load_ai_config(settings, env={"DMF_AI_DISABLED": "1"}).enabled is False
