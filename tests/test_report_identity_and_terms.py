"""The daily report of a real run (real tails over the loopback simulator, real dbt, xlsx read
back): an English watch term (`Formoterol Fumarate` in seeds/watchlist.csv) matched to its
Hangul registration by the transliteration stage, and a registration back after a one-day
withdrawal shown as REINSTATED beside the NEW ones."""

from __future__ import annotations

import dataclasses
from datetime import date

import openpyxl
import pytest

from conftest import SERVICE_KEY, read_jsonl
from scenarios import DaysSource, query, run_days
from test_report_daily import table

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 9, 25), date(2026, 9, 26), date(2026, 9, 27)
FORMOTEROL = {  # a made-up registration written as the registry writes it
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


def test_report_shows_english_term_matches_with_their_stage_and_reinstated_registrations(real_data_dir, tmp_settings):
    tail = [r for r in read_jsonl(real_data_dir / "tail_A_2026-09-23.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    away = tail[1]
    days = {DAY_1: tail, DAY_2: [r for r in tail if r is not away] + [FORMOTEROL], DAY_3: tail + [FORMOTEROL]}
    settings = dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy")

    outcomes = run_days(settings, DaysSource(days), [(day, None) for day in days], SERVICE_KEY)

    assert [o.exit_code for o in outcomes] == [0, 0, 0]
    day_2 = openpyxl.load_workbook(settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx")
    watched = [row for row in table(day_2["관심목록"]) if row["등록번호"].value == FORMOTEROL["DMF_PERMIT_NO"]]
    assert [(r["구분"].value, r["관심 키워드"].value, r["일치 방식"].value) for r in watched] == [
        ("신규", "Formoterol Fumarate", "Formoterol Fumarate (transliteration)")
    ]
    assert (
        query(settings, "select watch_term from marts.dmf_watchlist_unmatched where watch_term = 'Formoterol Fumarate'")
        == []
    )

    day_3 = openpyxl.load_workbook(settings.reports_dir / f"dmf_daily_{DAY_3:%Y%m%d}.xlsx")
    back = [(r["구분"].value, r["등록번호"].value, r["부재 일수"].value) for r in table(day_3["신규"])]
    assert back == [("재등장", away["DMF_PERMIT_NO"], 1)]
    keys = query(
        settings,
        "select event_type, dmf_key from marts.dmf_events where permit_no = ? order by as_of_date",
        [away["DMF_PERMIT_NO"]],
    )
    assert [k[0] for k in keys] == ["WITHDRAWN", "REINSTATED"] and keys[0][1] == keys[1][1]
