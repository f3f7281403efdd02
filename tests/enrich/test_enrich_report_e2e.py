"""The AI layer on real dbt marts, read back from the rendered report: every degradation case
still yields the full report with its badge; a good answer shows up as AI text; re-runs and an
open circuit make no further call.

The two real days the enrich step reads are the real tails' world, built once per session and
copied (support/worlds.py). The tests that run whole days with agy start from its first day,
replayed with the AI off (`replayed_baseline`): a first day has no events, so agy is never called
on it (the one test that counts it says so by running that day's enrich step with agy on), and a
baseline replayed with the AI off is shared by the session instead of built again by each test.
The days the tests are about run with agy on, through the real daily job.
"""

from __future__ import annotations

import dataclasses
from datetime import date

import openpyxl
import pytest

from dmf_watch.core.config import load_settings
from dmf_watch.enrich.badges import BADGE_TEXT
from dmf_watch.enrich.daily_briefing import enrich_day
from dmf_watch.reports.daily_report import AI_COMMENT_HEADER, render_daily
from fake_agy.support import FAKE_AGY, fake_calls, fake_env
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, query, run_days
from support.scenarios import settings_in as settings_without_agy
from support.worlds import REAL_TAILS, REAL_TAILS_DAYS

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 9, 25), date(2026, 10, 8), date(2026, 10, 9)
assert (DAY_1, DAY_2) == REAL_TAILS_DAYS  # the first two days are the real tails' world
DASHBOARD, NEW_SHEET = "요약", "신규"
HEADER_ROW = 4  # event sheets: title, note, blank, header
HOSTILE_MANUFACTURER = '=HYPERLINK("http://example.com","x")'
HOSTILE_INGREDIENT = "@SUM(1+1)아세트아미노펜"


def event_rows(sheet) -> list[dict]:
    header = [cell.value for cell in sheet[HEADER_ROW]]
    return [
        dict(zip(header, row))
        for row in sheet.iter_rows(min_row=HEADER_ROW + 1, values_only=True)
        if any(value is not None for value in row)
    ]


def real_days(real_data_dir) -> dict[date, list[dict]]:
    tail_a = [r for r in read_jsonl(real_data_dir / "tail_A_2026-09-23.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    tail_b = [r for r in read_jsonl(real_data_dir / "tail_B_2026-10-08.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    day_3 = tail_b + [
        dict(tail_b[-1], DMF_PERMIT_NO="20261009-211-J-9999", DMF_PERMIT_DATE="2026-10-09"),
        dict(
            tail_b[-1],
            DMF_PERMIT_NO="20261009-211-J-9998",
            DMF_PERMIT_DATE="2026-10-09",
            MNFCTR_NAME=HOSTILE_MANUFACTURER,
        ),
        dict(
            tail_b[-1],
            DMF_PERMIT_NO="20261009-211-J-9997",
            DMF_PERMIT_DATE="2026-10-09",
            INGR_KOR_NAME=HOSTILE_INGREDIENT,
        ),
    ]
    return {DAY_1: tail_a, DAY_2: tail_b, DAY_3: day_3}


def settings_in(root, binary=FAKE_AGY):
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "agy.toml").write_text(
        '[enrich]\nretry_backoff_seconds = 0\nprint_timeout = "3s"\nhard_kill_grace_seconds = 1\n', encoding="utf-8"
    )
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=state
    )
    return dataclasses.replace(settings, agy_binary=str(binary))


def replayed_baseline(real_data_dir, tmp_path):
    """The baseline day through the daily job with the AI off and no agy set up yet, as the real
    tails' world replays its first day (support/worlds.py): a copy of the replay the session
    shares (support/replays.py). Then the settings with the fake agy, for the days after it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DMF_AI_DISABLED", "1")
        (baseline,) = run_days(
            settings_without_agy(tmp_path), DaysSource(real_days(real_data_dir)), [(DAY_1, None)], SERVICE_KEY
        )
    assert baseline.exit_code == 0
    return settings_in(tmp_path)


@pytest.fixture
def warehouse(shelf, tmp_path):
    """DAY_1 and DAY_2 loaded and built by the daily job with the AI off (the real tails' world,
    the same two days): the marts enrich reads; then the fake agy's settings."""
    with shelf.copied(REAL_TAILS, tmp_path / "warehouse"):
        yield settings_in(tmp_path / "warehouse")


def dashboard_text(path) -> str:
    sheet = openpyxl.load_workbook(path)[DASHBOARD]
    return "\n".join(str(cell.value) for row in sheet.iter_rows() for cell in row if cell.value is not None)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("error", "agy_error"),
        ("auth", "auth"),
        ("quota", "quota"),
        ("timeout", "timeout"),
        ("empty", "schema_invalid"),
        ("enum", "schema_invalid"),
        ("nonjson", "invalid_output"),
    ],
)
def test_a_failing_agy_still_gives_the_full_report_with_its_badge(warehouse, tmp_path, monkeypatch, mode, reason):
    fake_env(monkeypatch, tmp_path, mode, FAKE_AGY_SLEEP="30")
    outcome = enrich_day(warehouse, DAY_2)
    assert outcome.skip_reason == reason

    report = render_daily(warehouse, DAY_2)

    workbook = openpyxl.load_workbook(report)
    assert {DASHBOARD, NEW_SHEET, "변경", "취하"} <= set(workbook.sheetnames)
    assert BADGE_TEXT[reason] in dashboard_text(report)
    assert len(event_rows(workbook[NEW_SHEET])) == 22  # the facts are all there


