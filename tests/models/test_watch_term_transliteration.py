"""The Latin <-> Hangul key of the watchlist's transliteration stage, run as the pipeline runs it:
the dbt macros compiled by dbt, on seeded translation tables, executed in DuckDB."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # compiles the macros with dbt: the slow tier


def _load_benchmark(name: str):
    """The benchmark script's module, imported by path: benchmarks/ is scripts, not a package."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run_matcher = _load_benchmark("eval_watch_terms").run_matcher

NAMES = [
    "숙신산솔리페나신",
    "솔리페나신숙신산염",
    "염산테르비나핀",
    "테르비나핀염산염",
    "포르모테롤푸마르산염이수화물(미분화)",
    "로수바스타틴칼슘",
    "로수바스타틴마그네슘",
    "암로디핀베실산염",
    "케토티펜",
    "쿠에티아핀푸마르산염",
    "이부프로펜",
    "프로파페논염산염",
    "알렌드론산나트륨수화물",
    "트라넥삼산",
    "젬시타빈염산염",
    "겐타마이신황산염",
]
TERMS = [
    "Solifenacin Succinate",
    "Terbinafine HCl",
    "Formoterol Fumarate",
    "Rosuvastatin Calcium",
    "Rosuvastatin",
    "Amlodipine Maleate",
    "Quetiapine Fumarate",
    "Ibuprofen",
    "Alendronate Sodium",
    "Tranexamic Acid",
    "Gemcitabine Hydrochloride",
    "Gentamicin Sulfate",
]


@pytest.fixture(scope="module")
def matched():
    return run_matcher(TERMS, NAMES)


def test_korean_salt_first_names_match_their_salt_last_forms(matched):
    found, _ = matched
    assert found["Solifenacin Succinate"] == {"숙신산솔리페나신", "솔리페나신숙신산염"}
    assert found["Terbinafine HCl"] == {"염산테르비나핀", "테르비나핀염산염"}


def test_an_english_term_matches_its_hangul_name_through_hydrate_and_micronized_words(matched):
    assert matched[0]["Formoterol Fumarate"] == {"포르모테롤푸마르산염이수화물(미분화)"}


def test_a_named_salt_must_be_there_and_a_term_without_salt_covers_every_salt(matched):
    found, _ = matched
    assert found["Rosuvastatin Calcium"] == {"로수바스타틴칼슘"}
    assert found["Rosuvastatin"] == {"로수바스타틴칼슘", "로수바스타틴마그네슘"}
    assert "Amlodipine Maleate" not in found  # only the besylate is registered


def test_vowels_keep_similar_skeletons_apart(matched):
    found, _ = matched
    assert found["Quetiapine Fumarate"] == {"쿠에티아핀푸마르산염"}  # not 케토티펜
    assert found["Ibuprofen"] == {"이부프로펜"}  # not 프로파페논


def test_acids_their_salts_and_soft_or_hard_g_are_read_both_ways(matched):
    found, _ = matched
    assert found["Alendronate Sodium"] == {"알렌드론산나트륨수화물"}
    assert found["Tranexamic Acid"] == {"트라넥삼산"}
    assert found["Gemcitabine Hydrochloride"] == {"젬시타빈염산염"}
    assert found["Gentamicin Sulfate"] == {"겐타마이신황산염"}


def test_the_ai_candidates_of_an_english_term_start_with_the_plausible_names(matched):
    _, offered = matched
    assert "포르모테롤푸마르산염이수화물(미분화)" in offered["Formoterol Fumarate"]
    assert len(offered["Formoterol Fumarate"]) == 8
