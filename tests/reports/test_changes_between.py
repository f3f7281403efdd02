"""`dmf changes --since D1 [--until D2]`: the net change per registration over a span.

The command's rows are compared with the daily events composed here, independently: each
registration's events of the span applied in date order give its state at both ends and, for
a registration listed at both, each field's value at D1 (the first change's before value) and at
D2 (the last change's after value).
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from datetime import date, timedelta
from pathlib import Path

import openpyxl
import pytest

from dmf_watch.commands.cli import main
from support.mfds import REAL_DATA_DIR, SERVICE_KEY
from support.real_days import (
    DAY_1,
    DAY_2,
    NEW_WATCHED,
    UNWATCHED_CHANGED,
    UNWATCHED_WITHDRAWN,
    WATCHED_COSMETIC,
    WATCHED_TWO_SITES,
    WATCHED_WITHDRAWN,
    two_days,
    with_cosmetic_watched_change,
)
from support.scenarios import DaysSource, point_dmf_at, query, run_days, settings_in
from support.worlds import DEMO_DAYS, DEMO_FIVE_DAYS, REAL_TWO_DAYS

pytestmark = pytest.mark.e2e

WORLD_DAYS = {REAL_TWO_DAYS.name: (date(2026, 10, 8), date(2026, 10, 9)), DEMO_FIVE_DAYS.name: DEMO_DAYS}


def composed_events(settings, since_day: date, until_day: date) -> dict[str, tuple[str, dict[str, tuple]]]:
    """{dmf_key: (net change, {field: (value at D1, value at D2)})} from dmf_events and
    dmf_event_field_changes of the days after since_day up to until_day."""
    events = query(
        settings,
        "select as_of_date, dmf_key, event_type from marts.dmf_events "
        "where as_of_date > ? and as_of_date <= ? order by as_of_date",
        [since_day, until_day],
    )
    changes = query(
        settings,
        "select as_of_date, dmf_key, field_name, before_value, after_value from marts.dmf_event_field_changes "
        "where as_of_date > ? and as_of_date <= ? order by as_of_date",
        [since_day, until_day],
    )
    by_key: dict[str, list[str]] = defaultdict(list)
    for _, key, kind in events:
        by_key[key].append(kind)
    values: dict[str, dict[str, list]] = defaultdict(dict)
    for _, key, field, before, after in changes:
        if field in values[key]:
            values[key][field][1] = after
        else:
            values[key][field] = [before, after]
    composed = {}
    for key, kinds in by_key.items():
        listed_at_start = kinds[0] not in ("NEW", "REINSTATED")
        listed_at_end = kinds[-1] != "WITHDRAWN"
        net = {field: tuple(ends) for field, ends in values[key].items() if ends[0] != ends[1]}
        if not listed_at_start and listed_at_end:
            kind = "NEW" if kinds[0] == "NEW" else "REINSTATED"
        elif listed_at_start and not listed_at_end:
            kind = "WITHDRAWN"
        elif not listed_at_start:
            kind = "APPEARED_AND_WITHDRAWN" if kinds[0] == "NEW" else "REINSTATED_AND_WITHDRAWN"
        elif net:
            kind = "CHANGED"
        elif "WITHDRAWN" in kinds:
            kind = "WITHDRAWN_AND_BACK"
        else:
            kind = "CHANGED_BACK"
        composed[key] = (kind, net if kind == "CHANGED" else {})
    return composed


def read_csv(path: Path) -> dict[str, tuple[str, dict[str, tuple]]]:
    """The command's CSV as {dmf_key: (net change, {field: (value at D1, value at D2)})}."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out: dict[str, tuple[str, dict]] = {}
    for row in rows:
        kind, fields = out.setdefault(row["dmf_key"], (row["기간 중 변화"], {}))
        if row["항목"]:
            fields[row["항목"]] = (row["시작일 값"] or None, row["종료일 값"] or None)
    return out


def changes(root: Path, out: Path, *args: str) -> dict[str, tuple[str, dict]]:
    assert main(["changes", *args, "--out", str(out)]) == 0
    return read_csv(out)


@pytest.fixture(params=[REAL_TWO_DAYS, DEMO_FIVE_DAYS], ids=lambda world: world.name)
def world(request, shelf, tmp_path, monkeypatch):
    with shelf.copied(request.param, tmp_path / "w") as settings:
        point_dmf_at(monkeypatch, tmp_path / "w")
        yield request.param, settings


