"""Day-by-day evolution of the synthetic registry, and the exact ground truth of each day.

The pipeline is judged against this truth, so every change is checked against the
pipeline's comparison rules before it is kept: values are compared after trimming, removing
CR/LF and collapsing runs of spaces (a whitespace-only edit is no event); a change is
cosmetic when the values are equal after additionally folding width (NFKC), case, brackets
and punctuation. A candidate change is also checked against nearby variants of those rules
(CR/LF read as a space, spaces dropped, ASCII-only punctuation, "" read as null) and thrown
away when a variant would classify it differently, so the truth does not hinge on a detail
of the pipeline's SQL.

Identity stays followable: a record gets at most one change a day; a number assignment or a
renumbering changes only the number (the pipeline follows it by its fallback key); changes
to key fields only touch records that keep their number.

`IdentityCases` adds scripted cases with their truth on top of the random days: a renumbering
on the same day as a manufacturer edit, and registrations withdrawn that come back after given
numbers of days (`REINSTATED`, with `absent_days`; whether the pipeline still calls it that
depends on its window, so the comparison decides, not the truth).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from random import Random
from typing import TYPE_CHECKING

from dmf_watch.simulator.vocab import make_site

if TYPE_CHECKING:
    from dmf_watch.simulator.registry import Record, World

FIELD_NAMES: dict[str, str] = {
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

_CRLF = re.compile(r"[\r\n]")
_SPACES = re.compile(r" {2,}")


def normalize_ws(value: str | None) -> str | None:
    """The pipeline's whitespace rule: drop CR/LF, collapse runs of spaces, trim."""
    if value is None:
        return None
    return _SPACES.sub(" ", _CRLF.sub("", value)).strip()


def fold_cosmetic(value: str | None) -> str | None:
    """The pipeline's cosmetic fold: whitespace rule plus NFKC, case, brackets, punctuation."""
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", normalize_ws(value) or "").casefold()
    return normalize_ws("".join(ch for ch in text if not unicodedata.category(ch).startswith("P")))


def _ws_crlf_as_space(value: str | None) -> str | None:
    return None if value is None else normalize_ws(_CRLF.sub(" ", value))


def _ws_empty_is_null(value: str | None) -> str | None:
    return normalize_ws(value) or None


def _fold_no_spaces(value: str | None) -> str | None:
    folded = fold_cosmetic(value)
    return None if folded is None else folded.replace(" ", "")


_ASCII_PUNCT = re.compile(r"[!-/:-@\[-`{-~]")


def _fold_ascii_punct(value: str | None) -> str | None:
    if value is None:
        return None
    text = unicodedata.normalize("NFKC", normalize_ws(value) or "").lower()
    return normalize_ws(_ASCII_PUNCT.sub("", text))


_WS_VARIANTS: tuple[Callable[[str | None], str | None], ...] = (_ws_crlf_as_space, _ws_empty_is_null)
_FOLD_VARIANTS: tuple[Callable[[str | None], str | None], ...] = (_fold_no_spaces, _fold_ascii_punct)


@dataclass(frozen=True)
class Classification:
    """How the pipeline sees a before/after pair of items."""

    fields: tuple[str, ...]
    change_kind: str | None
    field_changes: tuple[dict[str, str | None], ...]


def _changed(before: dict, after: dict, norm: Callable[[str | None], str | None]) -> list[str]:
    return [src for src in FIELD_NAMES if norm(before[src]) != norm(after[src])]


def classify(before: dict, after: dict) -> Classification | None:
    """Classify a change under the pipeline rules; None when a rule variant would disagree."""
    changed = _changed(before, after, normalize_ws)
    for variant in _WS_VARIANTS:
        if _changed(before, after, variant) != changed:
            return None
    kinds: dict[str, str] = {}
    for src in changed:
        kind = "cosmetic" if fold_cosmetic(before[src]) == fold_cosmetic(after[src]) else "substantive"
        for fold in _FOLD_VARIANTS:
            if (fold(before[src]) == fold(after[src])) != (kind == "cosmetic"):
                return None
        kinds[src] = kind
    ordered = [src for src in FIELD_NAMES if src in kinds]
    field_changes = tuple(
        {
            "field": FIELD_NAMES[src],
            "before": normalize_ws(before[src]),
            "after": normalize_ws(after[src]),
            "change_kind": kinds[src],
        }
        for src in ordered
    )
    if not ordered:
        return Classification((), "whitespace" if before != after else None, ())
    event_kind = "substantive" if "substantive" in kinds.values() else "cosmetic"
    return Classification(tuple(FIELD_NAMES[src] for src in ordered), event_kind, field_changes)


