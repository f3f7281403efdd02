"""The data block of the daily prompt, built from mart rows.

Every number here was computed by SQL (marts.dmf_daily_summary); the model may only quote it.
At most `max_events` events go in, most important first (watchlist, severity, WITHDRAWN before
CHANGED before NEW); the rest become counts per type/severity. Every string is clipped and
passed through the inbound sanitizer, and every key the model may answer with is remembered so
the parser can drop anything it invents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dmf_watch.enrich.sanitize import for_prompt

SEVERITY_ORDER = {"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "INFO": 3, "COSMETIC": 4}
EVENT_ORDER = {"WITHDRAWN": 0, "CHANGED": 1, "REINSTATED": 2, "NEW": 3}
FIELD_LIMITS = {
    "ingredient_name": 80,
    "applicant": 60,
    "manufacturer": 80,
    "manufacture_place": 60,
    "countries": 40,
    "permit_no": 40,
    "notice_code": 20,
}
MAX_KEY_CHARS = 40
MAX_CHANGES_PER_EVENT = 4
CHANGE_VALUE_CHARS = 50
MAX_UNMATCHED_TERMS = 10
MAX_CANDIDATES = 8
MAX_SIGNALS = 12
#: A pseudo signal id the prompt asks the model to use when the data holds instructions.
INJECTION_SIGNAL_ID = "prompt_injection"

COUNT_COLUMNS = (
    "registry_count",
    "event_count",
    "new_count",
    "changed_count",
    "withdrawn_count",
    "critical_count",
    "high_count",
    "medium_count",
    "info_count",
    "cosmetic_count",
    "watchlist_hit_count",
    "fired_signal_count",
)


@dataclass
class DailyPayload:
    counts: dict[str, Any]
    events: list[dict[str, Any]]
    omitted: dict[str, int]
    signals: list[dict[str, Any]]
    watchlist_unmatched: list[dict[str, Any]]
    #: key shown to the model -> real dmf_key
    key_map: dict[str, str] = field(default_factory=dict)
    #: watch term shown -> (real term, {candidate shown -> real candidate})
    offered: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    known_signal_ids: frozenset[str] = frozenset()
    total_events: int = 0


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _sort_key(event: Mapping[str, Any]) -> tuple:
    rank = event.get("severity_rank")
    if not isinstance(rank, int):
        rank = SEVERITY_ORDER.get(_text(event.get("severity")), 8) + 1
    priority = event.get("rule_priority")
    return (
        0 if event.get("on_watchlist") else 1,
        rank,
        EVENT_ORDER.get(_text(event.get("event_type")), 9),
        priority if isinstance(priority, int) else 999,
        _text(event.get("dmf_key")),
    )


def _number(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _clean_context(raw: Any) -> dict[str, Any]:
    """The signal's context JSON, with every name sanitized and lists kept short."""
    try:
        data = json.loads(raw) if isinstance(raw, str) else (raw or {})
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("top_applicants", "top_groups"):
        rows = data.get(key)
        if isinstance(rows, list):
            out[key] = [
                [for_prompt(r[0], 60), _number(r[1])] for r in rows[:5] if isinstance(r, (list, tuple)) and len(r) >= 2
            ]
    spread = data.get("date_spread")
    if isinstance(spread, dict):
        out["date_spread"] = {
            for_prompt(k, 20): _number(v) if isinstance(v, (int, float)) else for_prompt(v, 40)
            for k, v in list(spread.items())[:8]
        }
    return out


