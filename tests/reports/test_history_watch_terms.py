"""`dmf history --ingredient` in the watchlist's own words, on a warehouse the real pipeline built.

Two days of real MFDS records (the 2026-10-08 sample) plus one formoterol registration that the
English watch term "Formoterol Fumarate" matches only by transliteration; it is withdrawn on the
second day, so it is found through its WITHDRAWN event, not the registry of today. The Korean
base-name term 클로피도그렐 must find its salt forms the way the watch matching does, the term
아토르바스타틴칼슘삼수화물 the 아토르바스타틴칼슘 whose name does not contain it, and a part of a
Korean name keeps finding names that contain it.
"""

from __future__ import annotations

import pytest

from dmf_watch.commands.cli import main
from support.mfds import SERVICE_KEY, read_jsonl
from support.real_days import DAY_1, DAY_2
from support.scenarios import DaysSource, query, run_days, settings_in

pytestmark = pytest.mark.e2e  # runs two whole days with dbt: the slow tier

FORMOTEROL = "20261008-301-J-9101"
FORMOTEROL_NAME = "포르모테롤푸마르산염이수화물(미분화)"
ATORVASTATIN = "20261008-302-J-9102"  # 아토르바스타틴칼슘: the term 아토르바스타틴칼슘삼수화물's base name


@pytest.fixture(scope="module")
def built(real_data_dir, tmp_path_factory):
    day_1 = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    day_1.append(dict(day_1[0], DMF_PERMIT_NO=FORMOTEROL, INGR_KOR_NAME=FORMOTEROL_NAME, BIZRNO="9990001112"))
    day_1.append(dict(day_1[1], DMF_PERMIT_NO=ATORVASTATIN, INGR_KOR_NAME="아토르바스타틴칼슘", BIZRNO="9990001113"))
    day_2 = [record for record in day_1 if record["DMF_PERMIT_NO"] != FORMOTEROL]
    mp = pytest.MonkeyPatch()
    mp.setenv("DMF_AI_DISABLED", "1")
    try:
        settings = settings_in(tmp_path_factory.mktemp("history_terms"))
        outcomes = run_days(
            settings, DaysSource({DAY_1: day_1, DAY_2: day_2}), [(DAY_1, None), (DAY_2, None)], SERVICE_KEY
        )
    finally:
        mp.undo()
    assert [o.exit_code for o in outcomes] == [0, 0]
    return settings


@pytest.fixture
def history(built, monkeypatch, capsys):
    """`dmf history ARGS` in-process against the built warehouse: (exit code, stdout, stderr)."""
    for name, value in (
        ("DMF_DUCKDB_PATH", built.duckdb_path),
        ("DMF_REPORTS_DIR", built.reports_dir),
        ("DMF_STATE_DIR", built.state_dir),
    ):
        monkeypatch.setenv(name, str(value))

    def run(*args: str) -> tuple[int, str, str]:
        code = main(["history", *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def permit_numbers(settings, where: str) -> set[str]:
    rows = query(settings, f"select distinct permit_no from marts.dmf_registration_history where {where}")
    return {number for (number,) in rows}


def test_the_english_watch_term_finds_the_korean_registration_it_matched_after_its_withdrawal(history):
    for asked in ("Formoterol Fumarate", "Formoterol", "formoterol fumarate"):
        code, out, err = history("--ingredient", asked)
        assert code == 0, err
        assert out.splitlines()[0] == "관심목록 용어 Formoterol Fumarate에 해당하는 등록을 포함합니다."
        assert f"{FORMOTEROL_NAME} · {FORMOTEROL}" in out
        assert "2026-10-09  취하" in out and "현재: 목록에 없음" in out


def test_the_korean_base_name_term_finds_every_salt_form_the_watch_matching_finds(built, history):
    code, out, err = history("--ingredient", "클로피도그렐")
    assert code == 0, err
    salt_forms = permit_numbers(built, "starts_with(ingredient_name, '클로피도그렐황산')")
    assert len(salt_forms) == 3  # 클로피도그렐황산염, one of them withdrawn, and two derived ones
    assert all(number in out for number in salt_forms)
    assert "티클로피딘" not in out  # a name that only shares letters is not a salt form
    assert out.splitlines()[0] == "관심목록 용어 클로피도그렐에 해당하는 등록을 포함합니다."


def test_a_korean_term_as_the_watchlist_writes_it_finds_the_base_name_it_matches(history):
    code, out, err = history("--ingredient", "아토르바스타틴칼슘삼수화물")
    assert code == 0, err
    assert out.splitlines()[0] == "관심목록 용어 아토르바스타틴칼슘삼수화물에 해당하는 등록을 포함합니다."
    assert f"아토르바스타틴칼슘 · {ATORVASTATIN}" in out


def test_part_of_a_korean_name_still_finds_the_names_containing_it(built, history):
    code, out, err = history("--ingredient", "말레산염")
    assert code == 0, err
    expected = permit_numbers(built, "contains(ingredient_name, '말레산염')")
    assert expected and all(number in out for number in expected)
    assert not out.startswith("관심목록 용어")  # no watch term contains it: names only


def test_a_text_no_name_and_no_watch_term_contains_still_finds_nothing(history):
    code, _, err = history("--ingredient", "Salmeterol")
    assert code == 1 and err.startswith("dmf: no registration matches 'Salmeterol'")
