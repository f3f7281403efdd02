"""Holding every received item against the declared item schema (settings.ITEM_SCHEMA).

Why a load whose items do not fit must not be complete: the loader maps keys to the 9 declared
text fields, and everything downstream compares those values day to day. An API that renames
its keys (camelCase, a new version) gives 9,000 all-null records and, after the build, a
WITHDRAWN for every registration; smaller drift below the gates gives false events that look
real (a key dropped from 15% of the items: "lost a manufacturer"; a list sent as a JSON array: 119
CHANGED; dates with a time part: 100 CHANGED). The audit therefore looks at every item as
received, and any of these is drift that rejects the load:

- an **unknown key** (one that is not a declared field, compared case-insensitively);
- a **missing key**: a declared field absent from an item. Every record of the real dumps
  carries all 9 keys (367 + 147 + 403 records, nulls written as null), so an absent key is a
  change in the API, not a null: absent from every item it is a rename (`missing`), from some
  items a shape (`shapes`);
- a value that is **not text** (an array, an object, a number, a boolean; null is fine);
- a **date** (`DMF_PERMIT_DATE`) that is not exactly an ISO calendar date `YYYY-MM-DD`, spaces
  around it included (null or empty is fine: any field may be empty);

A record with every field empty is not drift: it is one unreadable record, quarantined by the
models (stg_mfds__quarantined_items: held out of the diff, listed, gated by a share), so one such
record no longer rejects every morning while MFDS keeps it in the list.

The audit keeps up to 3 raw items exactly as received as samples for the report and the AI
diagnosis; names shown in sentences are clipped and made printable, as they are API text.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from dmf_watch.pipelines.mfds.settings import ITEM_SCHEMA

MAX_SAMPLES = 3
MAX_NAMES_STORED = 50  # unknown key names kept in the drift record (a hostile API may send many)
MAX_NAMES_SHOWN = 9  # names quoted in the one-sentence reason
MAX_NAME_CHARS = 40
MAX_SHAPES_STORED = 50

DATE_FIELDS = frozenset({"DMF_PERMIT_DATE"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_DIGIT = re.compile(r"\d")
EVERY_FIELD = "*"

_DECLARED = {name.upper(): name for name in ITEM_SCHEMA}


def shown_name(name: str) -> str:
    """A key name fit for a one-line message: printable, clipped (it is text from the API)."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(name))
    return text if len(text) <= MAX_NAME_CHARS else text[: MAX_NAME_CHARS - 1] + "\u2026"