def build_daily_payload(
    summary: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    field_changes: Sequence[Mapping[str, Any]],
    signals: Sequence[Mapping[str, Any]],
    unmatched: Sequence[Mapping[str, Any]],
    max_events: int = 60,
) -> DailyPayload:
    ordered = sorted(events, key=_sort_key)
    head, tail = ordered[: max(0, max_events)], ordered[max(0, max_events) :]

    changes_by_key: dict[str, list[Mapping[str, Any]]] = {}
    for change in field_changes:
        changes_by_key.setdefault(_text(change.get("dmf_key")), []).append(change)

    key_map: dict[str, str] = {}
    slim: list[dict[str, Any]] = []
    for index, event in enumerate(head, start=1):
        real_key = _text(event.get("dmf_key"))
        shown = for_prompt(real_key, MAX_KEY_CHARS)
        if shown != real_key or not shown or shown in key_map:
            shown = f"k{index:03d}"  # a stand-in the model can echo back safely
        key_map[shown] = real_key
        item: dict[str, Any] = {
            "dmf_key": shown,
            "event_type": _text(event.get("event_type")),
            "severity": _text(event.get("severity")),
            "on_watchlist": bool(event.get("on_watchlist")),
        }
        for name, limit in FIELD_LIMITS.items():
            value = for_prompt(event.get(name), limit)
            if name == "permit_no" and event.get(name) == real_key:
                continue  # the key already says it
            if value:
                item[name] = value
        if event.get("watch_terms"):
            item["watch_terms"] = for_prompt(event.get("watch_terms"), 60)
        if item["event_type"] == "CHANGED":
            rows = changes_by_key.get(real_key, [])
            if rows:
                item["changed_fields"] = [
                    {
                        "field": for_prompt(c.get("field_name"), 30),
                        "before": for_prompt(c.get("before_value"), CHANGE_VALUE_CHARS),
                        "after": for_prompt(c.get("after_value"), CHANGE_VALUE_CHARS),
                        "kind": for_prompt(c.get("change_kind"), 12),
                    }
                    for c in rows[:MAX_CHANGES_PER_EVENT]
                ]
                if len(rows) > MAX_CHANGES_PER_EVENT:
                    item["more_changed_fields"] = len(rows) - MAX_CHANGES_PER_EVENT
            elif event.get("changed_fields"):
                item["changed_field_names"] = for_prompt(event.get("changed_fields"), 80)
        slim.append(item)

    omitted: dict[str, int] = {}
    for event in tail:
        label = f"{_text(event.get('event_type')) or '?'}/{_text(event.get('severity')) or '?'}"
        omitted[label] = omitted.get(label, 0) + 1

    counts: dict[str, Any] = {}
    if summary:
        for column in COUNT_COLUMNS:
            if summary.get(column) is not None:
                counts[column] = _number(summary.get(column))
        counts["is_baseline"] = bool(summary.get("is_baseline"))
    counts["events_in_prompt"] = len(slim)
    counts["events_omitted"] = len(tail)

    fired = [s for s in signals if s.get("fired")][:MAX_SIGNALS]
    slim_signals: list[dict[str, Any]] = []
    for sig in fired:
        entry: dict[str, Any] = {
            "signal_id": for_prompt(sig.get("signal_id"), 60),
            "is_gate": bool(sig.get("is_gate")),
            "severity": for_prompt(sig.get("severity"), 12),
            "observed": _number(sig.get("observed")),
            "baseline": _number(sig.get("baseline"))
            if sig.get("baseline") is not None
            else for_prompt(sig.get("baseline_text"), 80),
        }
        if sig.get("baseline_text"):
            entry["baseline_text"] = for_prompt(sig.get("baseline_text"), 80)
        if sig.get("window_text"):
            entry["window"] = for_prompt(sig.get("window_text"), 60)
        if sig.get("description"):
            entry["description"] = for_prompt(sig.get("description"), 160)
        extra = _clean_context(sig.get("context"))
        if extra:
            entry["extra"] = extra
        slim_signals.append(entry)
    known_signals = frozenset({s["signal_id"] for s in slim_signals} | {INJECTION_SIGNAL_ID})

    offered: dict[str, tuple[str, dict[str, str]]] = {}
    slim_unmatched: list[dict[str, Any]] = []
    for row in unmatched[:MAX_UNMATCHED_TERMS]:
        real_term = _text(row.get("watch_term"))
        shown_term = for_prompt(real_term, 120)
        if not shown_term or shown_term in offered:
            continue
        raw = row.get("candidates")
        try:
            names = json.loads(raw) if isinstance(raw, str) else list(raw or [])
        except (ValueError, TypeError):
            names = []
        cand_map: dict[str, str] = {}
        for name in names if isinstance(names, list) else []:
            shown_name = for_prompt(name, 120)
            if shown_name and shown_name not in cand_map:
                cand_map[shown_name] = _text(name)
            if len(cand_map) >= MAX_CANDIDATES:
                break
        offered[shown_term] = (real_term, cand_map)
        slim_unmatched.append(
            {"watch_term": shown_term, "term_kind": for_prompt(row.get("term_kind"), 20), "candidates": list(cand_map)}
        )

    return DailyPayload(
        counts=counts,
        events=slim,
        omitted=omitted,
        signals=slim_signals,
        watchlist_unmatched=slim_unmatched,
        key_map=key_map,
        offered=offered,
        known_signal_ids=known_signals,
        total_events=len(events),
    )


def omitted_sentence(omitted: Mapping[str, int]) -> str:
    """'…외 CHANGED/INFO 143건' style summary of what did not fit (for humans and the prompt)."""
    if not omitted:
        return ""
    parts = [f"{label} {n}건" for label, n in sorted(omitted.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "프롬프트에서 생략: " + ", ".join(parts)
