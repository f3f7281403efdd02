"""The daily report of a real run (real tails over the loopback simulator, real dbt, xlsx read
back): an English watch term (`Formoterol Fumarate` in seeds/watchlist.csv) matched to its
Hangul registration by the transliteration stage, a registration back after a one-day
withdrawal shown as REINSTATED beside the NEW ones, and every watch term of every kind that
matches nothing listed with why: a term no registration ever matched (a typo, most often) apart
from one whose registrations were all withdrawn."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import date
from pathlib import Path

import openpyxl
import pytest

from dmf_watch.core.config import load_settings
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, query, run_days
from support.xlsx import table

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAY_1, DAY_2, DAY_3 = date(2026, 9, 25), date(2026, 9, 26), date(2026, 9, 27)
FORMOTEROL = {  # a made-up registration written as the registry writes it: new on day 2, gone on day 3
    "DMF_PERMIT_NO": "20260924-209-J-9901",
    "INGR_KOR_NAME": "포르모테롤푸마르산염이수화물(미분화)",
    "ENTP_NAME": "시험제약(주)",
    "MNFCTR_NAME": "Example Chemie GmbH",
    "MNFCTR_PLACE": "Beispielstrasse 1, 12345 Berlin, Germany",
    "MANUF_COUNTRY_CODE_NM": "독일",
    "DMF_PERMIT_DATE": "2026-09-24",
    "BIZRNO": "1234567890",
    "NOTICE_CODE": "별표1",
}
# Watch terms an analyst adds (seeds/watchlist.csv of the project copy): three that no record of
# the tails carries, and FORMOTEROL's manufacturer and BIZRNO, which match it on day 2 only.
ADDED_TERMS = [
    ("manufacturer", "Nowhere Fine Chemicals"),
    ("applicant", "없는시험제약(주)"),
    ("applicant", "9990000000"),
    ("manufacturer", "Example Chemie"),
    ("applicant", "1234567890"),
]
UNMATCHED = "select watch_term, term_kind, unmatched_reason, candidates from marts.dmf_watchlist_unmatched"
NEVER, WITHDRAWN = "일치하는 등록 없음(오타 확인)", "모든 등록 취하됨"
KIND = {"ingredient": "성분", "applicant": "신청인", "manufacturer": "제조소"}
REASON = {"never_matched": NEVER, "all_withdrawn": WITHDRAWN}


@pytest.fixture(scope="module")
def run(real_data_dir, tmp_path_factory):
    """Days 1-3 through the real daily job on a project copy with ADDED_TERMS watched; day 2 loses
    one real registration (back on day 3) and gains FORMOTEROL, which leaves again on day 3.
    Returns the settings, the tail, the registration away on day 2, and the unmatched-terms mart
    after day 2 and after day 3 (it holds the latest day only)."""
    root = tmp_path_factory.mktemp("identity-and-terms")
    project = root / "project"
    shutil.copytree(
        PROJECT,
        project,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "target", "logs", "data", "state", "reports", "tests", "__pycache__", "*.egg-info"
        ),
    )
    shutil.copytree(PROJECT / "tests" / "dbt", project / "tests" / "dbt")
    with (project / "seeds" / "watchlist.csv").open("a", encoding="utf-8") as seed:
        seed.writelines(f"{kind},{term},Added by the test,\n" for kind, term in ADDED_TERMS)
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
    settings = dataclasses.replace(settings, project_dir=project, agy_binary="/nonexistent/agy")

    tail = [r for r in read_jsonl(real_data_dir / "tail_A_2026-09-23.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    away = tail[1]
    days = {DAY_1: tail, DAY_2: [r for r in tail if r is not away] + [FORMOTEROL], DAY_3: tail}
    source = DaysSource(days)
    outcomes = run_days(settings, source, [(DAY_1, None), (DAY_2, None)], SERVICE_KEY)
    after_day_2 = query(settings, UNMATCHED)
    outcomes += run_days(settings, source, [(DAY_3, None)], SERVICE_KEY)
    after_day_3 = query(settings, UNMATCHED)
    assert [o.exit_code for o in outcomes] == [0, 0, 0]
    return settings, away, after_day_2, after_day_3


def workbook(settings, day: date) -> openpyxl.Workbook:
    return openpyxl.load_workbook(settings.reports_dir / f"dmf_daily_{day:%Y%m%d}.xlsx")


def unmatched_section(ws) -> list[tuple]:
    """(관심 항목, 종류, 찾지 못한 이유, 후보) of each row under the watchlist sheet's heading of
    unmatched terms, or the one-cell text the table shows when it has no row."""
    heading = next(c.row for c in ws["A"] if c.value == "오늘 데이터에서 찾지 못한 관심 항목")
    headers = [c.value for c in ws[heading + 1]]
    assert headers[:4] == ["관심 항목", "종류", "찾지 못한 이유", "비슷한 이름 후보(규칙 기반)"]
    rows = []
    for r in range(heading + 2, ws.max_row + 1):
        values = tuple(ws.cell(r, c).value for c in range(1, 5))
        if all(v is None for v in values):
            break
        rows.append(values)
    return rows


def test_report_shows_english_term_matches_with_their_stage_and_reinstated_registrations(run):
    settings, away, after_day_2, _ = run

    day_2 = workbook(settings, DAY_2)
    watched = [row for row in table(day_2["관심목록"]) if row["등록번호"].value == FORMOTEROL["DMF_PERMIT_NO"]]
    assert [(r["구분"].value, r["관심 키워드"].value, r["일치 방식"].value) for r in watched] == [
        (
            "신규",
            "1234567890, Example Chemie, Formoterol Fumarate",
            "1234567890 (신청인), Example Chemie (제조소), Formoterol Fumarate (영문 음역)",
        )
    ]
    assert "Formoterol Fumarate" not in {row[0] for row in after_day_2}

    day_3 = workbook(settings, DAY_3)
    back = [(r["구분"].value, r["등록번호"].value, r["부재 일수"].value) for r in table(day_3["신규"])]
    assert back == [("재등장", away["DMF_PERMIT_NO"], 1)]
    keys = query(
        settings,
        "select event_type, dmf_key from marts.dmf_events where permit_no = ? order by as_of_date",
        [away["DMF_PERMIT_NO"]],
    )
    assert [k[0] for k in keys] == ["WITHDRAWN", "REINSTATED"] and keys[0][1] == keys[1][1]


@pytest.mark.fault("watch terms of every kind that match nothing (a typo, or all withdrawn)")
def test_every_unmatched_watch_term_of_every_kind_is_listed_with_why_in_the_mart_and_the_report(run):
    settings, _, after_day_2, after_day_3 = run
    added = set(ADDED_TERMS) | {("ingredient", "Formoterol Fumarate")}

    def of_added(rows):
        return sorted(
            (term, kind, reason, candidates) for term, kind, reason, candidates in rows if (kind, term) in added
        )

    # day 2: FORMOTEROL is listed and matches its three terms; the others never matched anything
    assert of_added(after_day_2) == [
        ("9990000000", "applicant", "never_matched", None),
        ("Nowhere Fine Chemicals", "manufacturer", "never_matched", None),
        ("없는시험제약(주)", "applicant", "never_matched", None),
    ]
    # day 3: FORMOTEROL is withdrawn, so every term that matched only it is unmatched again, not as a typo
    day_3_rows = of_added(after_day_3)
    assert [row[:3] for row in day_3_rows] == [
        ("1234567890", "applicant", "all_withdrawn"),
        ("9990000000", "applicant", "never_matched"),
        ("Example Chemie", "manufacturer", "all_withdrawn"),
        ("Formoterol Fumarate", "ingredient", "all_withdrawn"),
        ("Nowhere Fine Chemicals", "manufacturer", "never_matched"),
        ("없는시험제약(주)", "applicant", "never_matched"),
    ]
    # only ingredient terms get candidate names (the AI alias section's input)
    assert {kind: candidates is not None for _, kind, _, candidates in day_3_rows} == {
        "applicant": False,
        "manufacturer": False,
        "ingredient": True,
    }

    for day, mart in ((DAY_2, after_day_2), (DAY_3, after_day_3)):
        sheet = unmatched_section(workbook(settings, day)["관심목록"])
        # every row of the mart, of every kind, and nothing else, with its reason in Korean
        assert sorted(row[:3] for row in sheet) == sorted(
            (term, KIND[kind], REASON.get(reason, reason)) for term, kind, reason, _ in mart
        )
        assert {kind for _, kind, _ in (row[:3] for row in sheet)} >= {"신청인", "제조소"}
    day_3_sheet = {row[0]: row[2] for row in unmatched_section(workbook(settings, DAY_3)["관심목록"])}
    assert day_3_sheet["Example Chemie"] == WITHDRAWN and day_3_sheet["1234567890"] == WITHDRAWN
    assert day_3_sheet["Nowhere Fine Chemicals"] == NEVER and day_3_sheet["9990000000"] == NEVER
