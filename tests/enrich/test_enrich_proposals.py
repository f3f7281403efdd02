"""The alias approval queue: file format, no double queueing, human decisions, overdue flag."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from dmf_watch.enrich.daily_briefing import enrich_day
from dmf_watch.enrich.proposals import decide, list_proposals, overdue_proposals, show_proposal
from fake_agy.support import Marts, fake_env, make_settings, query, sample_events, unmatched_term

# proposals come from the fake agy, a child process: the integration tier.
pytestmark = pytest.mark.integration

DAY = date(2026, 10, 8)
NEXT = date(2026, 10, 9)


def queued_day(tmp_path, monkeypatch):
    fake_env(monkeypatch, tmp_path)
    settings = make_settings(tmp_path)
    marts = Marts(settings.duckdb_path)
    marts.add_day(DAY, sample_events(DAY, 3), unmatched=[unmatched_term()])
    marts.add_day(NEXT, sample_events(NEXT, 4), unmatched=[unmatched_term()])
    assert enrich_day(settings, DAY).proposals_queued == 1
    return settings


def test_alias_proposal_file_has_the_design_format(tmp_path, monkeypatch):
    settings = queued_day(tmp_path, monkeypatch)
    data = json.loads((settings.state_dir / "proposals" / "20261008_uc4_alias.json").read_text())
    assert {"kind", "run_id", "generated_at", "model", "prompt_sha256", "status", "note", "items"} <= set(data)
    assert data["kind"] == "ingredient_alias" and data["status"] == "PENDING"
    item = data["items"][0]
    assert {
        "id",
        "watch_term",
        "candidate_ingredient_name",
        "base_form",
        "salt_form",
        "isomer_note",
        "confidence",
        "reason",
        "decision",
    } <= set(item)
    assert item["decision"] == "PENDING"
    assert query(settings, "select applied from enrichment.enrichment where kind = 'ingredient_alias'") == [(0,)]


def test_identical_proposal_is_not_queued_twice(tmp_path, monkeypatch):
    settings = queued_day(tmp_path, monkeypatch)
    outcome = enrich_day(settings, NEXT)
    assert outcome.ok and outcome.proposals_queued == 0
    assert query(settings, "select count(*) from enrichment.proposals") == [(1,)]
    assert not (settings.state_dir / "proposals" / "20261009_uc4_alias.json").exists()


def test_accept_records_the_decision_and_touches_no_seed(tmp_path, monkeypatch):
    settings = queued_day(tmp_path, monkeypatch)
    seeds = settings.project_dir / "seeds"
    before = sorted((p.name, p.stat().st_mtime) for p in seeds.glob("*")) if seeds.exists() else []
    pid = list_proposals(settings)[0]["proposal_id"]
    result = decide(settings, pid[:6], "accept", "kim.ra", "matches our supplier's naming")
    assert result.ok and result.status == "ACCEPTED" and "seed" in result.message
    shown = show_proposal(settings, pid)
    assert shown["status"] == "ACCEPTED" and shown["decided_by"] == "kim.ra"
    assert [d["decision"] for d in shown["decisions"]] == ["ACCEPTED"]
    again = decide(settings, pid, "reject", "lee.ra")
    assert not again.ok and "already ACCEPTED" in again.message
    assert list_proposals(settings) == []
    data = json.loads((settings.state_dir / "proposals" / "20261008_uc4_alias.json").read_text())
    assert data["items"][0]["decision"] == "ACCEPTED"
    after = sorted((p.name, p.stat().st_mtime) for p in seeds.glob("*")) if seeds.exists() else []
    assert before == after


def test_reject_and_bad_input_are_values(tmp_path, monkeypatch):
    settings = queued_day(tmp_path, monkeypatch)
    pid = list_proposals(settings)[0]["proposal_id"]
    assert not decide(settings, pid, "maybe", "kim").ok
    assert not decide(settings, pid, "reject", "  ").ok
    assert not decide(settings, "al-doesnotexist", "reject", "kim").ok
    assert decide(settings, pid, "reject", "kim", "different salt").status == "REJECTED"
    assert show_proposal(settings, "al-nothing") is None


def test_pending_over_seven_days_is_flagged(tmp_path, monkeypatch):
    settings = queued_day(tmp_path, monkeypatch)
    today = list_proposals(settings)[0]
    assert today["age_days"] >= 0
    created = today["created_at"].date()
    assert overdue_proposals(settings, created + timedelta(days=7)) == []
    assert len(overdue_proposals(settings, created + timedelta(days=9))) == 1
    view = query(settings, "select count(*) from enrichment.pending_proposals where not is_overdue")
    assert view == [(1,)]
