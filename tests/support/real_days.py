"""Two days of real MFDS records (the 2026-10-08 sample) with the changes the action-list tests
read: a removed manufacturer of a watched registration, withdrawals, a new watched record."""

from __future__ import annotations

from datetime import date

from support.mfds import read_jsonl

DAY_1, DAY_2 = date(2026, 10, 8), date(2026, 10, 9)
REMOVED_MANUFACTURER = "Devika Active Pharma Sciences Ltd"
KEPT_MANUFACTURER = "Hefei Xianju Pharmaceutical Co., Ltd."
WATCHED_TWO_SITES = "20110916-130-H-178-31"  # 암로디핀베실산염: watched ingredient
WATCHED_WITHDRAWN = "20131108-129-H-255-33"  # 클로피도그렐황산염: watched base name
UNWATCHED_WITHDRAWN = "20050831-13-B-55-02"  # 트리메부틴말레산염, 삼일제약: not watched
UNWATCHED_CHANGED = "20050831-14-B-60-04"
NEW_WATCHED = "20261009-209-J-9001"


def two_days(real_data_dir) -> dict[date, list[dict]]:
    day_1 = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    for record in day_1:
        if record["DMF_PERMIT_NO"] == WATCHED_TWO_SITES:
            record.update(
                MNFCTR_NAME=f"{REMOVED_MANUFACTURER},{KEPT_MANUFACTURER}",
                MNFCTR_PLACE="Plot 12, Hyderabad, India,No. 8, Hefei, China",
                MANUF_COUNTRY_CODE_NM="인도,중국",
            )
    day_2 = []
    for record in day_1:
        record = dict(record)
        number = record["DMF_PERMIT_NO"]
        if number in (WATCHED_WITHDRAWN, UNWATCHED_WITHDRAWN):
            continue
        if number == WATCHED_TWO_SITES:
            record.update(
                MNFCTR_NAME=KEPT_MANUFACTURER, MNFCTR_PLACE="No. 8, Hefei, China", MANUF_COUNTRY_CODE_NM="중국"
            )
        if number == UNWATCHED_CHANGED:
            record.update(MNFCTR_NAME="Another Manufacturer GmbH")
        day_2.append(record)
    day_2.append(
        dict(
            day_1[166],
            DMF_PERMIT_NO=NEW_WATCHED,
            DMF_PERMIT_DATE="2026-10-09",
            ENTP_NAME="(주)새신청인",
            BIZRNO="9998887776",
        )
    )
    return {DAY_1: day_1, DAY_2: day_2}


WATCHED_COSMETIC = "20050831-37-C-34-05(7)"  # 메트포르민염산염: a term another owner follows
COSMETIC_MANUFACTURER = "GRANULES INDIA LIMITED"  # was "Granules India Limited": case only


def with_cosmetic_watched_change(days: dict[date, list[dict]]) -> dict[date, list[dict]]:
    """The two days, plus a case-only change of a watched registration's manufacturer on day 2:
    a COSMETIC event that is on the watchlist and still not an action."""
    day_2 = [
        dict(record, MNFCTR_NAME=COSMETIC_MANUFACTURER) if record["DMF_PERMIT_NO"] == WATCHED_COSMETIC else record
        for record in days[DAY_2]
    ]
    return {DAY_1: days[DAY_1], DAY_2: day_2}