def _raw_fields(before: dict, after: dict) -> tuple[str, ...]:
    return tuple(FIELD_NAMES[src] for src in FIELD_NAMES if before[src] != after[src])


def _weighted(rng: Random, weights: tuple[float, ...]) -> int:
    return rng.choices(range(len(weights)), weights)[0]


def _full_width(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


@dataclass(frozen=True)
class IdentityCases:
    """Scripted identity cases, all on `day`, so a test knows exactly what to expect.

    `returns_after`: one registration withdrawn on `day` per entry, back that many days later,
    unchanged. `renumbered_with_manufacturer`: records renumbered on `day` while one manufacturer
    name changes (site and country kept). From day `calm_after` + 1 on, the random changes stop,
    so two loads far apart differ only by the scripted returns.
    """

    day: int = 2
    returns_after: tuple[int, ...] = (1, 7, 400)
    renumbered_with_manufacturer: int = 1
    calm_after: int | None = None


class Evolver:
    """Produces day d from day d-1 and remembers every day's list and truth.

    Each day draws from its own `Random` seeded by (seed, day); the world's issuers (permit
    numbers, identities) advance as days are computed, which is why days are always
    computed in order and cached.
    """

    def __init__(
        self, world: World, baseline: list[Record], seed: int, start_date: date, cases: IdentityCases | None = None
    ) -> None:
        self._world = world
        self._seed = seed
        self._start = start_date
        self._cases = cases
        self._states: list[list[Record]] = [baseline]
        self._truths: list[list[dict[str, object]]] = [[]]
        self._parked: dict[int, list[tuple[Record, date]]] = {}

    def state(self, day: int) -> list[Record]:
        while len(self._states) < day:
            self._step()
        return self._states[day - 1]

    def truth(self, day: int) -> list[dict[str, object]]:
        self.state(day)
        return self._truths[day - 1]

    def _step(self) -> None:
        day = len(self._states) + 1
        _Day(
            self._world,
            self._states[-1],
            day,
            self._start + timedelta(days=day - 1),
            Random(f"dmf-day:{self._seed}:{day}"),
            self._cases,
            self._parked,
        ).run(self._states, self._truths)


class _Day:
    """One day's changes: each operation picks untouched records, checks, applies, records truth."""

    def __init__(
        self,
        world: World,
        previous: list[Record],
        day: int,
        as_of: date,
        rng: Random,
        cases: IdentityCases | None = None,
        parked: dict[int, list[tuple[Record, date]]] | None = None,
    ) -> None:
        self.cases = cases
        self.parked = {} if parked is None else parked
        self.world = world
        self.day = day
        self.as_of = as_of
        self.rng = rng
        self.state = list(previous)
        self.touched: set[int] = set()
        self.truth: list[dict[str, object]] = []

    def run(self, states: list[list[Record]], truths: list[list[dict[str, object]]]) -> None:
        rng = self.rng
        self._return_parked()
        cases = self.cases
        if cases is not None and self.day == cases.day:
            for _ in range(cases.renumbered_with_manufacturer):
                self._renumber_with_manufacturer()
            for after in cases.returns_after:
                self._withdraw_until(self.day + after)
        if cases is not None and cases.calm_after is not None and self.day > cases.calm_after:
            states.append(self.state)
            truths.append(self.truth)
            return
        self._assign_numbers()
        for _ in range(_weighted(rng, (0.55, 0.35, 0.10))):
            self._withdraw()
        for _ in range(_weighted(rng, (0.10, 0.30, 0.35, 0.20, 0.05))):
            self._substantive()
        if rng.random() < 0.18:
            self._renumber()
        for _ in range(_weighted(rng, (0.25, 0.35, 0.25, 0.15))):
            self._cosmetic()
        for _ in range(_weighted(rng, (0.15, 0.25, 0.25, 0.20, 0.15))):
            self._whitespace()
        for _ in range(_weighted(rng, (0.12, 0.20, 0.25, 0.20, 0.12, 0.07, 0.04))):
            self._register()
        states.append(self.state)
        truths.append(self.truth)

    # -- truth -------------------------------------------------------------------------

    def _record_truth(
        self,
        event_type: str,
        rec: Record,
        before_no: str | None,
        *,
        fields: tuple[str, ...] = (),
        change_kind: str | None = None,
        field_changes: tuple[dict[str, str | None], ...] = (),
        detail: str = "",
    ) -> None:
        self.truth.append(
            {
                "day": self.day,
                "as_of_date": self.as_of.isoformat(),
                "record_id": rec.rid,
                "event_type": event_type,
                "permit_no": rec.permit_no,
                "permit_no_before": before_no,
                "ingredient_name": normalize_ws(rec.ingredient),
                "applicant_bizrno": rec.bizrno,
                "permit_date": rec.permit_date.isoformat(),
                "fields": list(fields),
                "change_kind": change_kind,
                "detail": detail,
                "field_changes": [dict(fc) for fc in field_changes],
            }
        )

    def _apply(self, index: int, new: Record, expected: str, detail: str) -> bool:
        """Keep `new` in place of the record at `index` if it classifies as `expected`."""
        old = self.state[index]
        before, after = old.to_item(), new.to_item()
        result = classify(before, after)
        if result is None or result.change_kind != expected:
            return False
        if not self.world.rekey(old, new):
            return False
        self.state[index] = new
        self.touched.add(new.rid)
        if expected == "whitespace":
            self._record_truth(
                "NONE", new, old.permit_no, fields=_raw_fields(before, after), change_kind="whitespace", detail=detail
            )
        else:
            self._record_truth(
                "CHANGED",
                new,
                old.permit_no,
                fields=result.fields,
                change_kind=result.change_kind,
                field_changes=result.field_changes,
                detail=detail,
            )
        return True

    # -- picking -------------------------------------------------------------------------

    def _pick(self, accept: Callable[[Record], bool], tries: int = 60) -> int | None:
        for _ in range(tries):
            index = self.rng.randrange(len(self.state))
            rec = self.state[index]
            if rec.rid not in self.touched and rec.permit_no is not None and accept(rec):
                return index
        return None

    # -- operations ----------------------------------------------------------------------

    def _assign_numbers(self) -> None:
        """Records published without a number receive one some days later."""
        for index, rec in enumerate(self.state):
            if rec.permit_no is None and rec.rid not in self.touched and self.rng.random() < 0.12:
                family = self.rng.choices(("old5", "j4", "su", "nd"), (25, 35, 30, 6))[0]
                number, used = self.world.issue_number(self.rng, family, rec.permit_date, rec.ingredient)
                self._apply(index, replace(rec, permit_no=number, family=used), "substantive", "permit number assigned")

    def _withdraw(self) -> None:
        for _ in range(40):
            index = self.rng.randrange(len(self.state))
            rec = self.state[index]
            if rec.rid not in self.touched:
                break
        else:
            return
        del self.state[index]
        self.touched.add(rec.rid)
        self._record_truth("WITHDRAWN", rec, rec.permit_no, detail="registration withdrawn")

    # -- scripted identity cases ------------------------------------------------------------

    def _withdraw_until(self, return_day: int) -> None:
        """Withdraw a numbered record today and park it to come back, unchanged, on `return_day`."""
        index = self._pick(lambda r: True)
        if index is None:
            return
        rec = self.state.pop(index)
        self.touched.add(rec.rid)
        self.parked.setdefault(return_day, []).append((rec, self.as_of))
        self._record_truth("WITHDRAWN", rec, rec.permit_no, detail=f"registration withdrawn, back on day {return_day}")

    def _return_parked(self) -> None:
        for rec, withdrawn_as_of in self.parked.pop(self.day, []):
            self._insert(rec)
            absent = (self.as_of - withdrawn_as_of).days
            self._record_truth("REINSTATED", rec, None, detail=f"registration back after {absent} days")
            self.truth[-1]["absent_days"] = absent

    def _renumber_with_manufacturer(self) -> None:
        """A renumbering and a manufacturer name edit on the same day: the fallback key breaks.

        Only records whose ingredient, BIZRNO and permit date are unique in today's list are
        picked, so that what the pipeline may follow them by is unambiguous.
        """
        loose = Counter((r.ingredient, r.bizrno, r.permit_date) for r in self.state)
        candidates = [
            i
            for i, r in enumerate(self.state)
            if r.rid not in self.touched
            and self.world.can_renumber(r)
            and loose[(r.ingredient, r.bizrno, r.permit_date)] == 1
        ]
        for _ in range(20):
            if not candidates:
                return
            index = self.rng.choice(candidates)
            rec = self.state[index]
            i = self.rng.randrange(len(rec.names))
            name, _ = self.world.pick_manufacturer(self.rng, rec.mfr_countries[i])
            if any(fold_cosmetic(name) == fold_cosmetic(other) for other in rec.names):
                continue
            issued = self.world.renumber(self.rng, rec)
            if issued is None:
                candidates.remove(index)
                continue
            new = replace(rec, permit_no=issued[0], family=issued[1], names=_put(rec.names, i, name))
            if self._apply(
                index,
                new,
                "substantive",
                f"renumbered {rec.permit_no} -> {issued[0]} and manufacturer edited: "
                f"{normalize_ws(rec.names[i])} -> {name}",
            ):
                return

    def _substantive(self) -> None:
        rng = self.rng
        kind = rng.choices(
            (
                "manufacturer_added",
                "manufacturer_removed",
                "manufacturer_replaced",
                "site_changed",
                "applicant_changed",
                "country_added",
            ),
            (20, 12, 20, 20, 15, 13),
        )[0]
        for _ in range(10):
            index = self._pick(lambda r: _parallel(r) or kind in ("applicant_changed", "country_added"))
            if index is None:
                return
            made = getattr(self, f"_make_{kind}")(self.state[index])
            if made is not None and self._apply(index, made[0], "substantive", made[1]):
                return

    def _make_manufacturer_added(self, rec: Record) -> tuple[Record, str] | None:
        if len(rec.names) >= 4:
            return None
        country = self.world.pick_country(self.rng)
        name, site = self.world.pick_manufacturer(self.rng, country)
        if any(fold_cosmetic(name) == fold_cosmetic(other) for other in rec.names):
            return None
        return (
            replace(
                rec,
                names=rec.names + (name,),
                places=rec.places + (site,),
                countries=rec.countries + (country,),
                mfr_countries=rec.mfr_countries + (country,),
            ),
            f"manufacturer added: {name}",
        )

    def _make_manufacturer_removed(self, rec: Record) -> tuple[Record, str] | None:
        if len(rec.names) < 2:
            return None
        i = self.rng.randrange(len(rec.names))
        return (
            replace(
                rec,
                names=_drop(rec.names, i),
                places=_drop(rec.places, i),
                countries=_drop(rec.countries, i),
                mfr_countries=_drop(rec.mfr_countries, i),
            ),
            f"manufacturer removed: {normalize_ws(rec.names[i])}",
        )

    def _make_manufacturer_replaced(self, rec: Record) -> tuple[Record, str] | None:
        i = self.rng.randrange(len(rec.names))
        country = rec.mfr_countries[i] if self.rng.random() < 0.5 else self.world.pick_country(self.rng)
        name, site = self.world.pick_manufacturer(self.rng, country)
        if any(fold_cosmetic(name) == fold_cosmetic(other) for other in rec.names):
            return None
        return (
            replace(
                rec,
                names=_put(rec.names, i, name),
                places=_put(rec.places, i, site),
                countries=_put(rec.countries, i, country),
                mfr_countries=_put(rec.mfr_countries, i, country),
            ),
            f"manufacturer replaced: {normalize_ws(rec.names[i])} -> {name}",
        )

    def _make_site_changed(self, rec: Record) -> tuple[Record, str] | None:
        i = self.rng.randrange(len(rec.places))
        site = make_site(self.rng, rec.mfr_countries[i])
        return replace(
            rec, places=_put(rec.places, i, site)
        ), f"site changed: {normalize_ws(rec.names[min(i, len(rec.names) - 1)])}"

    def _make_applicant_changed(self, rec: Record) -> tuple[Record, str] | None:
        company = self.world.pick_company(self.rng)
        if company.bizrno == rec.bizrno:
            return None
        return (
            replace(rec, applicant=company.name, bizrno=company.bizrno),
            f"applicant changed: {normalize_ws(rec.applicant)} -> {company.name.strip()}",
        )

    def _make_country_added(self, rec: Record) -> tuple[Record, str] | None:
        country = self.world.pick_country(self.rng)
        if country in rec.countries:
            return None
        return replace(rec, countries=rec.countries + (country,)), f"country added: {country}"

    def _renumber(self) -> None:
        """A derived number becomes a master number; only DMF_PERMIT_NO changes."""
        window = (self.as_of - timedelta(days=60), self.as_of - timedelta(days=400), date.min)
        for since in window:
            candidates = [
                i
                for i, r in enumerate(self.state)
                if r.rid not in self.touched and r.permit_date >= since and self.world.can_renumber(r)
            ]
            if candidates:
                break
        else:
            return
        index = self.rng.choice(candidates)
        rec = self.state[index]
        issued = self.world.renumber(self.rng, rec)
        if issued is not None:
            self._apply(
                index,
                replace(rec, permit_no=issued[0], family=issued[1]),
                "substantive",
                f"renumbered: {rec.permit_no} -> {issued[0]}",
            )

    def _cosmetic(self) -> None:
        for _ in range(10):
            index = self._pick(lambda r: True)
            if index is None:
                return
            rec = self.state[index]
            target = self.rng.choice(("names", "places"))
            parts: tuple[str, ...] = getattr(rec, target)
            i = self.rng.randrange(len(parts))
            edited, label = self._cosmetic_edit(parts[i])
            if edited == parts[i]:
                continue
            new = replace(rec, **{target: _put(parts, i, edited)})
            field = "manufacturer" if target == "names" else "manufacture_place"
            if self._apply(index, new, "cosmetic", f"{label} in {field}"):
                return

    def _cosmetic_edit(self, text: str) -> tuple[str, str]:
        op = self.rng.choice(("case", "width", "period", "bracket"))
        if op == "case":
            return (text.lower() if text == text.upper() else text.upper()), "case changed"
        if op == "width":
            words = [w for w in re.findall(r"[A-Za-z0-9]{2,}", text)]
            if not words:
                return text, ""
            word = self.rng.choice(words)
            return text.replace(word, _full_width(word), 1), "full-width characters"
        if op == "period":
            stripped = text.rstrip()
            if stripped.endswith("."):
                return stripped[:-1] + text[len(stripped) :], "punctuation removed"
            return stripped + "." + text[len(stripped) :], "punctuation added"
        if "(" in text:
            return text.replace("(", "[").replace(")", "]"), "brackets changed"
        if "[" in text:
            return text.replace("[", "(").replace("]", ")"), "brackets changed"
        words = list(re.finditer(r"[A-Za-z]{3,}", text))
        if not words:
            return text, ""
        word = words[-1]
        return f"{text[: word.start()]}({word.group()}){text[word.end() :]}", "brackets added"

    def _whitespace(self) -> None:
        for _ in range(10):
            index = self._pick(lambda r: True)
            if index is None:
                return
            rec = self.state[index]
            target = self.rng.choice(("names", "places"))
            parts = list(getattr(rec, target))
            op = self.rng.choice(("trailing", "crlf", "leading", "double", "strip"))
            if op == "trailing":
                parts[-1] += " "
            elif op == "crlf":
                parts[-1] += "\r\n"
            elif op == "leading":
                parts[0] = " " + parts[0]
            elif op == "double":
                spaced = [k for k, part in enumerate(parts) if " " in part.strip()]
                if not spaced:
                    continue
                k = self.rng.choice(spaced)
                positions = [m.start() for m in re.finditer(" ", parts[k])]
                pos = self.rng.choice(positions)
                parts[k] = parts[k][:pos] + " " + parts[k][pos:]
            else:
                parts[-1] = parts[-1].rstrip()
            new = replace(rec, **{target: tuple(parts)})
            field = "manufacturer" if target == "names" else "manufacture_place"
            if self._apply(index, new, "whitespace", f"whitespace only ({op}) in {field}"):
                return

    def _register(self) -> None:
        """A new registration, dated a day or three before the as-of date, inserted in order."""
        rng = self.rng
        lag = rng.choice((1, 1, 1, 2, 3))
        day = self.as_of - timedelta(days=lag)
        day -= timedelta(days=max(0, day.weekday() - 4))
        numbered = rng.random() >= 0.25
        family = "dash" if rng.random() < 0.03 else None
        rec = self.world.make_record(rng, day, numbered=numbered, family=family, early=False)
        if lag == 1 and rng.random() < 0.6:
            rec = replace(rec, notice_code="")
        self._insert(rec, window=500)
        self._record_truth(
            "NEW", rec, None, detail="new registration" + ("" if numbered else " without a permit number yet")
        )

    def _insert(self, rec: Record, window: int | None = None) -> None:
        """Insert a record at its place in the list order (permit date, then number).

        New registrations are recent, so their search stops `window` records from the end; a
        returning registration is searched for over the whole list.
        """
        key = rec.sort_key()
        position = len(self.state)
        floor = 0 if window is None else len(self.state) - window
        while position > 0 and position > floor and self.state[position - 1].sort_key() > key:
            position -= 1
        self.state.insert(position, rec)
        self.touched.add(rec.rid)


def _parallel(rec: Record) -> bool:
    return len(rec.names) == len(rec.places) == len(rec.countries) == len(rec.mfr_countries)


def _drop(parts: tuple[str, ...], i: int) -> tuple[str, ...]:
    return parts[:i] + parts[i + 1 :]


def _put(parts: tuple[str, ...], i: int, value: str) -> tuple[str, ...]:
    return parts[:i] + (value,) + parts[i + 1 :]