def test_whole_span_equals_the_composed_daily_events(world, tmp_path):
    which, settings = world
    days = WORLD_DAYS[which.name]
    got = changes(tmp_path, tmp_path / "all.csv", "--since", days[0].isoformat())
    expected = composed_events(settings, days[0], days[-1])
    assert expected, "the world has events over its span"
    assert got == expected
    # the workbook: the action sheet first, every registration once on the second sheet
    assert main(["changes", "--since", days[0].isoformat(), "--out", str(tmp_path / "all.xlsx")]) == 0
    wb = openpyxl.load_workbook(tmp_path / "all.xlsx", read_only=True)
    assert wb.sheetnames == ["조치항목", "전체 변경", "항목별 변경"]
    title = wb["전체 변경"]["A1"].value
    assert days[0].isoformat() in title and days[-1].isoformat() in title
    keys = [row[-1] for row in wb["전체 변경"].iter_rows(min_row=5, values_only=True) if row[-1]]
    assert sorted(keys) == sorted(expected)


def test_a_span_inside_the_history_compares_its_own_ends(shelf, tmp_path, monkeypatch):
    with shelf.copied(DEMO_FIVE_DAYS, tmp_path / "w") as settings:
        point_dmf_at(monkeypatch, tmp_path / "w")
        since, until = DEMO_DAYS[1], DEMO_DAYS[3]
        got = changes(tmp_path, tmp_path / "mid.csv", "--since", since.isoformat(), "--until", until.isoformat())
        assert got == composed_events(settings, since, until)


def test_filters_each_narrow_the_rows(shelf, tmp_path, monkeypatch):
    with shelf.copied(REAL_TWO_DAYS, tmp_path / "w") as settings:
        point_dmf_at(monkeypatch, tmp_path / "w")
        since = "2026-10-08"
        every = changes(tmp_path, tmp_path / "all.csv", "--since", since)
        rows = query(
            settings,
            "select dmf_key, ingredient_name, applicant, applicant_bizrno, manufacturer "
            "from marts.dmf_registration_history",
        )
        versions = defaultdict(list)
        for key, *fields in rows:
            versions[key].append(fields)

        def having(position: int, text: str) -> set[str]:
            return {
                key
                for key in every
                if any(text.lower() in (fields[position] or "").lower() for fields in versions[key])
            }

        watched = {key for (key,) in query(settings, "select dmf_key from marts.dmf_events where on_watchlist")}
        for args, expected in (
            (["--ingredient", "암로디핀"], having(0, "암로디핀")),
            (["--manufacturer", "Another Manufacturer"], having(3, "Another Manufacturer")),
            (["--applicant", "(주)새신청인"], having(1, "(주)새신청인")),
            (["--applicant", "9998887776"], {k for k in every if any(f[2] == "9998887776" for f in versions[k])}),
            (["--watchlist"], watched & set(every)),
        ):
            got = changes(tmp_path, tmp_path / "f.csv", "--since", since, *args)
            assert got and set(got) == expected and len(got) < len(every), args
            assert all(got[key] == every[key] for key in got)


def test_bad_spans_are_refused_in_one_line_and_write_nothing(shelf, tmp_path, monkeypatch, capsys):
    from support.cli import refused

    with shelf.copied(REAL_TWO_DAYS, tmp_path / "w"):
        point_dmf_at(monkeypatch, tmp_path / "w")
        out = tmp_path / "x.xlsx"
        future = (date.today() + timedelta(days=30)).isoformat()
        assert "before the first accepted load" in refused(
            capsys, ["changes", "--since", "2026-10-01", "--out", str(out)]
        )
        assert "is before --since" in refused(
            capsys, ["changes", "--since", "2026-10-09", "--until", "2026-10-08", "--out", str(out)]
        )
        assert "after today" in refused(
            capsys, ["changes", "--since", "2026-10-08", "--until", future, "--out", str(out)]
        )
        blocked = tmp_path / "blocked"
        blocked.write_text("a file, not a directory")
        assert "cannot write" in refused(capsys, ["changes", "--since", "2026-10-08", "--out", str(blocked / "x.xlsx")])
        assert not out.exists() and not list(tmp_path.glob("*.tmp"))


BACK_ON = date(2026, 10, 10)