@pytest.mark.parametrize(("setup", "reason"), [("missing_binary", "binary_missing"), ("disabled", "disabled")])
def test_no_agy_at_all_still_gives_the_full_report_with_its_badge(warehouse, tmp_path, monkeypatch, setup, reason):
    fake_env(monkeypatch, tmp_path)
    if setup == "missing_binary":
        warehouse = dataclasses.replace(warehouse, agy_binary=str(tmp_path / "nowhere" / "agy"))
    else:
        monkeypatch.setenv("DMF_AI_DISABLED", "1")
    assert enrich_day(warehouse, DAY_2).skip_reason == reason
    assert BADGE_TEXT[reason] in dashboard_text(render_daily(warehouse, DAY_2))


def test_a_good_answer_shows_the_headline_and_comments_and_drops_inventions(warehouse, tmp_path, monkeypatch):
    log = fake_env(monkeypatch, tmp_path, "invent")
    outcome = enrich_day(warehouse, DAY_2)
    assert outcome.ok and len(fake_calls(log)) == 1
    assert outcome.dropped["event_unknown_key"] == 1  # the invented dmf_key
    assert outcome.dropped["alias_not_offered"] >= 1  # names outside the offered candidates

    report = render_daily(warehouse, DAY_2)

    assert "오늘 이벤트 23건" in dashboard_text(report)
    comments = [row[AI_COMMENT_HEADER] for row in event_rows(openpyxl.load_workbook(report)[NEW_SHEET])]
    assert len(comments) == 22 and all(comment == "변경 내용을 확인하십시오." for comment in comments)
    stored = query(warehouse, "select item_key from enrichment.enrichment where kind = 'event_comment'")
    real_keys = {key for (key,) in query(warehouse, "select dmf_key from marts.dmf_events")}
    assert stored and {key for (key,) in stored} <= real_keys
    proposals = query(warehouse, "select candidate_ingredient_name, watch_term from enrichment.proposals")
    offered = {
        term: cands
        for term, cands in query(warehouse, "select watch_term, candidates from marts.dmf_watchlist_unmatched")
    }
    assert all(candidate in offered[term] for candidate, term in proposals)


def test_running_a_day_twice_calls_agy_once(real_data_dir, tmp_path, monkeypatch):
    settings = replayed_baseline(real_data_dir, tmp_path)
    log = fake_env(monkeypatch, tmp_path, "ok")
    assert enrich_day(settings, DAY_1).skip_reason == "diff_empty"  # the baseline has no events: no call
    run_days(settings, DaysSource(real_days(real_data_dir)), [(DAY_2, None), (DAY_2, None)], SERVICE_KEY)
    assert len(fake_calls(log)) == 1  # the re-run reuses the answer


def test_a_quota_error_opens_the_circuit_and_the_next_day_makes_no_call(real_data_dir, tmp_path, monkeypatch):
    settings = replayed_baseline(real_data_dir, tmp_path)
    log = fake_env(monkeypatch, tmp_path, "quota,ok")
    run_days(settings, DaysSource(real_days(real_data_dir)), [(DAY_2, None), (DAY_3, None)], SERVICE_KEY)
    assert len(fake_calls(log)) == 1
    runs = dict(query(settings, "select as_of_date, skip_reason from enrichment.enrichment_run where kind = 'daily'"))
    assert runs[DAY_2] == "quota" and runs[DAY_3] == "circuit_open"
    report = settings.reports_dir / "dmf_daily_20261009.xlsx"
    assert BADGE_TEXT["circuit_open"] in dashboard_text(report)

    # companies' free text from the registry reaches the report as plain, guarded text
    new_sheet = openpyxl.load_workbook(report)[NEW_SHEET]
    cells = [cell for row in new_sheet.iter_rows(min_row=HEADER_ROW + 1) for cell in row if cell.value]
    assert all(cell.data_type != "f" for cell in cells)
    values = {cell.value for cell in cells}
    assert "'" + HOSTILE_MANUFACTURER in values and "'" + HOSTILE_INGREDIENT in values


@pytest.mark.parametrize("mode", ["error", "quota"])
def test_a_rerun_after_a_failed_ai_step_writes_the_same_report_and_the_calls_stay_in_agy_calls(
    real_data_dir, tmp_path, monkeypatch, mode
):
    settings = replayed_baseline(real_data_dir, tmp_path)
    log = fake_env(monkeypatch, tmp_path, mode)
    source = DaysSource(real_days(real_data_dir))
    run_days(settings, source, [(DAY_2, None)], SERVICE_KEY)
    report = settings.reports_dir / "dmf_daily_20261008.xlsx"
    first_bytes, first_calls = report.read_bytes(), len(fake_calls(log))
    assert first_calls >= 1

    (rerun,) = run_days(settings, source, [(DAY_2, None)], SERVICE_KEY)

    assert rerun.exit_code == 0
    assert report.read_bytes() == first_bytes
    # an agy error is retried once per re-run; a quota error opened the circuit: no call until it closes
    assert (len(fake_calls(log)) > first_calls) == (mode == "error")
    recorded = query(settings, "select count(*) from enrichment.agy_calls where as_of_date = ?", [DAY_2])
    assert recorded == [(len(fake_calls(log)),)]  # every attempt is in the audit table
    reasons = query(
        settings, "select distinct skip_reason from enrichment.enrichment_run where as_of_date = ?", [DAY_2]
    )
    assert reasons == [("agy_error" if mode == "error" else "quota",)]
