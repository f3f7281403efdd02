"""Validated answers -> domain values, keeping only what the prompt offered.

A schema-valid answer can still invent things: a comment on a registration that is not in
today's events, an interpretation of a signal that never fired, an alias that was not among
the candidates we offered. Those are dropped here and counted, before anything is stored.
Every kept string goes through the outbound quarantine. Nothing here raises.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dmf_watch.enrich.sanitize import for_output

IMPORTANCE = frozenset({"CRITICAL", "HIGH", "MEDIUM", "INFO", "COSMETIC"})
VERDICTS = frozenset({"SOURCE_SIDE", "PIPELINE_SIDE", "NORMAL_VARIATION", "UNKNOWN"})
ASSESSMENTS = frozenset({"ACTION_REQUIRED", "MONITOR", "NO_ACTION"})
STABILITY = frozenset({"SEMANTIC", "IDENTIFIER", "POSITIONAL"})
#: Phrases of prediction the weekly prompt forbids; a paragraph carrying one gets a suffix.
PREDICTION = re.compile(r"것으로\s*보입니다|전망|예상됩니다|예상된다|할\s*것이다")
PREDICTION_SUFFIX = " (모델 추정)"


def _confidence(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return min(max(number, 0.0), 1.0)


def _s(raw: Mapping[str, Any], key: str, limit: int) -> str:
    value = raw.get(key)
    return for_output(value if isinstance(value, str) else "", limit)


@dataclass(frozen=True)
class EventComment:
    dmf_key: str  # the real key (stand-ins are mapped back)
    importance: str
    comment: str
    importance_changed_reason: str = ""


@dataclass(frozen=True)
class AnomalyNote:
    signal_id: str
    verdict: str
    hypothesis: str
    suggested_action: str
    confidence: float
    alternative_hypothesis: str = ""


@dataclass(frozen=True)
class AliasCandidate:
    watch_term: str
    candidate_ingredient_name: str
    base_form: str
    salt_form: str
    confidence: float
    reason: str
    isomer_note: str = ""


@dataclass
class Dropped:
    """What the parser threw away, by reason, with a few examples for the audit row."""

    counts: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)

    def add(self, reason: str, example: str = "") -> None:
        self.counts[reason] += 1
        if example and len(self.examples) < 8:
            self.examples.append(for_output(f"{reason}: {example}", 160))

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))

    def note(self) -> str:
        if not self.counts:
            return ""
        return "dropped " + ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))


@dataclass
class DailyAnswer:
    ok: bool
    headline: str = ""
    summary_md: str = ""
    risk_note: str = ""
    comments: list[EventComment] = field(default_factory=list)
    anomalies: list[AnomalyNote] = field(default_factory=list)
    aliases: list[AliasCandidate] = field(default_factory=list)
    dropped: Dropped = field(default_factory=Dropped)
    failure_reason: str | None = None


def _items(obj: Mapping[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def parse_anomalies(items: list[Any], known_signal_ids: frozenset[str], dropped: Dropped) -> list[AnomalyNote]:
    notes: list[AnomalyNote] = []
    seen: set[str] = set()
    for raw in items:
        if not isinstance(raw, dict):
            dropped.add("anomaly_not_object")
            continue
        sid = str(raw.get("signal_id") or "").strip()
        if sid not in known_signal_ids:
            dropped.add("anomaly_unknown_signal", repr(sid[:60]))
            continue
        if sid in seen:
            dropped.add("anomaly_duplicate", sid)
            continue
        seen.add(sid)
        verdict = str(raw.get("verdict") or "").strip().upper()
        notes.append(
            AnomalyNote(
                signal_id=sid,
                verdict=verdict if verdict in VERDICTS else "UNKNOWN",
                hypothesis=_s(raw, "hypothesis", 500),
                suggested_action=_s(raw, "suggested_action", 500),
                confidence=_confidence(raw.get("confidence")),
                alternative_hypothesis=_s(raw, "alternative_hypothesis", 500),
            )
        )
    return notes


def parse_aliases(
    items: list[Any], offered: Mapping[str, tuple[str, Mapping[str, str]]], dropped: Dropped
) -> list[AliasCandidate]:
    """Keep a proposal only if both its term and its candidate were offered in the prompt."""
    kept: list[AliasCandidate] = []
    seen: set[tuple[str, str]] = set()
    for raw in items:
        if not isinstance(raw, dict):
            dropped.add("alias_not_object")
            continue
        term = str(raw.get("watch_term") or "").strip()
        cand = str(raw.get("candidate_ingredient_name") or "").strip()
        if term not in offered:
            dropped.add("alias_unknown_term", repr(term[:60]))
            continue
        real_term, candidates = offered[term]
        if cand not in candidates:
            dropped.add("alias_not_offered", f"{cand[:60]!r} for {term[:40]!r}")
            continue
        real_cand = candidates[cand]
        if (real_term, real_cand) in seen:
            dropped.add("alias_duplicate", cand[:60])
            continue
        seen.add((real_term, real_cand))
        kept.append(
            AliasCandidate(
                watch_term=real_term,
                candidate_ingredient_name=real_cand,
                base_form=_s(raw, "base_form", 120),
                salt_form=_s(raw, "salt_form", 80),
                confidence=_confidence(raw.get("confidence")),
                reason=_s(raw, "reason", 300),
                isomer_note=_s(raw, "isomer_note", 120),
            )
        )
    kept.sort(key=lambda a: (-a.confidence, a.watch_term, a.candidate_ingredient_name))
    return kept


def parse_daily(
    obj: Any,
    key_map: Mapping[str, str],
    known_signal_ids: frozenset[str],
    offered: Mapping[str, tuple[str, Mapping[str, str]]],
) -> DailyAnswer:
    """The daily briefing, with its anomaly and alias sections."""
    if not isinstance(obj, dict):
        return DailyAnswer(ok=False, failure_reason="answer is not an object")
    dropped = Dropped()
    comments: list[EventComment] = []
    seen: set[str] = set()
    for raw in _items(obj, "per_event"):
        if not isinstance(raw, dict):
            dropped.add("event_not_object")
            continue
        shown = str(raw.get("dmf_key") or "").strip()
        if shown not in key_map:
            dropped.add("event_unknown_key", repr(shown[:40]))
            continue
        importance = str(raw.get("importance") or "").strip().upper()
        if importance not in IMPORTANCE:
            dropped.add("event_bad_importance", shown)
            continue
        if shown in seen:
            dropped.add("event_duplicate", shown)
            continue
        seen.add(shown)
        comments.append(
            EventComment(key_map[shown], importance, _s(raw, "comment", 200), _s(raw, "importance_changed_reason", 200))
        )
    anomalies = parse_anomalies(_items(obj, "anomalies"), known_signal_ids, dropped)
    aliases = parse_aliases(_items(obj, "alias_candidates"), offered, dropped)
    headline = _s(obj, "headline", 120)
    if not headline:
        return DailyAnswer(ok=False, dropped=dropped, failure_reason="empty headline")
    return DailyAnswer(
        True, headline, _s(obj, "summary_md", 3000), _s(obj, "risk_note", 1000), comments, anomalies, aliases, dropped
    )


@dataclass
class AnomalyAnswer:
    ok: bool
    overall_assessment: str = "MONITOR"
    anomalies: list[AnomalyNote] = field(default_factory=list)
    dropped: Dropped = field(default_factory=Dropped)
    failure_reason: str | None = None


def parse_anomaly(obj: Any, known_signal_ids: frozenset[str]) -> AnomalyAnswer:
    """The anomaly explanation on its own (`dmf explain-anomaly`): only signals that actually fired survive."""
    if not isinstance(obj, dict):
        return AnomalyAnswer(ok=False, failure_reason="answer is not an object")
    dropped = Dropped()
    assessment = str(obj.get("overall_assessment") or "").strip().upper()
    notes = parse_anomalies(_items(obj, "anomalies"), known_signal_ids, dropped)
    return AnomalyAnswer(True, assessment if assessment in ASSESSMENTS else "MONITOR", notes, dropped)


@dataclass(frozen=True)
class NotableItem:
    label: str
    why: str
    dmf_key: str = ""


@dataclass
class WeeklyAnswer:
    ok: bool
    headline: str = ""
    trend_paragraphs: list[str] = field(default_factory=list)
    notable_items: list[NotableItem] = field(default_factory=list)
    data_caveats: list[str] = field(default_factory=list)
    ops_note: str = ""
    dropped: Dropped = field(default_factory=Dropped)
    failure_reason: str | None = None

    def commentary_md(self) -> str:
        parts = list(self.trend_paragraphs)
        if self.notable_items:
            parts.append("\n".join(f"- {i.label}: {i.why}" for i in self.notable_items))
        if self.data_caveats:
            parts.append("\n".join(f"- {c}" for c in self.data_caveats))
        if self.ops_note:
            parts.append(self.ops_note)
        return "\n\n".join(p for p in parts if p)


def _mark_prediction(text: str) -> str:
    return text + PREDICTION_SUFFIX if text and PREDICTION.search(text) else text


def parse_weekly(obj: Any, known_keys: frozenset[str]) -> WeeklyAnswer:
    """The weekly commentary: unknown dmf_keys on notable items are blanked (no link to a ghost registration)."""
    if not isinstance(obj, dict):
        return WeeklyAnswer(ok=False, failure_reason="answer is not an object")
    dropped = Dropped()
    headline = _s(obj, "headline", 120)
    paragraphs = [
        _mark_prediction(for_output(p, 800))
        for p in _items(obj, "trend_paragraphs")
        if isinstance(p, str) and p.strip()
    ][:6]
    if not headline or not paragraphs:
        return WeeklyAnswer(ok=False, failure_reason="empty headline or body")
    items: list[NotableItem] = []
    for raw in _items(obj, "notable_items"):
        if not isinstance(raw, dict):
            dropped.add("notable_not_object")
            continue
        key = str(raw.get("dmf_key") or "").strip()
        if key and key not in known_keys:
            dropped.add("notable_unknown_key", repr(key[:40]))
            key = ""
        label, why = _s(raw, "label", 120), _s(raw, "why", 300)
        if label and why:
            items.append(NotableItem(label, why, key))
    caveats = [for_output(c, 300) for c in _items(obj, "data_caveats") if isinstance(c, str) and c.strip()][:3]
    return WeeklyAnswer(
        True, headline, paragraphs, items[:5], caveats, _mark_prediction(_s(obj, "ops_note", 400)), dropped
    )


@dataclass(frozen=True)
class FieldPathCandidate:
    field: str
    json_path: str
    evidence: str
    rationale: str
    stability: str
    confidence: float


@dataclass
class DriftAnswer:
    ok: bool
    diagnosis: str = ""
    candidates: list[FieldPathCandidate] = field(default_factory=list)
    page_changed_markers: list[str] = field(default_factory=list)
    needs_human_review: bool = True
    dropped: Dropped = field(default_factory=Dropped)
    failure_reason: str | None = None


def _squash(text: str) -> str:
    return "".join(text.split())


def parse_drift(obj: Any, expected_fields: frozenset[str], samples_text: str) -> DriftAnswer:
    """The API drift diagnosis: a candidate needs a known field and evidence
    that really occurs in the samples we showed; positional-only answers always need review."""
    if not isinstance(obj, dict):
        return DriftAnswer(ok=False, failure_reason="answer is not an object")
    dropped = Dropped()
    haystack = _squash(samples_text)
    kept: list[FieldPathCandidate] = []
    for raw in _items(obj, "candidates"):
        if not isinstance(raw, dict):
            dropped.add("candidate_not_object")
            continue
        name = str(raw.get("field") or "").strip()
        if name not in expected_fields:
            dropped.add("candidate_unknown_field", repr(name[:40]))
            continue
        evidence = str(raw.get("evidence") or "")
        if len(evidence.strip()) < 8 or _squash(evidence) not in haystack:
            dropped.add("candidate_without_evidence", name)
            continue
        stability = str(raw.get("stability") or "").upper()
        kept.append(
            FieldPathCandidate(
                field=name,
                json_path=_s(raw, "json_path", 300),
                evidence=for_output(evidence, 200),
                rationale=_s(raw, "rationale", 300),
                stability=stability if stability in STABILITY else "POSITIONAL",
                confidence=_confidence(raw.get("confidence")),
            )
        )
    review = bool(obj.get("needs_human_review", True))
    if not kept or all(c.stability == "POSITIONAL" for c in kept) or max(c.confidence for c in kept) < 0.6:
        review = True
    markers = [for_output(m, 200) for m in _items(obj, "page_changed_markers") if isinstance(m, str)][:5]
    return DriftAnswer(True, _s(obj, "diagnosis", 1200), kept, markers, review, dropped)
