"""The engine boundary (macros/cross_db/_cross_db.yml): DuckDB's own spelling lives only in the
duckdb__ branches of macros/cross_db, every other piece of SQL (models, tests, the other macros,
the default__ branches) is what another engine can run, and every dispatched macro has a
default__ unless its YAML says why not. A `default__` that quietly became DuckDB's again, or a
model that calls a list lambda directly, fails here rather than on a PostgreSQL server."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[2]
CROSS_DB = PROJECT_DIR / "macros" / "cross_db"

# Functions and types only DuckDB has (or spells this way): each has a dispatched macro.
DUCKDB_ONLY = re.compile(
    r"\blambda\s+\w+\s*:|\blist_[a-z_]+\s*\(|\bmax_by\s*\(|\bstring_split\s*\(|\bhugeint\b|\bnfc_normalize\s*\("
    r"|\btry_strptime\s*\(|\bregexp_matches\s*\(|\bregexp_extract\s*\(|\bjaro_winkler_similarity\s*\("
    r"|\bunnest\s*\(\s*generate_series|\blist\s*\(|\bcontains\s*\(|\bunicode\s*\(|\bmedian\s*\("
)
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
SQL_COMMENT = re.compile(r"--[^\n]*")
MACRO = re.compile(r"\{% macro (\w+)\(.*?\{%-? endmacro %\}", re.S)
DISPATCH = re.compile(r"adapter\.dispatch\('(\w+)'")
# Dispatched macros without a default__, each for the reason its YAML entry gives.
NO_DEFAULT = {"jaro_winkler"}  # no SQL standard has one; PostgreSQL's is a function the hook creates


def _sql(text: str) -> str:
    """The SQL of a file or macro body as written, without Jinja and comments."""
    return SQL_COMMENT.sub("", JINJA.sub(" ", text))


@functools.cache
def _macros() -> dict[str, str]:
    return {
        m.group(1): m.group(0)
        for path in sorted(CROSS_DB.glob("*.sql"))
        for m in MACRO.finditer(path.read_text(encoding="utf-8"))
    }


def _body(macro: str) -> str:
    """A macro's body: what lies between its `{% macro %}` tag and its `{% endmacro %}`."""
    return macro[macro.index("%}") + 2 : macro.rindex("{%")]


def test_the_pattern_finds_duckdb_spelling() -> None:
    """The check below is only as good as its pattern: each DuckDB-only spelling the
    duckdb__ branches use is found."""
    duckdb_branches = {name: body for name, body in _macros().items() if name.startswith("duckdb__")}
    assert len(duckdb_branches) >= 30
    unfound = [name for name, body in duckdb_branches.items() if not DUCKDB_ONLY.search(_sql(_body(body)))]
    # These DuckDB branches differ from the default by a type name, a literal or a cast only.
    assert sorted(unfound) == [
        "duckdb__any_equal_value",
        "duckdb__divide",
        "duckdb__double_text",
        "duckdb__empty_list",
        "duckdb__json_object_of",
        "duckdb__regex_case_insensitive_prefix",
        "duckdb__regex_punctuation_symbol_space_class",
        "duckdb__regex_space",
        "duckdb__round_double",
        "duckdb__type_double",
    ]


@pytest.mark.parametrize(
    "name",
    sorted(name for name in _macros() if not name.startswith("duckdb__")),
)
def test_no_duckdb_spelling_outside_duckdb_branches(name: str) -> None:
    found = DUCKDB_ONLY.findall(_sql(_body(_macros()[name])))
    assert not found, f"{name} spells {found} as only DuckDB does: put it in a duckdb__ branch"


def test_models_and_macros_call_the_boundary() -> None:
    paths = [
        *(PROJECT_DIR / "models").rglob("*.sql"),
        *(PROJECT_DIR / "tests" / "dbt").rglob("*.sql"),
        *(path for path in (PROJECT_DIR / "macros").glob("*.sql")),
    ]
    assert len(paths) > 50
    offenders = {
        str(path.relative_to(PROJECT_DIR)): found
        for path in paths
        if (found := DUCKDB_ONLY.findall(_sql(path.read_text(encoding="utf-8"))))
    }
    assert not offenders, f"DuckDB-only SQL outside macros/cross_db duckdb__ branches: {offenders}"


def test_every_dispatched_macro_has_a_portable_default() -> None:
    macros = _macros()
    dispatched = {m.group(1) for body in macros.values() for m in DISPATCH.finditer(body)}
    assert len(dispatched) >= 30
    missing = sorted(name for name in dispatched if f"default__{name}" not in macros and name not in NO_DEFAULT)
    assert not missing, f"dispatched without a default__: {missing}"
    assert all(f"duckdb__{name}" in macros for name in NO_DEFAULT)
