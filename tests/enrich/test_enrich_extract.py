"""Balanced-brace extraction, noise keys, validation and the whitelist parsers."""

from __future__ import annotations

import json

from dmf_watch.enrich.extract import best_object, extract_and_validate, json_objects, validate
from dmf_watch.enrich.parse import parse_anomaly, parse_daily, parse_drift, parse_weekly
from dmf_watch.enrich.render import load_schema

SCHEMA = load_schema("uc1_briefing.schema.json")
GOOD = {
    "headline": "취하 1건",
    "summary_md": "- 확인",
    "risk_note": "",
    "per_event": [],
    "anomalies": [],
    "alias_candidates": [],
}


def test_scanner_handles_braces_inside_strings_and_escapes():
    text = 'prose {"a": "}{ \\" {", "b": {"c": 1}} tail {"d": 2}'
    objs = list(json_objects(text))
    assert objs[0] == {"a": '}{ " {', "b": {"c": 1}} and {"d": 2} in objs


def test_scanner_prefers_the_object_with_most_required_keys():
    text = (
        "먼저 생각합니다 "
        + json.dumps({"toolAction": "think"})
        + " 결과: "
        + json.dumps(dict(GOOD, toolAction="x"))
        + " 다시: "
        + json.dumps(GOOD, ensure_ascii=False)
    )
    assert best_object(text, tuple(SCHEMA["required"]))["headline"] == "취하 1건"


def test_noise_keys_are_stripped_recorded_and_then_valid():
    polluted = dict(
        GOOD,
        toolAction="respond",
        per_event=[{"dmf_key": "k", "importance": "HIGH", "comment": "c", "tool_summary": "s"}],
    )
    result = extract_and_validate("```json\n" + json.dumps(polluted) + "\n```", SCHEMA)
    assert result.valid and set(result.noise_removed) == {"$.toolAction", "$.per_event[0].tool_summary"}


def test_other_unknown_keys_stay_invalid():
    result = extract_and_validate(json.dumps(dict(GOOD, extra=1)), SCHEMA)
    assert not result.valid and "extra" in result.error


def test_validation_message_names_the_path():
    bad = dict(GOOD, per_event=[{"dmf_key": "k", "importance": "매우중요", "comment": ""}])
    assert validate(bad, SCHEMA).startswith("$.per_event[0].importance")


def test_no_json_is_reported():
    assert extract_and_validate("JSON 없이 산문만 있습니다", SCHEMA).error == "no JSON object in the answer"


def test_daily_parser_keeps_only_offered_things():
    obj = dict(
        GOOD,
        per_event=[
            {"dmf_key": "A", "importance": "high", "comment": "=HYPERLINK(1)"},
            {"dmf_key": "ghost", "importance": "HIGH", "comment": "x"},
            {"dmf_key": "A", "importance": "HIGH", "comment": "dup"},
        ],
        anomalies=[
            {
                "signal_id": "event_burst",
                "verdict": "weird",
                "hypothesis": "h",
                "suggested_action": "a",
                "confidence": 7,
            },
            {
                "signal_id": "made_up",
                "verdict": "UNKNOWN",
                "hypothesis": "h",
                "suggested_action": "a",
                "confidence": 0.5,
            },
        ],
        alias_candidates=[
            {
                "watch_term": "T",
                "candidate_ingredient_name": "C1",
                "base_form": "b",
                "salt_form": "",
                "confidence": 0.9,
                "reason": "r",
            },
            {
                "watch_term": "T",
                "candidate_ingredient_name": "NOPE",
                "base_form": "b",
                "salt_form": "",
                "confidence": 0.9,
                "reason": "r",
            },
        ],
    )
    answer = parse_daily(obj, {"A": "real-key-A"}, frozenset({"event_burst"}), {"T": ("Term", {"C1": "Cand-1"})})
    assert answer.ok
    assert [(c.dmf_key, c.importance, c.comment) for c in answer.comments] == [("real-key-A", "HIGH", "'=HYPERLINK(1)")]
    assert [(a.signal_id, a.verdict, a.confidence) for a in answer.anomalies] == [("event_burst", "UNKNOWN", 1.0)]
    assert [(a.watch_term, a.candidate_ingredient_name) for a in answer.aliases] == [("Term", "Cand-1")]
    assert answer.dropped.as_dict() == {
        "alias_not_offered": 1,
        "anomaly_unknown_signal": 1,
        "event_duplicate": 1,
        "event_unknown_key": 1,
    }


def test_daily_parser_rejects_an_empty_headline():
    assert parse_daily(dict(GOOD, headline="  "), {}, frozenset(), {}).failure_reason == "empty headline"


def test_anomaly_parser_drops_invented_signals():
    answer = parse_anomaly(
        {
            "overall_assessment": "PANIC",
            "anomalies": [
                {
                    "signal_id": "slow_fetch",
                    "verdict": "PIPELINE_SIDE",
                    "hypothesis": "h",
                    "suggested_action": "a",
                    "confidence": 0.4,
                },
                {
                    "signal_id": "invented",
                    "verdict": "UNKNOWN",
                    "hypothesis": "h",
                    "suggested_action": "a",
                    "confidence": 0.4,
                },
            ],
        },
        frozenset({"slow_fetch"}),
    )
    assert answer.overall_assessment == "MONITOR"
    assert [a.signal_id for a in answer.anomalies] == ["slow_fetch"]
    assert answer.dropped.as_dict() == {"anomaly_unknown_signal": 1}


def test_weekly_parser_blanks_unknown_keys_and_marks_predictions():
    answer = parse_weekly(
        {
            "headline": "h",
            "trend_paragraphs": ["다음 주에는 늘어날 전망입니다."],
            "notable_items": [{"label": "l", "why": "w", "dmf_key": "ghost"}],
            "data_caveats": ["c"],
            "ops_note": "o",
        },
        frozenset({"real"}),
    )
    assert answer.notable_items[0].dmf_key == ""
    assert answer.trend_paragraphs[0].endswith("(모델 추정)")


def test_drift_parser_needs_evidence_from_the_samples():
    samples = json.dumps([{"permitNo": "20190801-211-J-399"}])
    answer = parse_drift(
        {
            "diagnosis": "d",
            "needs_human_review": False,
            "page_changed_markers": [],
            "candidates": [
                {
                    "field": "DMF_PERMIT_NO",
                    "json_path": "items[].permitNo",
                    "evidence": '"permitNo": "20190801-211-J-399"',
                    "rationale": "r",
                    "stability": "POSITIONAL",
                    "confidence": 0.9,
                },
                {
                    "field": "DMF_PERMIT_NO",
                    "json_path": "x",
                    "evidence": "not in there at all",
                    "rationale": "r",
                    "stability": "SEMANTIC",
                    "confidence": 0.9,
                },
                {
                    "field": "UNKNOWN",
                    "json_path": "y",
                    "evidence": "permitNo",
                    "rationale": "r",
                    "stability": "SEMANTIC",
                    "confidence": 0.9,
                },
            ],
        },
        frozenset({"DMF_PERMIT_NO"}),
        samples,
    )
    assert [c.json_path for c in answer.candidates] == ["items[].permitNo"]
    assert answer.needs_human_review is True  # positional only: forced, whatever the model said
    assert answer.dropped.as_dict() == {"candidate_unknown_field": 1, "candidate_without_evidence": 1}
