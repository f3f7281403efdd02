"""A dbt model's SQL run by DuckDB directly, for the fixtures that create contract marts by hand:
they then derive what dbt derives (which load decides a day, the rpt_ models) with the same SQL."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import duckdb

PROJECT_DIR = Path(__file__).resolve().parents[2]
MARTS_DIR = PROJECT_DIR / "models" / "marts"
REF = re.compile(r"\{\{\s*ref\(\s*'([a-z0-9_]+)'\s*\)\s*\}\}")


def plain_sql(sql: str, schema: str = "marts") -> str:
    """ref() → schema.table, config() and Jinja comments gone (models that use no other Jinja)."""
    body = REF.sub(lambda m: f"{schema}.{m.group(1)}", sql)
    body = re.sub(r"\{#.*?#\}", "", body, flags=re.S)
    return re.sub(r"\{\{\s*config\(.*?\)\s*\}\}", "", body, flags=re.S)


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
