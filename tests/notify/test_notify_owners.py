"""Each person gets their own morning: destinations with `owner = "NAME"` in notify.toml receive
the action items of the watch terms NAME owns (seeds/watchlist.csv, column `owner`), with their
reasons, and nothing on a day without any; a destination without an owner gets everything.

Two real days (the 2026-10-08 sample) through the real pipeline: on day 2 김지현's watched
registrations lose a manufacturer, are withdrawn and appear; the registration 박민수 owns only
changes the case of its manufacturer (cosmetic, not an action). Loopback webhook receivers stand
in for each person's chat.
"""

from __future__ import annotations

import pytest

from dmf_watch.commands import cli
from dmf_watch.notify.day import notify_day
from support.loopback import WebhookReceiver
from support.real_days import (
    DAY_2,
    NEW_WATCHED,
    UNWATCHED_WITHDRAWN,
    WATCHED_COSMETIC,
    WATCHED_TWO_SITES,
    WATCHED_WITHDRAWN,
)
from support.worlds import REAL_TWO_DAYS

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

TOKEN = "owner-hook-3b9d"
ROUTES = """
[notify]
attempts = 1
retry_wait_seconds = 0

[destinations.kim]
owner = "김지현"
daily = "INFO"

[destinations.park]
owner = "박민수"
daily = "INFO"

[destinations.team]
daily = "INFO"
"""


@pytest.fixture(scope="module")
def built(shelf, tmp_path_factory):
    with shelf.copied(REAL_TWO_DAYS, tmp_path_factory.mktemp("owners")) as settings:
        (settings.state_dir / "notify.toml").write_text(ROUTES, encoding="utf-8")
        yield settings


def test_each_owner_receives_only_the_items_of_the_terms_they_own(built):
    with WebhookReceiver() as kim, WebhookReceiver() as park, WebhookReceiver() as team:
        env = {
            "DMF_NOTIFY_URL_KIM": kim.url("kim", TOKEN),
            "DMF_NOTIFY_URL_PARK": park.url("park", TOKEN),
            "DMF_NOTIFY_URL_TEAM": team.url("team", TOKEN),
        }
        outcome = notify_day(built, DAY_2, env=env)
        assert outcome.failed == []
        for receiver in (kim, park, team):
            print(f"\n--- {receiver.requests[0]['json']['title'] if receiver.requests else '(nothing received)'}")
            for request in receiver.requests:
                print(request["json"]["message"])

        # 박민수's only item is cosmetic: nothing of theirs, so nothing is sent.
        assert park.requests == []

        assert len(kim.requests) == 1
        mine = kim.requests[0]["json"]
        assert mine["title"].endswith("김지현 담당 3건")
        items = [line for line in mine["message"].splitlines() if line.startswith("- ")]
        assert len(items) == 3
        for number in (WATCHED_TWO_SITES, WATCHED_WITHDRAWN, NEW_WATCHED):
            assert sum(number in line for line in items) == 1, number
        assert all("(사유: " in line for line in items)
        assert UNWATCHED_WITHDRAWN not in mine["message"] and WATCHED_COSMETIC not in mine["message"]

        assert len(team.requests) == 1
        everything = team.requests[0]["json"]["message"]
        for number in (WATCHED_TWO_SITES, WATCHED_WITHDRAWN, NEW_WATCHED, UNWATCHED_WITHDRAWN):
            assert number in everything
        assert WATCHED_COSMETIC not in everything  # counted, but not an action

        notify_day(built, DAY_2, env=env)  # a re-run sends nothing again
        assert (len(kim.requests), len(park.requests), len(team.requests)) == (1, 0, 1)


def test_notify_test_says_which_owner_each_destination_serves(built, monkeypatch, capsys):
    monkeypatch.setenv("DMF_DUCKDB_PATH", str(built.duckdb_path))
    monkeypatch.setenv("DMF_REPORTS_DIR", str(built.reports_dir))
    monkeypatch.setenv("DMF_STATE_DIR", str(built.state_dir))
    monkeypatch.delenv("DMF_NOTIFY_URLS", raising=False)
    with WebhookReceiver() as kim, WebhookReceiver() as team:
        monkeypatch.setenv("DMF_NOTIFY_URL_KIM", kim.url("kim", TOKEN))
        monkeypatch.setenv("DMF_NOTIFY_URL_TEAM", team.url("team", TOKEN))
        assert cli.main(["notify", "test"]) == 0
        assert "김지현 담당 항목만" in kim.requests[0]["json"]["message"]
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["kim (김지현's items): ok", "team (everything): ok"]
    assert TOKEN not in "\n".join(lines)
