"""The marts' tables for report and AI tests, created from the dbt contracts, not from DDL kept
by hand.

The marts people query declare every column's DuckDB type in their YAML (an enforced contract,
models/marts/_marts__models.yml); a fixture that writes its own `create table` drifts from them
(it had lost columns and widths already). Reading the YAML, not the manifest, keeps the fixtures
free of a dbt parse.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import jinja2
import yaml

PROJECT_DIR = Path(__file__).resolve().parents[2]
MART_YAML = (
    PROJECT_DIR / "models" / "marts" / "_marts__models.yml",
    PROJECT_DIR / "models" / "marts" / "reporting" / "_reporting__models.yml",
)


def mart_contracts() -> dict[str, list[tuple[str, str]]]:
    """(column, DuckDB type) in the mart's column order, for every model with an enforced contract.
    A type that differs by engine is written in Jinja on `target.type`, as dbt renders it."""
    contracts = {}
    for path in MART_YAML:
        for model in yaml.safe_load(path.read_text(encoding="utf-8"))["models"]:
            if model.get("config", {}).get("contract", {}).get("enforced"):
                contracts[model["name"]] = [
                    (c["name"], jinja2.Template(c["data_type"]).render(target={"type": "duckdb"}))
                    for c in model["columns"]
                ]
    return contracts


def create_mart_tables(con: duckdb.DuckDBPyConnection, names: list[str], schema: str = "marts") -> None:
    """Creates the named marts, empty, with exactly the columns and types of their contracts."""
    contracts = mart_contracts()
    missing = sorted(set(names) - set(contracts))
    if missing:
        raise KeyError(f"no enforced contract for {missing} in {[str(p) for p in MART_YAML]}")
    con.execute(f"create schema if not exists {schema}")
    for name in names:
        columns = ", ".join(f"{column} {data_type}" for column, data_type in contracts[name])
        con.execute(f"create table if not exists {schema}.{name} ({columns})")
