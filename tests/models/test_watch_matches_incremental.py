"""Watchlist matching is incremental (int_ingredient_names_matched): a build matches only the
ingredient names it has not matched before, every name again when the watchlist or an alias
changes, forgets the names of a load rejected later, and ends with the rows a `--full-refresh`
build gives. Real daily runs (simulator on loopback, real loader, real dbt) on a project copy
whose seeds the test edits the way an analyst does."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import date
from pathlib import Path

import pytest

from dmf_watch.commands.decisions import decide_load
from dmf_watch.core.config import load_settings
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY, small_registry
from support.scenarios import DaysSource, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAYS = [date(2026, 11, 29), date(2026, 11, 30), date(2026, 12, 1), date(2026, 12, 2)]
NEW_WATCHED_NAME = "로수바스타틴마그네슘"  # new on day 2, covered by the watched base name 로수바스타틴
NEW_UNWATCHED_NAME = "신규시험성분"  # new on day 2, covered by no term
REJECTED_DAY_NAME = "반려시험성분"  # only in day 4's load, which a person rejects
MATCHES = (
    "select ingredient_name_key, watch_term, match_stage, matching_fingerprint, matched_at "
    "from intermediate.int_ingredient_names_matched"
)
EVENT_WATCH_COLUMNS = (
    "select as_of_date, dmf_key, event_type, on_watchlist, watch_terms, watch_matches "
    "from marts.dmf_events order by all"
)
REGISTRATION_WATCH_COLUMNS = (
    "select record_id, on_watchlist, watch_terms, watch_matches "
    "from intermediate.int_registrations_watched order by all"
)


def registration(template: dict, permit_no: str, ingredient: str) -> dict:
    return dict(template, DMF_PERMIT_NO=permit_no, INGR_KOR_NAME=ingredient, DMF_PERMIT_DATE="2026-11-30")


def daily_lists() -> dict[date, list[dict]]:
    """Four days of the synthetic registry; two new names from day 2 on, a third only on day 4."""
    registry = small_registry(1200)
    days = {as_of: [dict(item) for item in registry.items_for(n)] for n, as_of in enumerate(DAYS, start=1)}
    template = days[DAYS[0]][0]
    for as_of in DAYS[1:]:
        days[as_of] += [
            registration(template, "20261130-901-I-1-01", NEW_WATCHED_NAME),
            registration(template, "20261130-902-I-1-01", NEW_UNWATCHED_NAME),
        ]
    days[DAYS[3]].append(registration(template, "20261130-903-I-1-01", REJECTED_DAY_NAME))
    return days


def edit_seeds(project: Path) -> None:
    """An analyst adds a watched ingredient whose names the registry has carried since day 1, and
    approves an alias for the English term (which stops its transliteration match)."""
    with (project / "seeds" / "watchlist.csv").open("a", encoding="utf-8") as seed:
        seed.write("ingredient,졸피뎀,Added by the test,\n")
    with (project / "seeds" / "ingredient_aliases.csv").open("a", encoding="utf-8") as seed:
        seed.write("엔잘루타미드,Formoterol Fumarate,tester,2026-12-01,Added by the test\n")


def matches(settings) -> set[tuple]:
    return set(query(settings, MATCHES))


def without_matched_at(rows: set[tuple]) -> set[tuple]:
    return {row[:4] for row in rows}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Day by day: builds of days 1-2, the seed edit, day 3, day 4 rejected by a person, a build
    with nothing new, then a full refresh. The matches table after each step."""
    root = tmp_path_factory.mktemp("watch-incremental")
    project = root / "project"
    shutil.copytree(
        PROJECT,
        project,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv",
            "target",
            "logs",
            "data",
            "state",
            "reports",
            "tests",
            "__pycache__",
            "*.egg-info",
        ),
    )
    shutil.copytree(PROJECT / "tests" / "dbt", project / "tests" / "dbt")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, project_dir=project, agy_binary="/nonexistent/agy")
    source = DaysSource(daily_lists())

    steps: dict[str, set[tuple]] = {}
    run_days(settings, source, [(DAYS[0], None)], SERVICE_KEY)
    steps["day 1"] = matches(settings)
    run_days(settings, source, [(DAYS[1], None)], SERVICE_KEY)
    steps["day 2"] = matches(settings)
    edit_seeds(project)
    run_days(settings, source, [(DAYS[2], None)], SERVICE_KEY)
    steps["day 3, seeds edited"] = matches(settings)
    run_days(settings, source, [(DAYS[3], None)], SERVICE_KEY)
    steps["day 4"] = matches(settings)
    assert decide_load(settings, DAYS[3], "reject", "tester", "test of a later rejection", echo=lambda line: None) == 0
    steps["day 4 rejected"] = matches(settings)
    assert build(settings).success
    steps["nothing new"] = matches(settings)
    incremental = (query(settings, EVENT_WATCH_COLUMNS), query(settings, REGISTRATION_WATCH_COLUMNS))
    assert build(settings, full_refresh=True).success
    steps["full refresh"] = matches(settings)
    full = (query(settings, EVENT_WATCH_COLUMNS), query(settings, REGISTRATION_WATCH_COLUMNS))
    return steps, incremental, full


