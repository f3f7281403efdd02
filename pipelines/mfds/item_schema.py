"""Holding every received item against the declared item schema (settings.ITEM_SCHEMA).

Why a load with renamed keys must not be complete: the loader maps keys to the 9 declared
fields, so an API that renames them (camelCase, a new version) would give 9,000 all-null records
and, after the build, a WITHDRAWN for every registration. The audit therefore looks at the key
set of the items as received and decides what counts as drift:

- an **unknown key** (one that is not a declared field, compared case-insensitively) in any
  item is drift: the real API never sends one, and a new key means its shape changed;
- a **missing field** is one that *no* item of the list carries. A single item without a key is
  not drift: SPEC §2 says any field may be null, and APIs of this portal family may drop null
  keys (the XML form drops empty elements), so one absent key reads as null. Every record of
  the real dumps carries all 9 keys (367 + 147 + 403 records, nulls written as null), so a field
  absent from the whole list is a rename, not a day's data.

The audit keeps up to 3 raw items exactly as received as samples for the report and the AI
diagnosis; names shown in sentences are clipped and made printable, as they are API text.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipelines.mfds.settings import ITEM_SCHEMA

MAX_SAMPLES = 3
MAX_NAMES_STORED = 50  # unknown key names kept in the drift record (a hostile API may send many)
MAX_NAMES_SHOWN = 9  # names quoted in the one-sentence reason
MAX_NAME_CHARS = 40

_DECLARED = {name.upper(): name for name in ITEM_SCHEMA}


def shown_name(name: str) -> str:
    """A key name fit for a one-line message: printable, clipped (it is text from the API)."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(name))
    return text if len(text) <= MAX_NAME_CHARS else text[: MAX_NAME_CHARS - 1] + "\u2026"


@dataclass
class SchemaDrift:
    """What did not match the declared schema in one list pass."""

    missing: list[str]
    unknown: list[str]
    samples: list[Any]

    def reason(self) -> str:
        """One sentence naming the fields, for `load_runs.reason`, the CLI and the report."""
        parts = []
        if self.missing:
            parts.append("missing " + _names(self.missing))
        if self.unknown:
            parts.append("unknown " + _names(self.unknown))
        return (
            "the API's item schema changed: "
            + "; ".join(parts)
            + " (check the MFDS API notice, then update ITEM_SCHEMA in pipelines/mfds/settings.py)"
        )

    def map_text(self, fn: Callable[[str], str]) -> SchemaDrift:
        """The same drift with `fn` applied to every string, keys included (to redact secrets
        before anything is serialized, so the stored JSON stays valid)."""
        return SchemaDrift(
            [fn(n) for n in self.missing], [fn(n) for n in self.unknown], [_map_text(s, fn) for s in self.samples]
        )

    def as_json(self) -> str:
        """The `load_runs.schema_drift` value: {"missing", "unknown", "samples"}."""
        return json.dumps(
            {"missing": self.missing, "unknown": self.unknown, "samples": self.samples},
            ensure_ascii=False,
            default=str,
        )


def _map_text(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {fn(str(k)): _map_text(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_text(v, fn) for v in value]
    return fn(value) if isinstance(value, str) else value


def _names(names: list[str]) -> str:
    shown = ", ".join(shown_name(n) for n in names[:MAX_NAMES_SHOWN])
    more = len(names) - MAX_NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


@dataclass
class KeyAudit:
    """Key sets seen over the items of one list pass (merged page by page)."""

    items: int = 0
    carried: Counter[str] = field(default_factory=Counter)  # declared field -> items carrying it
    unknown: Counter[str] = field(default_factory=Counter)  # key as received -> items carrying it
    first_items: list[Any] = field(default_factory=list)
    drift_items: list[Any] = field(default_factory=list)  # items with an unknown key

    def observe(self, raw: dict[str, Any]) -> None:
        """Record one item as received (before it is mapped to the declared fields)."""
        self.items += 1
        seen: set[str] = set()
        strange = False
        for key in raw:
            declared = _DECLARED.get(str(key).upper())
            if declared is None or declared in seen:  # a second spelling of a field is no field
                strange = True
                if len(self.unknown) < MAX_NAMES_STORED or key in self.unknown:
                    self.unknown[str(key)] += 1
                continue
            seen.add(declared)
            self.carried[declared] += 1
        if len(self.first_items) < MAX_SAMPLES:
            self.first_items.append(copy.deepcopy(raw))
        if strange and len(self.drift_items) < MAX_SAMPLES:
            self.drift_items.append(copy.deepcopy(raw))

    def merge(self, other: KeyAudit) -> None:
        self.items += other.items
        self.carried.update(other.carried)
        for key, count in other.unknown.items():
            if len(self.unknown) < MAX_NAMES_STORED or key in self.unknown:
                self.unknown[key] += count
        self.first_items.extend(other.first_items[: MAX_SAMPLES - len(self.first_items)])
        self.drift_items.extend(other.drift_items[: MAX_SAMPLES - len(self.drift_items)])

    def drift(self) -> SchemaDrift | None:
        """The drift of this pass, or None when every item fits the declared schema."""
        if not self.items:
            return None
        missing = [name for name in ITEM_SCHEMA if not self.carried[name]]
        unknown = [key for key, _ in sorted(self.unknown.items(), key=lambda kv: (-kv[1], kv[0]))]
        if not missing and not unknown:
            return None
        samples = self.drift_items or self.first_items
        return SchemaDrift(missing=missing, unknown=unknown, samples=samples[:MAX_SAMPLES])
