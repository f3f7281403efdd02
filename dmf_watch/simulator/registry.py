"""A synthetic MFDS DMF registry, generated deterministically from a seed.

The real list cannot be used for a demo or for CI (it needs a service key, changes every day
and must never be copied into the repository), so the simulator generates one of the same
size and texture: the permit-number generations, derived `(n)`/`(A)` numbers whose permit
date is later than their prefix, comma-joined manufacturers and countries, trailing spaces,
`\\r\\n`, full-width characters, newest records without a number. Every draw comes from a
`random.Random` owned by the generator, never from the global random state, so a seed always
yields the same registry.

`SyntheticRegistry` is the public face: day 1 is the baseline, later days are produced by
`simulator.evolution`, which also records the ground truth of each day's changes.
"""

from __future__ import annotations

import bisect
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from random import Random

from dmf_watch.simulator import vocab
from dmf_watch.simulator.evolution import Evolver, IdentityCases

SOURCE_FIELDS: tuple[str, ...] = (
    "DMF_PERMIT_NO",
    "INGR_KOR_NAME",
    "ENTP_NAME",
    "MNFCTR_NAME",
    "MNFCTR_PLACE",
    "MANUF_COUNTRY_CODE_NM",
    "DMF_PERMIT_DATE",
    "BIZRNO",
    "NOTICE_CODE",
)
DEFAULT_SEED = 20261129
DEFAULT_SIZE = 9200
DEFAULT_START_DATE = date(2026, 11, 29)

Item = dict[str, str | None]

# Permit-number families. The `_n`/`_a`/`_nl` ones are derived numbers (suffix `(n)`, `(A)`,
# `(n)-A`) whose prefix date is earlier than the record's permit date.
OLD5, OLD5_N, OLD5_A, OLD5_NL = "old5", "old5_n", "old5_a", "old5_nl"
J4, J4_N, J4_A = "j4", "j4_n", "j4_a"
SU, SU_N, SU_A = "su", "su_n", "su_a"
ND, ND_N = "nd", "nd_n"
DASH = "dash"
DERIVED_FAMILIES = frozenset({OLD5_N, OLD5_A, OLD5_NL, J4_N, J4_A, SU_N, SU_A, ND_N})
_POOL_OF = {
    OLD5: OLD5,
    OLD5_N: OLD5,
    OLD5_A: OLD5,
    OLD5_NL: OLD5,
    J4: J4,
    J4_N: J4,
    J4_A: J4,
    SU: SU,
    SU_N: SU,
    SU_A: SU,
    ND: ND,
    ND_N: ND,
}
_STYLE_OF = {OLD5_N: "n", OLD5_A: "a", OLD5_NL: "nl", J4_N: "n", J4_A: "a", SU_N: "n", SU_A: "a", ND_N: "n"}

# Family weights before and after the 4-part `-209/210/211-J-` numbers appeared (2018-05),
# tuned so that the whole registry has the proportions measured on the real sample.
_J4_START = date(2018, 5, 1)
_WEIGHTS_EARLY = {OLD5: 32, OLD5_N: 41, OLD5_A: 1.0, OLD5_NL: 0.4, SU: 12, SU_N: 4, SU_A: 0.8, ND: 6, ND_N: 0.4}
_WEIGHTS_LATE = {
    J4: 29,
    J4_N: 12,
    J4_A: 3.4,
    OLD5: 12,
    OLD5_N: 15,
    OLD5_A: 1.2,
    OLD5_NL: 0.3,
    SU: 17,
    SU_N: 5,
    SU_A: 1.3,
    ND: 5,
    ND_N: 0.4,
}
_FAMILY_CUM_EARLY = (list(_WEIGHTS_EARLY), list(accumulate(_WEIGHTS_EARLY.values())))
_FAMILY_CUM_LATE = (list(_WEIGHTS_LATE), list(accumulate(_WEIGHTS_LATE.values())))

