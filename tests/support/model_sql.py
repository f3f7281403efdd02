"""A dbt model's SQL run by DuckDB directly, for the fixtures that create contract marts by hand:
they then derive what dbt derives (which load decides a day, the rpt_ models) with the same SQL.

The models' Jinja is rendered as dbt renders it for the duckdb target: ref() → schema.table,
config() gone, and the project's macros (macros/cross_db among them) called through
adapter.dispatch to their duckdb__/default__ implementations. No dbt parse: the fast tier stays
fast."""

from __future__ import annotations

import csv
import functools
import re
from pathlib import Path
from typing import Any

import duckdb
import jinja2

PROJECT_DIR = Path(__file__).resolve().parents[2]
MARTS_DIR = PROJECT_DIR / "models" / "marts"
REF = re.compile(r"\{\{\s*ref\(\s*'([a-z0-9_]+)'\s*\)\s*\}\}")  # a model's dependencies


class _Adapter:
    """dbt's adapter.dispatch on the duckdb target: duckdb__name, else default__name."""

    def __init__(self, macros: Any) -> None:
        self._macros = macros

    def dispatch(self, name: str, macro_namespace: str | None = None) -> Any:
        for candidate in (f"duckdb__{name}", f"default__{name}"):
            if hasattr(self._macros, candidate):
                return getattr(self._macros, candidate)
        raise KeyError(f"no duckdb__ or default__ implementation of macro {name}")


@functools.cache
def _environment() -> tuple[jinja2.Environment, Any]:
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    adapter = _Adapter(None)  # the macros it dispatches to are made just below, with it in scope
    env.globals.update(
        {"return": lambda value: value, "target": {"type": "duckdb", "schema": "main"}, "adapter": adapter}
    )
    texts = [path.read_text(encoding="utf-8") for path in sorted((PROJECT_DIR / "macros").rglob("*.sql"))]
    macros = env.from_string("\n".join(texts)).module
    adapter._macros = macros
    env.globals.update({name: getattr(macros, name) for name in dir(macros) if not name.startswith("_")})
    return env, macros


def plain_sql(sql: str, schema: str = "marts") -> str:
    """The model's SQL as dbt renders it for DuckDB, refs to `schema`."""
    env, _ = _environment()
    return env.from_string(sql).render(ref=lambda name: f"{schema}.{name}", config=lambda **_: "")


def build_model(con: duckdb.DuckDBPyConnection, path: Path, schema: str = "marts") -> None:
    """(Re)build one model as a table from its dbt SQL file."""
    con.execute(
        f"create or replace table {schema}.{path.stem} as {plain_sql(path.read_text(encoding='utf-8'), schema)}"
    )


def build_day_decisions(con: duckdb.DuckDBPyConnection, schema: str = "marts") -> None:
    """marts.dmf_day_decisions from the fixture's dmf_loads, by the mart's own SQL."""
    build_model(con, MARTS_DIR / "dmf_day_decisions.sql", schema)


def seed_rows(name: str) -> list[dict[str, str]]:
    """The rows of a committed seed, as an analyst wrote them (what tests compare outputs to)."""
    with (PROJECT_DIR / "seeds" / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))
