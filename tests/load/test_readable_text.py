"""Comparison keys see what a reader sees: a name sent decomposed (Unicode NFD) is the name sent
composed, for change detection and for the watchlist, whichever side is decomposed; text that is
not valid UTF-8 is kept as received in raw and flagged, never replaced, and its record is
quarantined (no mojibake CHANGED; its registration keeps its last good version).

Before: 20 real records re-sent in NFD gave 20 CHANGED whose before and after look the same, and
a watched ingredient in NFD silently left the watchlist. Real records over the simulator, a real
dbt build of a project copy whose watchlist is written in the other normalization.

The three tests read the same two days and write nothing, so the days are replayed once for the
module (each replay is a dbt build and, on its project copy, a parse of its own)."""

from __future__ import annotations

import dataclasses
import shutil
import unicodedata
from datetime import date, timedelta

import pytest

from dmf_watch.core.config import PROJECT_DIR, load_settings
from dmf_watch.simulator.server import StaticSource
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # whole days through dbt: the slow tier

DAY_1 = date(2026, 10, 8)
DAY_2 = DAY_1 + timedelta(days=1)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.fixture(scope="module")
def replayed(real_sample, tmp_path_factory):
    """Day 1: the real records as sent (NFC). Day 2: 20 of them with ingredient and applicant in
    NFD, one with a decomposed accent, one whose applicant arrived as CP949 bytes. The watchlist
    names one ingredient in NFD and one in NFC whose records arrive in NFD on day 2."""
    composed_term = real_sample[0]["INGR_KOR_NAME"]  # its records turn NFD on day 2
    decomposed_term = real_sample[50]["INGR_KOR_NAME"]  # written NFD in the watchlist
    assert nfd(composed_term) != composed_term and nfd(decomposed_term) != decomposed_term
    tmp_path = tmp_path_factory.mktemp("readable_text")
    project = tmp_path / "project"
    shutil.copytree(
        PROJECT_DIR, project, ignore=shutil.ignore_patterns(".*", "target", "logs", "data", "state", "reports", "tests")
    )
    shutil.copytree(PROJECT_DIR / "tests" / "dbt", project / "tests" / "dbt")
    (project / "seeds" / "watchlist.csv").write_text(
        f"term_kind,term,note\ningredient,{composed_term},NFC term\ningredient,{nfd(decomposed_term)},NFD term\n",
        encoding="utf-8",
    )
    tmp_settings = load_settings({}).with_paths(
        duckdb_path=tmp_path / "data" / "dmf.duckdb", reports_dir=tmp_path / "reports", state_dir=tmp_path / "state"
    )
    settings = dataclasses.replace(tmp_settings, project_dir=project, agy_binary="/nonexistent/agy")

    day_2 = [dict(record) for record in real_sample]
    decomposed = [i for i, r in enumerate(day_2) if r["INGR_KOR_NAME"] == composed_term][:1] + list(range(100, 119))
    for i in decomposed:
        day_2[i]["INGR_KOR_NAME"] = nfd(day_2[i]["INGR_KOR_NAME"])
        day_2[i]["ENTP_NAME"] = nfd(day_2[i]["ENTP_NAME"])
    accented = 56  # a Spanish site: Besòs, Montmeló
    day_2[accented]["MNFCTR_PLACE"] = nfd(day_2[accented]["MNFCTR_PLACE"])
    assert day_2[accented]["MNFCTR_PLACE"] != real_sample[accented]["MNFCTR_PLACE"]
    # bytes that are not UTF-8 reach the loader as surrogateescape, as a CP949 body would
    undecodable = 200
    day_2[undecodable]["ENTP_NAME"] = (
        real_sample[undecodable]["ENTP_NAME"].encode("cp949").decode("utf-8", "surrogateescape")
    )

    outcomes = run_days(settings, StaticSource(real_sample, start_date=DAY_1), [(DAY_1, None)], SERVICE_KEY)
    outcomes += run_days(settings, StaticSource(day_2, start_date=DAY_1), [(DAY_2, None)], SERVICE_KEY)
    return settings, outcomes, composed_term, decomposed_term, real_sample[undecodable]


@pytest.mark.fault("names in Unicode NFD (decomposed Hangul, combining accents)")
def test_names_sent_decomposed_are_no_change(replayed):
    """20 records re-sent in NFD and an accent decomposed: exit 0, no CHANGED for any of them"""
    settings, outcomes, *_ = replayed
    assert [o.exit_code for o in outcomes] == [0, 0]
    changed = query(
        settings, "select ingredient_name, changed_fields from marts.dmf_events where as_of_date = ?", [DAY_2]
    )
    assert changed == []  # the undecodable one is quarantined, not a CHANGED


@pytest.mark.fault("names in Unicode NFD (decomposed Hangul, combining accents)")
def test_a_watch_term_matches_whatever_the_normalization_of_either_side(replayed, real_sample):
    """an NFD watch term matches the NFC registry and an NFC term the NFD records: none leave the watchlist"""
    settings, _, composed_term, decomposed_term, _ = replayed
    watched = query(settings, "select ingredient_name, watch_terms from marts.dmf_registrations where on_watchlist")
    for term in (composed_term, decomposed_term):
        exact = sum(1 for r in real_sample if r["INGR_KOR_NAME"] == term)
        assert sum(1 for name, _ in watched if name == term) >= exact > 0, (term, watched)
    # the registry's names are shown as a reader sees them: composed
    names = [row[0] for row in query(settings, "select ingredient_name from marts.dmf_registrations")]
    assert all(name == unicodedata.normalize("NFC", name) for name in names if name)


@pytest.mark.fault("a name sent as CP949 bytes")
def test_text_that_is_not_utf8_is_kept_escaped_and_quarantined(replayed):
    """kept escaped in raw (the bytes recoverable, no U+FFFD), undecodable_text names the field, the
    record quarantined: no CHANGED, its registration keeps its last good version"""
    settings, _, _, _, record = replayed
    ((observed, fired, text),) = query(
        settings,
        "select observed, fired, baseline_text from marts.dmf_signals where as_of_date = ? and signal_id = 'undecodable_text'",
        [DAY_2],
    )
    assert (observed, fired) == (1.0, True) and "항목: applicant" in text
    assert query(
        settings,
        "select count(*) from marts.dmf_event_field_changes where as_of_date = ? and field_name = 'applicant'",
        [DAY_2],
    ) == [(0,)]
    ((stored,),) = query(
        settings,
        "select entp_name from mfds_raw.dmf_items where as_of_date = ? and dmf_permit_no = ?",
        [DAY_2, record["DMF_PERMIT_NO"]],
    )
    assert stored.startswith("\u241b") and "\\udc" in stored  # escaped, the bytes recoverable, nothing replaced
    assert "\ufffd" not in stored
    ((applicant,),) = query(
        settings, "select applicant from marts.dmf_registrations where permit_no = ?", [record["DMF_PERMIT_NO"]]
    )
    assert applicant == record["ENTP_NAME"].strip()  # the last good version
    ((kind, detail),) = query(
        settings,
        "select quarantine_kind, quarantine_detail from intermediate.int_load_items_quarantined where as_of_date = ?",
        [DAY_2],
    )
    assert (kind, detail) == ("unreadable_text", "applicant: UTF-8 이 아닌 바이트(CP949 등)")