# Where in the list (fraction of records) which permit dates sit, read off the real dump:
# a bulk registration on 2005-08-31, then denser and denser years.
_DATE_ANCHORS: tuple[tuple[float, date], ...] = (
    (0.000, date(2005, 8, 31)),
    (0.065, date(2005, 8, 31)),
    (0.070, date(2007, 1, 15)),
    (0.085, date(2010, 2, 1)),
    (0.100, date(2011, 9, 1)),
    (0.160, date(2012, 12, 1)),
    (0.210, date(2013, 11, 20)),
    (0.300, date(2017, 6, 15)),
    (0.400, date(2019, 8, 10)),
    (0.500, date(2021, 2, 20)),
    (0.600, date(2022, 1, 25)),
    (0.700, date(2023, 11, 15)),
    (0.800, date(2025, 3, 20)),
    (0.900, date(2026, 1, 28)),
)

_NOT_ALNUM = re.compile(r"[\W_]+")
_OLD5_RE = re.compile(r"^\d{8}-(?P<cls>\d+)-(?P<letter>[A-Z])-\d+-\d+")


@dataclass(frozen=True, slots=True)
class Record:
    """One registration as the simulator holds it; `to_item` renders the MFDS JSON item.

    Manufacturer names, sites and countries are kept as parts (joined by commas on output)
    because changes add, remove or replace one manufacturer, and a raw name may itself
    contain commas (`Co., Ltd`). `mfr_countries` is the country of each manufacturer and
    stays parallel to `names` even after a country is added to `countries`. `family` is the
    permit-number family, which decides whether the record can be renumbered. `rid` is an
    internal identity that never leaves the simulator.
    """

    rid: int
    permit_no: str | None
    ingredient: str
    applicant: str
    bizrno: str
    names: tuple[str, ...]
    places: tuple[str, ...]
    countries: tuple[str, ...]
    mfr_countries: tuple[str, ...]
    permit_date: date
    notice_code: str | None
    family: str | None

    def to_item(self) -> Item:
        return {
            "DMF_PERMIT_NO": self.permit_no,
            "INGR_KOR_NAME": self.ingredient,
            "ENTP_NAME": self.applicant,
            "MNFCTR_NAME": ",".join(self.names),
            "MNFCTR_PLACE": ",".join(self.places),
            "MANUF_COUNTRY_CODE_NM": ",".join(self.countries),
            "DMF_PERMIT_DATE": self.permit_date.isoformat(),
            "BIZRNO": self.bizrno,
            "NOTICE_CODE": self.notice_code,
        }

    def sort_key(self) -> tuple[date, str]:
        """The real list is ordered by permit date, then number; null numbers come last."""
        return (self.permit_date, self.permit_no or "\uffff")


@lru_cache(maxsize=65536)
def identity_fold(value: str) -> str:
    """Fold far beyond any pipeline rule (NFKC, case, keep letters and digits only).

    Keeping fallback identities unique under this fold keeps them unique under every weaker
    normalisation a pipeline may choose.
    """
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", value).casefold())


def identity_key(rec: Record) -> tuple[str, str, str, str]:
    """The fallback identity (ingredient, BIZRNO, manufacturer, permit date), strongly folded."""
    return (identity_fold(rec.ingredient), rec.bizrno, identity_fold(",".join(rec.names)), rec.permit_date.isoformat())


def _zipf_cum(n: int, exponent: float, offset: float = 2.0) -> list[float]:
    return list(accumulate(1.0 / (i + offset) ** exponent for i in range(n)))


def _weekday_or_before(day: date) -> date:
    return day - timedelta(days=max(0, day.weekday() - 4))


@dataclass
class Company:
    name: str
    bizrno: str
    home_site: str