@dataclass
class SchemaDrift:
    """What did not match the declared schema in one list pass.

    `missing`: declared fields no item carries (a rename); `unknown`: keys not declared;
    `shapes`: {"field", "shape", "items"} for each field seen in a shape other than declared
    (`"*"` for the record as a whole), with how many items showed it, most frequent first.
    """

    missing: list[str]
    unknown: list[str]
    samples: list[Any]
    shapes: list[dict[str, Any]] = field(default_factory=list)
    items: int = 0

    def reason(self) -> str:
        """One sentence naming the fields, for `load_runs.reason`, the CLI and the report."""
        return (
            "the API's item schema changed: "
            + self.summary()
            + " (check the MFDS API notice, then update ITEM_SCHEMA in dmf_watch/pipelines/mfds/settings.py)"
        )

    def summary(self) -> str:
        """What drifted, e.g. `missing BIZRNO; MNFCTR_NAME key missing in 1,380 of 9,200 items`."""
        parts = []
        if self.missing:
            parts.append("missing " + _names(self.missing))
        if self.unknown:
            parts.append("unknown " + _names(self.unknown))
        for shape in self.shapes[:MAX_NAMES_SHOWN]:
            subject = "a record" if shape["field"] == EVERY_FIELD else shown_name(shape["field"])
            parts.append(f"{subject} {shape['shape']} in {shape['items']:,} of {self.items:,} items")
        more = len(self.shapes) - MAX_NAMES_SHOWN
        if more > 0:
            parts.append(f"{more} more shapes")
        return "; ".join(parts)

    def map_text(self, fn: Callable[[str], str]) -> SchemaDrift:
        """The same drift with `fn` applied to every string, keys included (to redact secrets
        before anything is serialized, so the stored JSON stays valid)."""
        return SchemaDrift(
            [fn(n) for n in self.missing],
            [fn(n) for n in self.unknown],
            [_map_text(s, fn) for s in self.samples],
            [_map_text(s, fn) for s in self.shapes],
            self.items,
        )

    def as_json(self) -> str:
        """The `load_runs.schema_drift` value: {"missing", "unknown", "shapes", "samples"}."""
        return json.dumps(
            {"missing": self.missing, "unknown": self.unknown, "shapes": self.shapes, "samples": self.samples},
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


def value_shape(name: str, value: Any) -> str | None:
    """How a received value departs from its declared shape, or None when it fits.

    Text only (null is fine); a date field holds an ISO calendar date or nothing. A date in
    another form is named by its pattern (`as 9999-99-99 99:99:99.9`), never by its value.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "sent as a boolean"
    if isinstance(value, (int, float)):
        return "sent as a number"
    if isinstance(value, list):
        return "sent as a JSON array"
    if isinstance(value, dict):
        return "sent as a JSON object"
    if not isinstance(value, str):
        return f"sent as {type(value).__name__}"
    if name in DATE_FIELDS and value.strip():
        # Only the exact form is safe to store: DuckDB's JSON reader, which the raw load goes
        # through, reads a column of dates as DATE and would keep " 2026-10-01" trimmed, so the
        # raw layer could no longer give back what the API sent.
        if value != value.strip() and _ISO_DATE.match(value.strip()):
            return "with spaces around it"
        if not _ISO_DATE.match(value):
            return "as " + shown_name(_DIGIT.sub("9", value))
        try:
            date.fromisoformat(value)
        except ValueError:
            return "not a calendar date"
    return None


@dataclass
class KeyAudit:
    """Keys and value shapes seen over the items of one list pass (merged page by page)."""

    items: int = 0
    carried: Counter[str] = field(default_factory=Counter)  # declared field -> items carrying it
    unknown: Counter[str] = field(default_factory=Counter)  # key as received -> items carrying it
    shapes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (field, shape) -> items
    first_items: list[Any] = field(default_factory=list)
    drift_items: list[Any] = field(default_factory=list)  # items that do not fit

    def observe(self, raw: dict[str, Any]) -> None:
        """Record one item as received (before it is mapped to the declared fields)."""
        self.items += 1
        seen: dict[str, Any] = {}
        strange = False
        for key, value in raw.items():
            declared = _DECLARED.get(str(key).upper())
            if declared is None or declared in seen:  # a second spelling of a field is no field
                strange = True
                if len(self.unknown) < MAX_NAMES_STORED or key in self.unknown:
                    self.unknown[str(key)] += 1
                continue
            seen[declared] = value
            self.carried[declared] += 1
            shape = value_shape(declared, value)
            if shape is not None:
                strange = True
                self._count_shape(declared, shape)
        if len(seen) < len(ITEM_SCHEMA):
            strange = True
            for name in ITEM_SCHEMA:
                if name not in seen:
                    self._count_shape(name, "key missing")
        if len(self.first_items) < MAX_SAMPLES:
            self.first_items.append(copy.deepcopy(raw))
        if strange and len(self.drift_items) < MAX_SAMPLES:
            self.drift_items.append(copy.deepcopy(raw))

    def _count_shape(self, name: str, shape: str, count: int = 1) -> None:
        if len(self.shapes) < MAX_SHAPES_STORED or (name, shape) in self.shapes:
            self.shapes[(name, shape)] += count

    def merge(self, other: KeyAudit) -> None:
        self.items += other.items
        self.carried.update(other.carried)
        for key, count in other.unknown.items():
            if len(self.unknown) < MAX_NAMES_STORED or key in self.unknown:
                self.unknown[key] += count
        for (name, shape), count in other.shapes.items():
            self._count_shape(name, shape, count)
        self.first_items.extend(other.first_items[: MAX_SAMPLES - len(self.first_items)])
        self.drift_items.extend(other.drift_items[: MAX_SAMPLES - len(self.drift_items)])

    def drift(self) -> SchemaDrift | None:
        """The drift of this pass, or None when every item fits the declared schema."""
        if not self.items:
            return None
        missing = [name for name in ITEM_SCHEMA if not self.carried[name]]
        unknown = [key for key, _ in sorted(self.unknown.items(), key=lambda kv: (-kv[1], kv[0]))]
        shapes = [
            {"field": name, "shape": shape, "items": count}
            for (name, shape), count in sorted(self.shapes.items(), key=lambda kv: (-kv[1], kv[0]))
            if not (shape == "key missing" and name in missing)  # absent everywhere: a rename
        ]
        if not missing and not unknown and not shapes:
            return None
        samples = self.drift_items or self.first_items
        return SchemaDrift(missing, unknown, samples[:MAX_SAMPLES], shapes, self.items)
