"""The synthetic registry: realistic texture, uniqueness, and exact day-by-day ground truth.

The truth is checked against a reference diff written here from the pipeline's rules
(trim, drop CR/LF, collapse spaces; cosmetic = equal after NFKC, case, brackets and
punctuation), independent of the simulator's own implementation.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from dmf_watch.simulator.registry import SOURCE_FIELDS, SyntheticRegistry
from dmf_watch.simulator.source import SnapshotSource

DAYS = 30
REAL_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mfds_real"

FORMATS: dict[str, str] = {
    "old 5-part": r"\d{8}-\d+-[A-Z]-\d+-\d{2}",
    "old 5-part (n)": r"\d{8}-\d+-[A-Z]-\d+-\d{2}\(\d+\)",
    "old 5-part (A)": r"\d{8}-\d+-[A-Z]-\d+-\d{2}\([A-Z]\)",
    "old 5-part (n)-A": r"\d{8}-\d+-[A-Z]-\d+-\d{2}\(\d+\)-[A-Z]",
    "4-part": r"\d{8}-(209|210|211)-J-\d+",
    "4-part (n)": r"\d{8}-(209|210|211)-J-\d+\(\d+\)",
    "4-part (A)": r"\d{8}-(209|210|211)-J-\d+\([A-Z]\)",
    "수n-n-ND": r"수\d+-\d+-ND",
    "수n-n-ND (n)": r"수\d+-\d+-ND\(\d+\)",
    "수n-n-ND (A)": r"수\d+-\d+-ND\([A-Z]\)",
    "n-n-ND": r"\d+-\d+-ND",
    "n-n-ND (n)": r"\d+-\d+-ND\(\d+\)",
    "empty segments": r"\d{8}---\d+-\d+",
}
# Shares measured on the 367-record real sample (sample_2026-10-08.STATS.md).
REAL_SHARES = {
    "old 5-part": 79,
    "old 5-part (n)": 80,
    "4-part": 70,
    "4-part (n)": 29,
    "수n-n-ND": 56,
    "수n-n-ND (n)": 16,
    "n-n-ND": 19,
}


def ws(value: str | None) -> str | None:
    if value is None:
        return None
    return re.sub(" +", " ", value.replace("\r", "").replace("\n", "")).strip()


def cosmetic(value: str | None) -> str | None:
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", ws(value) or "").casefold()
    return ws("".join(ch for ch in text if not unicodedata.category(ch).startswith("P")))


PIPELINE_NAMES = {
    "DMF_PERMIT_NO": "permit_no",
    "INGR_KOR_NAME": "ingredient_name",
    "ENTP_NAME": "applicant",
    "BIZRNO": "applicant_bizrno",
    "MNFCTR_NAME": "manufacturer",
    "MNFCTR_PLACE": "manufacture_place",
    "MANUF_COUNTRY_CODE_NM": "countries",
    "DMF_PERMIT_DATE": "permit_date",
    "NOTICE_CODE": "notice_code",
}


def fallback_key(item: dict) -> tuple:
    return (
        ws(item["INGR_KOR_NAME"]).casefold(),
        ws(item["BIZRNO"]),
        ws(item["MNFCTR_NAME"]).casefold(),
        item["DMF_PERMIT_DATE"],
    )


def reference_diff(prev: list[dict], curr: list[dict]) -> tuple[Counter, list[tuple[int, int]]]:
    """Events as the pipeline should derive them, and the matched (prev, curr) positions."""
    prev_no = {x["DMF_PERMIT_NO"]: i for i, x in enumerate(prev) if x["DMF_PERMIT_NO"]}
    curr_no = {x["DMF_PERMIT_NO"]: i for i, x in enumerate(curr) if x["DMF_PERMIT_NO"]}
    pairs = [(prev_no[n], curr_no[n]) for n in prev_no.keys() & curr_no.keys()]
    left_prev = set(range(len(prev))) - {p for p, _ in pairs}
    left_curr = set(range(len(curr))) - {c for _, c in pairs}
    prev_key = {fallback_key(prev[i]): i for i in left_prev}
    for c in sorted(left_curr):
        p = prev_key.get(fallback_key(curr[c]))
        if p is not None and p in left_prev:
            pairs.append((p, c))
            left_prev.discard(p)
            left_curr.discard(c)
    events: Counter = Counter()
    for p, c in pairs:
        before, after = prev[p], curr[c]
        if before == after:
            continue
        fields = tuple(PIPELINE_NAMES[f] for f in PIPELINE_NAMES if ws(before[f]) != ws(after[f]))
        if fields:
            substantive = any(
                cosmetic(before[f]) != cosmetic(after[f]) for f in PIPELINE_NAMES if ws(before[f]) != ws(after[f])
            )
            events[
                (
                    "CHANGED",
                    after["DMF_PERMIT_NO"],
                    before["DMF_PERMIT_NO"],
                    fields,
                    "substantive" if substantive else "cosmetic",
                )
            ] += 1
    for c in left_curr:
        events[("NEW", curr[c]["DMF_PERMIT_NO"], None, (), None)] += 1
    for p in left_prev:
        events[("WITHDRAWN", prev[p]["DMF_PERMIT_NO"], prev[p]["DMF_PERMIT_NO"], (), None)] += 1
    return events, sorted(pairs)


def truth_events(truth: list[dict]) -> Counter:
    return Counter(
        (t["event_type"], t["permit_no"], t["permit_no_before"], tuple(t["fields"]), t["change_kind"])
        for t in truth
        if t["event_type"] != "NONE"
    )


@pytest.fixture(scope="module")
def registry() -> SyntheticRegistry:
    return SyntheticRegistry()


@pytest.fixture(scope="module")
def baseline(registry: SyntheticRegistry) -> list[dict]:
    return registry.items_for(1)


@pytest.fixture(scope="module")
def days(registry: SyntheticRegistry) -> list[list[dict]]:
    return [registry.items_for(d) for d in range(1, DAYS + 1)]


@pytest.fixture(scope="module")
def diffs(days: list[list[dict]]) -> dict[int, tuple[Counter, list[tuple[int, int]]]]:
    """The reference diff of day d against day d-1, for d = 2..DAYS."""
    return {d: reference_diff(days[d - 2], days[d - 1]) for d in range(2, DAYS + 1)}


def family_of(number: str) -> str | None:
    for name, pattern in FORMATS.items():
        if re.fullmatch(pattern, number):
            return name
    return None


# -- the baseline --------------------------------------------------------------------------


def test_same_seed_gives_identical_items_and_truth() -> None:
    a, b = SyntheticRegistry(seed=7, size=1500), SyntheticRegistry(seed=7, size=1500)
    assert a.items_for(6) == b.items_for(6)
    assert a.items_for(1) == b.items_for(1)
    assert a.truth_for(4) == b.truth_for(4)


def test_different_seeds_give_different_registries() -> None:
    assert SyntheticRegistry(seed=1, size=800).items_for(1) != SyntheticRegistry(seed=2, size=800).items_for(1)


def test_asking_days_out_of_order_gives_the_same_lists() -> None:
    forward = SyntheticRegistry(seed=11, size=1200)
    backward = SyntheticRegistry(seed=11, size=1200)
    later = backward.items_for(5)
    assert [forward.items_for(d) for d in range(1, 6)][-1] == later
    assert forward.items_for(2) == backward.items_for(2)


def test_baseline_has_the_requested_size(registry: SyntheticRegistry, baseline: list[dict]) -> None:
    assert len(baseline) == registry.size == 9200
    assert len(SyntheticRegistry(size=500).items_for(1)) == 500


def test_items_have_the_nine_mfds_keys_in_order_with_string_or_null_values(baseline: list[dict]) -> None:
    for item in baseline:
        assert tuple(item) == SOURCE_FIELDS
        assert all(v is None or isinstance(v, str) for v in item.values())
        assert item["INGR_KOR_NAME"] and item["ENTP_NAME"] and item["MNFCTR_NAME"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", item["DMF_PERMIT_DATE"])
        date.fromisoformat(item["DMF_PERMIT_DATE"])
        assert re.fullmatch(r"\d{10}", item["BIZRNO"])


def test_every_permit_number_format_family_is_present(baseline: list[dict]) -> None:
    found = Counter(family_of(i["DMF_PERMIT_NO"]) for i in baseline if i["DMF_PERMIT_NO"])
    assert None not in found, "a permit number matches no known format"
    assert set(FORMATS) <= set(found)
    assert any(re.fullmatch(r"0\d{3}-\d+-ND", i["DMF_PERMIT_NO"] or "") for i in baseline), "no leading-zero n-n-ND"


def test_format_shares_are_close_to_the_real_sample(baseline: list[dict]) -> None:
    found = Counter(family_of(i["DMF_PERMIT_NO"]) for i in baseline if i["DMF_PERMIT_NO"])
    for name, real in REAL_SHARES.items():
        assert abs(found[name] / len(baseline) - real / 367) < 0.04, name


def test_permit_numbers_are_unique(baseline: list[dict]) -> None:
    numbers = [i["DMF_PERMIT_NO"] for i in baseline if i["DMF_PERMIT_NO"]]
    assert len(numbers) == len(set(numbers))


def test_fallback_identity_is_unique_after_normalisation(baseline: list[dict]) -> None:
    keys = [fallback_key(i) for i in baseline]
    assert len(keys) == len(set(keys))


def test_base_numbers_carry_their_permit_date_and_derived_ones_are_dated_later(baseline: list[dict]) -> None:
    derived_seen = 0
    for item in baseline:
        number = item["DMF_PERMIT_NO"] or ""
        if not re.match(r"\d{8}", number):
            continue
        prefix = date(int(number[:4]), int(number[4:6]), int(number[6:8]))
        permit = date.fromisoformat(item["DMF_PERMIT_DATE"])
        if "(" in number:
            derived_seen += 1
            assert permit > prefix, number
        else:
            assert permit == prefix, number
    assert derived_seen > 1000


def test_list_is_ordered_by_permit_date_with_rare_inversions(baseline: list[dict]) -> None:
    dates = [i["DMF_PERMIT_DATE"] for i in baseline]
    inversions = sum(1 for a, b in zip(dates, dates[1:]) if b < a)
    assert 1 <= inversions <= 20
    assert dates[0] == "2005-08-31" and dates[-1] < "2026-11-29"


def test_only_the_newest_records_lack_a_number(baseline: list[dict]) -> None:
    nulls = [i for i, item in enumerate(baseline) if item["DMF_PERMIT_NO"] is None]
    assert 0.001 * len(baseline) <= len(nulls) <= 0.006 * len(baseline)
    assert min(nulls) >= len(baseline) * 0.98


def test_applicants_and_bizrnos_map_one_to_one(baseline: list[dict]) -> None:
    pairs = {(ws(i["ENTP_NAME"]), i["BIZRNO"]) for i in baseline}
    assert len(pairs) == len({name for name, _ in pairs}) == len({no for _, no in pairs})


def test_texture_of_the_real_list_is_reproduced(baseline: list[dict]) -> None:
    values = [(f, v) for item in baseline for f, v in item.items() if isinstance(v, str)]
    assert sum(1 for f, v in values if v.endswith(" ") and f == "MNFCTR_PLACE") > 100
    assert any(v.endswith("\r\n") for _, v in values)
    assert any("\r\n," in v for _, v in values)
    assert any(f == "MNFCTR_NAME" and v.endswith(",") for f, v in values)
    assert any(re.search(r"\S  \S", v) for _, v in values)
    assert any(re.search("[Ⅱ-Ⅲ㈜（]", v) for _, v in values)
    countries = Counter(c for i in baseline for c in i["MANUF_COUNTRY_CODE_NM"].split(","))
    assert [c for c, _ in countries.most_common(2)] in (["인도", "중국"], ["중국", "인도"])
    assert any(len(set(parts)) < len(parts) for parts in (i["MANUF_COUNTRY_CODE_NM"].split(",") for i in baseline))
    notices = Counter(i["NOTICE_CODE"] for i in baseline)
    assert notices.most_common(3)[0][0] == "별표1" and {"신물질", "기타", "", "별표1의2"} <= set(notices)
    assert any(re.search(r"(주)|주식회사", i["ENTP_NAME"]) for i in baseline)
    assert any(re.search(r"(염산염|베실산염|칼슘|수화물|미분화)", i["INGR_KOR_NAME"]) for i in baseline)


@pytest.mark.usefixtures("real_data_dir")
def test_no_real_record_is_copied(baseline: list[dict]) -> None:
    real = [json.loads(line) for path in REAL_DIR.glob("*.jsonl") for line in path.open(encoding="utf-8")]
    real_triples = {(r["INGR_KOR_NAME"], r["ENTP_NAME"], r["MNFCTR_NAME"]) for r in real}
    real_sites = {r["MNFCTR_PLACE"] for r in real}
    assert not real_triples & {(i["INGR_KOR_NAME"], i["ENTP_NAME"], i["MNFCTR_NAME"]) for i in baseline}
    assert not real_sites & {i["MNFCTR_PLACE"] for i in baseline if "," in i["MNFCTR_PLACE"]}


# -- day numbering ---------------------------------------------------------------------------


def test_day_one_is_the_start_date_and_dates_map_back_to_days(registry: SyntheticRegistry) -> None:
    assert registry.day_of(registry.start_date) == 1
    assert registry.date_of(1) == registry.start_date
    assert registry.day_of(registry.start_date + timedelta(days=9)) == 10
    assert registry.date_of(10) == registry.start_date + timedelta(days=9)
    with pytest.raises(ValueError):
        registry.day_of(registry.start_date - timedelta(days=1))
    with pytest.raises(ValueError):
        registry.items_for(0)


def test_registry_is_a_snapshot_source(registry: SyntheticRegistry) -> None:
    assert isinstance(registry, SnapshotSource)


def test_items_are_fresh_copies(registry: SyntheticRegistry) -> None:
    first = registry.items_for(3)
    first[0]["DMF_PERMIT_NO"] = "tampered"
    first.pop()
    again = registry.items_for(3)
    assert again[0]["DMF_PERMIT_NO"] != "tampered" and len(again) == len(first) + 1


# -- evolution and its ground truth -----------------------------------------------------------


def test_day_one_truth_is_empty(registry: SyntheticRegistry) -> None:
    assert registry.truth_for(1) == []


def test_totals_follow_new_and_withdrawn_counts(registry: SyntheticRegistry, days: list[list[dict]]) -> None:
    for d in range(2, DAYS + 1):
        kinds = Counter(t["event_type"] for t in registry.truth_for(d))
        assert len(days[d - 1]) == len(days[d - 2]) + kinds["NEW"] - kinds["WITHDRAWN"], d
    assert 9200 < len(days[-1]) < 9200 * 1.02


def test_truth_equals_the_reference_diff_every_day(registry: SyntheticRegistry, diffs: dict) -> None:
    for d in range(2, DAYS + 1):
        expected, _ = diffs[d]
        assert truth_events(registry.truth_for(d)) == expected, f"day {d}"


@pytest.mark.parametrize("seed", [1, 99])
def test_truth_equals_the_reference_diff_for_other_seeds(seed: int) -> None:
    other = SyntheticRegistry(seed=seed, size=2500)
    lists = [other.items_for(d) for d in range(1, 16)]
    for d in range(2, 16):
        expected, _ = reference_diff(lists[d - 2], lists[d - 1])
        assert truth_events(other.truth_for(d)) == expected, f"seed {seed} day {d}"


def test_whitespace_only_edits_are_recorded_as_none_and_change_no_normalised_value(
    registry: SyntheticRegistry, days: list[list[dict]]
) -> None:
    seen = 0
    for d in range(2, DAYS + 1):
        prev = {i["DMF_PERMIT_NO"]: i for i in days[d - 2] if i["DMF_PERMIT_NO"]}
        curr = {i["DMF_PERMIT_NO"]: i for i in days[d - 1] if i["DMF_PERMIT_NO"]}
        for t in registry.truth_for(d):
            if t["event_type"] != "NONE":
                continue
            seen += 1
            before, after = prev[t["permit_no"]], curr[t["permit_no"]]
            assert before != after
            assert all(ws(before[f]) == ws(after[f]) for f in SOURCE_FIELDS)
    assert seen >= DAYS


def test_every_kind_of_change_happens_within_a_month(registry: SyntheticRegistry) -> None:
    truth = [t for d in range(2, DAYS + 1) for t in registry.truth_for(d)]
    kinds = Counter((t["event_type"], t["change_kind"]) for t in truth)
    assert kinds[("NEW", None)] >= DAYS and kinds[("WITHDRAWN", None)] >= 5
    assert kinds[("CHANGED", "substantive")] >= DAYS and kinds[("CHANGED", "cosmetic")] >= 10
    changed_fields = Counter(f for t in truth if t["event_type"] == "CHANGED" for f in t["fields"])
    for name in ("permit_no", "applicant", "applicant_bizrno", "manufacturer", "manufacture_place", "countries"):
        assert changed_fields[name] > 0, name
    details = " ".join(t["detail"] for t in truth)
    for word in (
        "manufacturer added",
        "manufacturer removed",
        "manufacturer replaced",
        "site changed",
        "applicant changed",
        "country added",
        "renumbered",
        "permit number assigned",
    ):
        assert word in details, word
    assert any(t["event_type"] == "NEW" and t["permit_no"] is None for t in truth)


def test_applicant_changes_change_name_and_bizrno_together(registry: SyntheticRegistry) -> None:
    changes = [t for d in range(2, DAYS + 1) for t in registry.truth_for(d) if "applicant" in t["fields"]]
    assert changes and all("applicant_bizrno" in t["fields"] for t in changes)


def test_assigned_numbers_appear_as_permit_no_changes_from_null(
    registry: SyntheticRegistry, days: list[list[dict]]
) -> None:
    assigned = [
        t
        for d in range(2, DAYS + 1)
        for t in registry.truth_for(d)
        if t["event_type"] == "CHANGED" and t["permit_no_before"] is None
    ]
    assert assigned
    for t in assigned:
        assert t["fields"] == ["permit_no"] and t["permit_no"] and t["change_kind"] == "substantive"
    later_numbered = [
        t
        for d in range(2, DAYS + 1)
        for t in registry.truth_for(d)
        if t["event_type"] == "NEW" and t["permit_no"] is None and t["day"] < DAYS - 10
    ]
    assigned_keys = {(t["ingredient_name"], t["applicant_bizrno"], t["permit_date"]) for t in assigned}
    assert any(
        (t["ingredient_name"], t["applicant_bizrno"], t["permit_date"]) in assigned_keys for t in later_numbered
    ), "no record registered without a number received one later"


def test_renumbering_changes_only_the_number_and_keeps_the_place(
    registry: SyntheticRegistry, days: list[list[dict]]
) -> None:
    renumbered = [t for d in range(2, DAYS + 1) for t in registry.truth_for(d) if "renumbered" in t["detail"]]
    assert renumbered
    for t in renumbered:
        before_list, after_list = days[t["day"] - 2], days[t["day"] - 1]
        before = next(i for i in before_list if i["DMF_PERMIT_NO"] == t["permit_no_before"])
        after = next(i for i in after_list if i["DMF_PERMIT_NO"] == t["permit_no"])
        assert "(" in t["permit_no_before"] and "(" not in t["permit_no"]
        assert {f for f in SOURCE_FIELDS if before[f] != after[f]} == {"DMF_PERMIT_NO"}
        assert t["permit_no"].startswith(t["permit_date"].replace("-", "")) or "ND" in t["permit_no"]
        assert all(i["DMF_PERMIT_NO"] != t["permit_no_before"] for i in after_list)


def test_a_record_gets_at_most_one_change_a_day(registry: SyntheticRegistry) -> None:
    for d in range(2, DAYS + 1):
        truth = registry.truth_for(d)
        numbers = [t["permit_no_before"] for t in truth if t["permit_no_before"]]
        assert len(numbers) == len(set(numbers)), d


def test_records_keep_their_relative_order_and_new_ones_land_near_the_end(days: list[list[dict]], diffs: dict) -> None:
    for d in range(2, DAYS + 1):
        curr = days[d - 1]
        _, pairs = diffs[d]
        positions = [c for _, c in sorted(pairs)]
        assert positions == sorted(positions), d
        matched = {c for _, c in pairs}
        new_positions = [i for i in range(len(curr)) if i not in matched]
        assert all(i > len(curr) - 300 for i in new_positions), d
        tail_dates = [i["DMF_PERMIT_DATE"] for i in curr[-150:]]
        assert tail_dates == sorted(tail_dates), f"day {d}: new records are not in date order"


def test_numbers_and_identities_stay_unique_every_day(days: list[list[dict]]) -> None:
    for items in days:
        numbers = [i["DMF_PERMIT_NO"] for i in items if i["DMF_PERMIT_NO"]]
        assert len(numbers) == len(set(numbers))
        keys = [fallback_key(i) for i in items]
        assert len(keys) == len(set(keys))


def test_truth_entries_have_the_documented_shape(registry: SyntheticRegistry) -> None:
    allowed = {
        "permit_no",
        "ingredient_name",
        "applicant",
        "applicant_bizrno",
        "manufacturer",
        "manufacture_place",
        "countries",
        "permit_date",
        "notice_code",
    }
    for d in range(2, 8):
        for t in registry.truth_for(d):
            assert t["day"] == d and t["as_of_date"] == registry.date_of(d).isoformat()
            assert t["event_type"] in {"NEW", "CHANGED", "WITHDRAWN", "NONE"}
            assert set(t["fields"]) <= allowed
            assert t["change_kind"] in {"substantive", "cosmetic", "whitespace", None}
            assert (t["change_kind"] is None) == (t["event_type"] in {"NEW", "WITHDRAWN"})
            assert isinstance(t["detail"], str) and t["detail"]


def test_write_truth_writes_one_jsonl_file_per_day(registry: SyntheticRegistry, tmp_path: Path) -> None:
    paths = registry.write_truth(tmp_path, 4)
    assert [p.name for p in paths] == [f"truth_day_0{d}.jsonl" for d in range(1, 5)]
    assert paths[0].read_text(encoding="utf-8") == ""
    rows = [json.loads(line) for line in paths[3].read_text(encoding="utf-8").splitlines()]
    assert rows == registry.truth_for(4)