def names(rows: set[tuple]) -> set[str]:
    return {row[0] for row in rows}


def test_day_by_day_incremental_matches_equal_a_full_refresh_row_for_row(history):
    steps, incremental, full = history

    assert without_matched_at(steps["nothing new"]) == without_matched_at(steps["full refresh"])
    assert incremental[0] == full[0]  # marts.dmf_events: on_watchlist, watch_terms, watch_matches
    assert incremental[1] == full[1]  # every record of every load
    assert any(row[3] for row in incremental[0]), "the scenario must have watchlist events to compare"


def test_editing_the_watchlist_or_an_alias_rematches_the_names_seen_before(history):
    steps, _, _ = history
    before, after = steps["day 2"], steps["day 3, seeds edited"]

    assert {row[1:3] for row in before if row[0] == "엔잘루타미드"} == {(None, None)}
    assert ("Formoterol Fumarate", "transliteration") in {row[1:3] for row in before}
    zolpidem = {row[0] for row in after if row[1] == "졸피뎀"}
    assert zolpidem and zolpidem <= names(steps["day 1"])  # names the registry carried from day 1
    assert {row[1:3] for row in after if row[0] == "엔잘루타미드"} == {("Formoterol Fumarate", "alias")}
    assert ("Formoterol Fumarate", "transliteration") not in {row[1:3] for row in after}
    assert len({row[3] for row in after}) == 1 and {row[3] for row in after}.isdisjoint({row[3] for row in before})
    assert len({row[4] for row in after}) == 1 and names(after) == names(before)  # every name matched again


def test_an_incremental_build_matches_only_names_it_has_not_matched_before(history):
    steps, _, _ = history

    added_on_day_2 = steps["day 2"] - steps["day 1"]
    assert names(added_on_day_2) == {NEW_WATCHED_NAME, NEW_UNWATCHED_NAME}
    assert steps["day 1"] <= steps["day 2"]  # the day-1 rows untouched, their matched_at included
    assert {row[1:3] for row in added_on_day_2} == {("로수바스타틴", "base_name"), (None, None)}
    assert steps["day 4"] - steps["day 3, seeds edited"] == {
        row for row in steps["day 4"] if row[0] == REJECTED_DAY_NAME
    }
    assert steps["nothing new"] == steps["day 4 rejected"]  # 0 names processed: no row added or replaced


def test_the_names_of_a_load_rejected_later_are_forgotten(history):
    steps, _, _ = history

    assert REJECTED_DAY_NAME in names(steps["day 4"])
    assert REJECTED_DAY_NAME not in names(steps["day 4 rejected"])
    assert steps["day 4 rejected"] == steps["day 4"] - {row for row in steps["day 4"] if row[0] == REJECTED_DAY_NAME}