@pytest.fixture(scope="module")
def back_and_forth(shelf, tmp_path_factory):
    """REAL_TWO_DAYS (support/real_days.py: on day 2 a manufacturer is edited, a watched and an
    unwatched registration leave the list, a watched one loses a site, a watched one changes case
    and a new one appears), then day 3 lists exactly day 1 again: every change of day 2 undone.
    The two days are the shared world, copied; only day 3 is run here."""
    root = tmp_path_factory.mktemp("back_and_forth")
    served = with_cosmetic_watched_change(two_days(REAL_DATA_DIR))
    saved = os.environ.pop("DMF_NOTIFY_URLS", None)
    os.environ["DMF_AI_DISABLED"] = "1"
    try:
        with shelf.copied(REAL_TWO_DAYS, root) as settings:
            outcomes = run_days(settings, DaysSource({BACK_ON: served[DAY_1]}), [(BACK_ON, None)], SERVICE_KEY)
    finally:
        os.environ.pop("DMF_AI_DISABLED")
        if saved is not None:
            os.environ["DMF_NOTIFY_URLS"] = saved
    assert [o.exit_code for o in outcomes] == [0]
    return root, served


def test_a_change_undone_and_a_withdrawal_undone_are_shown_as_such(back_and_forth, tmp_path, monkeypatch):
    root, served = back_and_forth
    point_dmf_at(monkeypatch, root)
    settings = settings_in(root)
    # what day 2 did to day 1's list, from the served records alone
    day_1 = {r["DMF_PERMIT_NO"]: r for r in served[DAY_1]}
    day_2 = {r["DMF_PERMIT_NO"]: r for r in served[DAY_2]}
    touched = {number for number in day_1.keys() | day_2.keys() if day_1.get(number) != day_2.get(number)}
    assert touched == {
        UNWATCHED_CHANGED,
        WATCHED_WITHDRAWN,
        UNWATCHED_WITHDRAWN,
        WATCHED_TWO_SITES,
        WATCHED_COSMETIC,
        NEW_WATCHED,
    }
    key_of = dict(
        query(
            settings,
            f"select permit_no, dmf_key from marts.dmf_registration_history where permit_no in ({', '.join('?' * 6)})",
            sorted(touched),
        )
    )
    assert key_of.keys() == touched
    whole = changes(tmp_path, tmp_path / "whole.csv", "--since", "2026-10-08")
    assert whole == composed_events(settings, DAY_1, BACK_ON)
    assert whole[key_of[UNWATCHED_CHANGED]] == ("CHANGED_BACK", {})
    assert whole[key_of[WATCHED_WITHDRAWN]] == ("WITHDRAWN_AND_BACK", {})
    assert {number: whole[key_of[number]][0] for number in touched} == {
        UNWATCHED_CHANGED: "CHANGED_BACK",
        WATCHED_TWO_SITES: "CHANGED_BACK",
        WATCHED_COSMETIC: "CHANGED_BACK",
        WATCHED_WITHDRAWN: "WITHDRAWN_AND_BACK",
        UNWATCHED_WITHDRAWN: "WITHDRAWN_AND_BACK",
        NEW_WATCHED: "APPEARED_AND_WITHDRAWN",
    }
    first = changes(tmp_path, tmp_path / "first.csv", "--since", "2026-10-08", "--until", "2026-10-09")
    kind, fields = first[key_of[UNWATCHED_CHANGED]]
    assert kind == "CHANGED" and fields["manufacturer"][1] == "Another Manufacturer GmbH"
    assert first[key_of[WATCHED_WITHDRAWN]][0] == "WITHDRAWN"
    # the workbook names them in Korean; the watched withdrawal-and-return is an action
    assert main(["changes", "--since", "2026-10-08", "--out", str(tmp_path / "whole.xlsx")]) == 0
    wb = openpyxl.load_workbook(tmp_path / "whole.xlsx", read_only=True)
    every = [row for row in wb["전체 변경"].iter_rows(min_row=5, values_only=True)]
    kinds = {row[-1]: row[1] for row in every}
    assert kinds[key_of[UNWATCHED_CHANGED]] == "변경 후 원복"
    assert kinds[key_of[WATCHED_WITHDRAWN]] == "취하 후 재등장(내용 같음)"
    actions = [row for row in wb["조치항목"].iter_rows(min_row=5, values_only=True)]
    assert any(row[5] == WATCHED_WITHDRAWN for row in actions)
    # a registration day 2 left alone (the other 360 or so, watched ones included) has no row
    assert set(whole) == {key_of[number] for number in touched}