class NumberBook:
    """Issues permit numbers of every format, never the same one twice.

    Derived numbers pick their base with a Pólya urn (a base that already has derivatives
    is likelier to get another), which reproduces the long `(1)…(53)` tail of the real list.
    """

    def __init__(self, rng: Random) -> None:
        self.used: set[str] = set()
        self._class_serial: dict[int, int] = {}
        self._day_seq: dict[tuple[date, int], int] = {}
        self._j_serial = 0
        self._dash_serial = 12000 + rng.randint(0, 400)
        self._su_groups = sorted(rng.sample(range(20, 900), 110)) + sorted(rng.sample(range(1000, 7000), 30))
        self._su_cum = _zipf_cum(len(self._su_groups), 0.8, 3.0)
        rng.shuffle(self._su_groups)
        nd_codes = sorted(rng.sample(range(60, 2800), 40))
        self._nd_groups = [f"{c:04d}" if c < 1000 and rng.random() < 0.3 else str(c) for c in nd_codes]
        self._group_counter: dict[str, int] = {}
        self._pools: dict[str, list[tuple[str, date]]] = {OLD5: [], J4: [], SU: [], ND: []}
        self._suffix_n: dict[str, int] = {}
        self._suffix_a: dict[str, int] = {}

    def _claim(self, number: str) -> str:
        self.used.add(number)
        return number

    def old5(self, rng: Random, day: date, cls: int, letter: str) -> str:
        while True:
            ser = self._class_serial.get(cls, rng.randint(0, 12)) + rng.choice((1, 1, 1, 2))
            self._class_serial[cls] = ser
            seq = self._day_seq.get((day, cls), 0) + 1
            self._day_seq[(day, cls)] = seq
            number = f"{day:%Y%m%d}-{cls}-{letter}-{ser}-{seq:02d}"
            if number not in self.used:
                self._pools[OLD5].append((number, day))
                return self._claim(number)

    def j4(self, rng: Random, day: date) -> str:
        while True:
            self._j_serial += rng.choice((1, 1, 1, 2))
            cls = rng.choices((209, 210, 211), (55, 25, 20))[0]
            number = f"{day:%Y%m%d}-{cls}-J-{self._j_serial}"
            if number not in self.used:
                self._pools[J4].append((number, day))
                return self._claim(number)

    def su(self, rng: Random, day: date) -> str:
        while True:
            group = str(rng.choices(self._su_groups, cum_weights=self._su_cum)[0])
            count = self._group_counter.get("su" + group, 0) + 1
            self._group_counter["su" + group] = count
            number = f"수{group}-{count}-ND"
            if number not in self.used:
                self._pools[SU].append((number, day))
                return self._claim(number)

    def nd(self, rng: Random, day: date) -> str:
        while True:
            group = rng.choice(self._nd_groups)
            count = self._group_counter.get("nd" + group, 0) + 1
            self._group_counter["nd" + group] = count
            number = f"{group}-{count}-ND"
            if number not in self.used:
                self._pools[ND].append((number, day))
                return self._claim(number)

    def dash(self, rng: Random, day: date) -> str:
        self._dash_serial += rng.choice((1, 1, 2, 3))
        return self._claim(f"{day:%Y%m%d}---{self._dash_serial}-{rng.randint(1, 160)}")

    def derived(self, rng: Random, family: str, day: date) -> str | None:
        """A derived number on a base issued before `day`, or None when there is none yet."""
        pool = self._pools[_POOL_OF[family]]
        if not pool:
            return None
        for _ in range(8):
            base, base_day = rng.choice(pool)
            if base_day < day:
                break
        else:
            return None
        pool.append((base, base_day))
        style = _STYLE_OF[family]
        for _ in range(30):
            if style == "a" and self._suffix_a.get(base, 0) < 3:
                idx = self._suffix_a.get(base, 0)
                self._suffix_a[base] = idx + 1
                number = f"{base}({chr(65 + idx)})"
            else:
                k = self._suffix_n.get(base, 0) + 1
                self._suffix_n[base] = k
                number = f"{base}({k})-{rng.choice('AB')}" if style == "nl" else f"{base}({k})"
            if number not in self.used:
                return self._claim(number)
        return None


