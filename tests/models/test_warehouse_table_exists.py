"""settings.warehouse.table_exists: the one check every step makes before reading a table an
earlier step may not have created yet. A real DuckDB file."""

from __future__ import annotations

import duckdb

from dmf_watch.core.warehouse import table_exists


def test_table_exists_is_true_only_when_every_named_table_or_view_is_in_that_schema(tmp_path):
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        con.execute("create schema marts")
        con.execute("create table marts.dmf_loads (load_id varchar)")
        con.execute("create view marts.dmf_events as select 1 as x")
        con.execute("create table main.dmf_signals (x int)")
        assert table_exists(con, "marts", "dmf_loads")
        assert table_exists(con, "marts", "dmf_loads", "dmf_events")
        assert not table_exists(con, "marts", "dmf_loads", "dmf_signals")  # in main, not marts
        assert not table_exists(con, "mfds_raw", "dmf_loads")
        assert not table_exists(con, "marts", "DMF_LOADS")
