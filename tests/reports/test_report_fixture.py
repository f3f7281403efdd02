"""The fixture warehouse the report tests read has every contract column, and the reporting
models build from their dbt SQL."""

from __future__ import annotations

import duckdb

from support.report_warehouse import REPORTING_MODELS, build_warehouse, contract_gaps


def test_fixture_warehouse_has_every_contract_column(tmp_path):
    build_warehouse(tmp_path / "w.duckdb")
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert contract_gaps(con) == {}


def test_reporting_models_build_from_their_dbt_sql(tmp_path):
    build_warehouse(tmp_path / "w.duckdb")
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        names = {
            r[0]
            for r in con.execute(
                "select table_name from information_schema.tables where table_name like 'rpt_%'"
            ).fetchall()
        }
    assert names == {p.stem for p in REPORTING_MODELS.glob("rpt_*.sql")}