class World:
    """The fixed cast of a registry (ingredients, companies, manufacturers) and its issuers.

    The world outlives the baseline: evolution draws new registrations, replacement
    manufacturers and new applicants from the same pools, and keeps permit numbers and
    fallback identities unique across every day.
    """

    def __init__(self, seed: int, start_date: date) -> None:
        rng = Random(f"dmf-world:{seed}")
        self.start_date = start_date
        self.numbers = NumberBook(rng)
        self.used_keys: set[tuple[str, str, str, str]] = set()
        self._next_rid = 0

        ingredients = vocab.ingredient_catalogue()
        rng.shuffle(ingredients)
        self.ingredients = ingredients
        self._ingredient_cum = _zipf_cum(len(ingredients), 0.85, 4.0)
        self.ingredient_class = {name: rng.randint(1, 208) for name in ingredients}
        self.herbal_class = {name: rng.choice((5, 14, 16)) for name in vocab.HERBALS}

        self.companies = self._make_companies(rng, 480)
        self._company_cum = _zipf_cum(len(self.companies), 0.85, 6.0)

        self.countries = list(vocab.COUNTRY_WEIGHTS)
        self._country_cum = list(accumulate(vocab.COUNTRY_WEIGHTS.values()))
        self.manufacturers: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        self._mfr_cum: dict[str, list[float]] = {}
        for country, weight in vocab.COUNTRY_WEIGHTS.items():
            size = {"인도": 420, "중국": 450, "대한민국": 70}.get(country, max(2, int(weight * 14)))
            pool: dict[str, tuple[str, ...]] = {}
            folds: set[str] = set()
            for _ in range(size * 3):
                if len(pool) >= size:
                    break
                name = (
                    vocab.make_company_name(rng)
                    if country == "대한민국"
                    else vocab.make_foreign_manufacturer(rng, country)
                )
                if identity_fold(name) not in folds:
                    folds.add(identity_fold(name))
                    pool[name] = tuple(vocab.make_site(rng, country) for _ in range(rng.choice((1, 1, 1, 2))))
            self.manufacturers[country] = list(pool.items())
            self._mfr_cum[country] = _zipf_cum(len(pool), 0.9, 3.0)

    @staticmethod
    def _make_companies(rng: Random, count: int) -> list[Company]:
        companies: list[Company] = []
        folds: set[str] = set()
        numbers: set[str] = set()
        while len(companies) < count:
            name = vocab.make_company_name(rng)
            body = identity_fold(name.replace("(주)", "").replace("주식회사", ""))
            number = vocab.make_bizrno(rng)
            if body in folds or number in numbers:
                continue
            folds.add(body)
            numbers.add(number)
            if rng.random() < 0.01:
                name += " "
            companies.append(Company(name, number, rng.choice(vocab.KOREAN_SITES)))
        return companies

    def next_rid(self) -> int:
        self._next_rid += 1
        return self._next_rid

    def claim_key(self, rec: Record) -> bool:
        """Reserve a record's fallback identity; False when any record ever had it."""
        key = identity_key(rec)
        if key in self.used_keys:
            return False
        self.used_keys.add(key)
        return True

    def rekey(self, old: Record, new: Record) -> bool:
        """Allow a change only if the record keeps its identity or moves to an unused one."""
        return identity_key(old) == identity_key(new) or self.claim_key(new)

    def pick_company(self, rng: Random) -> Company:
        return rng.choices(self.companies, cum_weights=self._company_cum)[0]

    def pick_country(self, rng: Random) -> str:
        return rng.choices(self.countries, cum_weights=self._country_cum)[0]

    def pick_manufacturer(self, rng: Random, country: str) -> tuple[str, str]:
        """A (name, site) of `country`, the name sometimes spelled with a small variation."""
        name, sites = rng.choices(self.manufacturers[country], cum_weights=self._mfr_cum[country])[0]
        roll = rng.random()
        if roll < 0.05 and not name.endswith("."):
            name += "."
        elif roll < 0.08 and country != "대한민국":
            name = name.upper()
        return name, rng.choice(sites)

    def manufacturer_parts(
        self, rng: Random, company: Company, first_country: str | None, count: int
    ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        names: list[str] = []
        places: list[str] = []
        countries: list[str] = []
        for i in range(count):
            country = first_country if (i == 0 and first_country) else self.pick_country(rng)
            if country == "대한민국" and rng.random() < 0.65:
                name, place = vocab.korean_manufacturer_variant(rng, company.name.strip()), company.home_site
            else:
                name, place = self.pick_manufacturer(rng, country)
            if any(identity_fold(name) == identity_fold(other) for other in names):
                continue
            if i > 0 and rng.random() < 0.03:
                name = rng.choice(vocab.MANUFACTURER_NOTES) + name
            names.append(name)
            places.append(place)
            countries.append(country)
        if count > 1 and all(c == "대한민국" for c in countries) and rng.random() < 0.3:
            places = places[:1]
        return tuple(names), tuple(places), tuple(countries)

    def issue_number(self, rng: Random, family: str, day: date, ingredient: str) -> tuple[str, str]:
        """A number of `family` (or of its base family when no base exists yet) and the family used."""
        book = self.numbers
        if family in DERIVED_FAMILIES:
            number = book.derived(rng, family, day)
            if number is not None:
                return number, family
            family = _POOL_OF[family]
            if family == J4 and day < _J4_START:
                family = OLD5
        if family == OLD5:
            cls = self.herbal_class.get(ingredient) or self.ingredient_class.get(ingredient, 100)
            return book.old5(rng, day, cls, class_letter(cls, ingredient in self.herbal_class)), OLD5
        if family == J4:
            return book.j4(rng, day), J4
        if family == SU:
            return book.su(rng, day), SU
        if family == ND:
            return book.nd(rng, day), ND
        return book.dash(rng, day), DASH

    @staticmethod
    def can_renumber(rec: Record) -> bool:
        return rec.family in DERIVED_FAMILIES and rec.permit_no is not None

    def renumber(self, rng: Random, rec: Record) -> tuple[str, str] | None:
        """A derived number becomes a new master number carrying the record's permit date.

        Modelled on the one real case (`20130329-190-I-83-01(1)` → `20260922-190-I-769-04`):
        same class and letter, a fresh serial, the date of the latest registration action.
        """
        if rec.family not in DERIVED_FAMILIES or rec.permit_no is None:
            return None
        base_family = _POOL_OF[rec.family]
        if base_family == OLD5:
            match = _OLD5_RE.match(rec.permit_no)
            if match is None:
                return None
            return self.numbers.old5(rng, rec.permit_date, int(match["cls"]), match["letter"]), OLD5
        if base_family == J4:
            return self.numbers.j4(rng, rec.permit_date), J4
        if base_family == SU:
            return self.numbers.su(rng, rec.permit_date), SU
        return self.numbers.nd(rng, rec.permit_date), ND

    def pick_ingredient(self, rng: Random) -> str:
        if rng.random() < 0.005:
            return rng.choice(vocab.HERBALS)
        return rng.choices(self.ingredients, cum_weights=self._ingredient_cum)[0]

    def notice_for(self, rng: Random, family: str | None, ingredient: str) -> str:
        if ingredient in self.herbal_class:
            return "별표1의2" if rng.random() < 0.6 else "별표1"
        roll = rng.random()
        if roll < 0.002:
            return ""
        if family in (SU, SU_N, SU_A, ND, ND_N):
            return "신물질" if roll < 0.92 else ("별표1" if roll < 0.97 else "기타")
        return "별표1" if roll < 0.90 else ("기타" if roll < 0.985 else "신물질")

    def make_record(
        self, rng: Random, day: date, *, numbered: bool = True, family: str | None = None, early: bool | None = None
    ) -> Record:
        """A new registration dated `day` with a unique number and a unique fallback identity."""
        if early is None:
            early = day < _J4_START
        if family is None:
            families, cum = _FAMILY_CUM_EARLY if early else _FAMILY_CUM_LATE
            family = rng.choices(families, cum_weights=cum)[0]
        for _ in range(50):
            ingredient = self.pick_ingredient(rng)
            company = self.pick_company(rng)
            count = rng.choices((1, 2, 3, 4), (88, 9.5, 2, 0.5))[0]
            first_country = "대한민국" if family in (ND, ND_N) else None
            if family in (SU, SU_N, SU_A) and first_country is None:
                first_country = self.pick_country(rng)
                while first_country == "대한민국":
                    first_country = self.pick_country(rng)
            names, places, countries = self.manufacturer_parts(rng, company, first_country, count)
            names, places = add_texture(rng, names, places, day)
            rec = Record(
                rid=0,
                permit_no=None,
                ingredient=ingredient,
                applicant=company.name,
                bizrno=company.bizrno,
                names=names,
                places=places,
                countries=countries,
                mfr_countries=countries,
                permit_date=day,
                notice_code=self.notice_for(rng, family, ingredient),
                family=None,
            )
            if self.claim_key(rec):
                break
        else:
            raise RuntimeError("could not find a unique fallback identity; the pools are too small")
        if not numbered:
            return replace(rec, rid=self.next_rid())
        number, used_family = self.issue_number(rng, family, day, ingredient)
        return replace(rec, rid=self.next_rid(), permit_no=number, family=used_family)


def class_letter(cls: int, herbal: bool = False) -> str:
    """Class letters follow bands of the class number, as in the real old 5-part numbers."""
    if herbal:
        return "K"
    if cls <= 75:
        return "ABC"[(cls * 7) % 3]
    for upper, letter in ((88, "D"), (100, "E"), (114, "F"), (125, "G"), (142, "H")):
        if cls <= upper:
            return letter
    return "I"


def add_texture(
    rng: Random, names: tuple[str, ...], places: tuple[str, ...], day: date
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Sprinkle the measured noise: trailing/leading/double spaces, CR/LF, trailing commas."""
    n = list(names)
    p = list(places)
    if rng.random() < 0.016:
        n[-1] += " "
    elif rng.random() < 0.008:
        n[-1] += ","
    if rng.random() < 0.004 and " " in n[0]:
        n[0] = n[0].replace(" ", "  ", 1)
    if len(n) > 1 and rng.random() < 0.006:
        n[0] += " "
    if rng.random() < 0.05:
        p[-1] += "  " if rng.random() < 0.1 else " "
    if rng.random() < 0.003:
        p[0] = " " + p[0]
    if rng.random() < 0.025 and " " in p[0]:
        p[0] = p[0].replace(" ", "  ", 1)
    if rng.random() < 0.002 and "(" in n[0]:
        n[0] = n[0].replace("(", "（").replace(")", "）")
    roll = rng.random() * (1.0 if day.year < 2012 else 8.0)
    if roll < 0.03:
        if roll < 0.013:
            n[-1] += "\r\n"
        elif roll < 0.024:
            p[-1] += "\r\n"
        elif len(n) > 1:
            n[0] += "\r\n"
    return tuple(n), tuple(p)


def baseline_dates(size: int, start_date: date) -> list[date]:
    """Permit dates for `size` records, ascending, shaped like the real list's density."""
    last = start_date - timedelta(days=1)
    anchors = [(f, d) for f, d in _DATE_ANCHORS if d < last - timedelta(days=20)]
    if anchors and anchors[-1][0] > 0.9:
        scale = 0.9 / anchors[-1][0]
        anchors = [(f * scale, d) for f, d in anchors]
    anchors.append((1.0, last))
    fracs = [f for f, _ in anchors]
    dates: list[date] = []
    for i in range(size):
        u = i / max(1, size - 1)
        j = min(max(bisect.bisect_right(fracs, u) - 1, 0), len(anchors) - 2)
        (f0, d0), (f1, d1) = anchors[j], anchors[j + 1]
        t = 0.0 if f1 == f0 else (u - f0) / (f1 - f0)
        ordinal = d0.toordinal() + round(t * (d1.toordinal() - d0.toordinal()))
        dates.append(_weekday_or_before(date.fromordinal(ordinal)))
    for i in range(1, size):
        if dates[i] < dates[i - 1]:
            dates[i] = dates[i - 1]
    return dates


def generate_baseline(world: World, seed: int, size: int) -> list[Record]:
    """The registry as published on the start date, ordered like the real list."""
    rng = Random(f"dmf-baseline:{seed}")
    dates = baseline_dates(size, world.start_date)
    last_day = dates[-1] if dates else world.start_date
    null_zone = size - max(1, round(size * 0.012))
    records: list[Record] = []
    for i, day in enumerate(dates):
        numbered = not (i >= null_zone and rng.random() < 0.25)
        family = None
        if day == date(2005, 8, 31):
            family = OLD5
        elif day >= world.start_date - timedelta(days=45) and rng.random() < 0.05:
            family = DASH
        rec = world.make_record(rng, day, numbered=numbered, family=family)
        if day == last_day and rng.random() < 0.85:
            rec = replace(rec, notice_code="")
        records.append(rec)
    records.sort(key=Record.sort_key)
    for _ in range(max(1, size // 1500)):
        i = rng.randrange(1, max(2, size - 1))
        if records[i].permit_date != records[i - 1].permit_date and records[i].permit_no and records[i - 1].permit_no:
            records[i - 1], records[i] = records[i], records[i - 1]
    return records


class SyntheticRegistry:
    """The simulated MFDS registry, day by day, with the ground truth of every change.

    Day 1 is `start_date` and serves the baseline; day d serves the list as published on
    `start_date + (d - 1)` days. Days are computed once, in order, and cached, so any day can
    be asked for in any order and always comes out the same.
    """

    day_count: int | None = None

    def __init__(
        self,
        seed: int = DEFAULT_SEED,
        size: int = DEFAULT_SIZE,
        start_date: date = DEFAULT_START_DATE,
        cases: IdentityCases | None = None,
    ) -> None:
        self.seed = seed
        self.size = size
        self.start_date = start_date
        self._world = World(seed, start_date)
        self._evolver = Evolver(self._world, generate_baseline(self._world, seed, size), seed, start_date, cases)

    def date_of(self, day: int) -> date:
        """The as-of date of a day number (day 1 = start_date)."""
        _check_day(day)
        return self.start_date + timedelta(days=day - 1)

    def day_of(self, as_of: date) -> int:
        """The day number serving `as_of`; dates before start_date have no registry."""
        day = (as_of - self.start_date).days + 1
        if day < 1:
            raise ValueError(f"{as_of.isoformat()} is before the simulator's first day {self.start_date.isoformat()}.")
        return day

    def items_for(self, day: int) -> list[Item]:
        """The registry as published on `day`: fresh dicts with the 9 MFDS keys in order."""
        _check_day(day)
        return [rec.to_item() for rec in self._evolver.state(day)]

    def truth_for(self, day: int) -> list[dict[str, object]]:
        """Every change the simulator made on `day` (empty for day 1, the baseline)."""
        _check_day(day)
        return [dict(entry) for entry in self._evolver.truth(day)]

    def write_truth(self, path_dir: str | Path, days: int | Iterable[int]) -> list[Path]:
        """Write `truth_day_NN.jsonl` per day (1..days when `days` is an int); returns the paths."""
        out = Path(path_dir)
        out.mkdir(parents=True, exist_ok=True)
        day_list: Sequence[int] = range(1, days + 1) if isinstance(days, int) else list(days)
        paths: list[Path] = []
        for day in day_list:
            path = out / f"truth_day_{day:02d}.jsonl"
            with path.open("w", encoding="utf-8") as fh:
                for entry in self.truth_for(day):
                    fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
            paths.append(path)
        return paths


def _check_day(day: int) -> None:
    if day < 1:
        raise ValueError(f"Day {day} does not exist: day 1 is the first simulated day.")
