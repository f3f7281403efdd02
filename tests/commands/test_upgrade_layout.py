"""The upgrade step's check, on marts made from the contracts (support/mart_contracts.py): current
marts are recorded once and then cost one query; a mart lacking a contract column is named in
one line; an unbuilt warehouse has nothing to upgrade. No dbt: the rebuild itself is covered by
test_upgrade_in_place.py, against a warehouse an earlier release built."""

from __future__ import annotations

import dataclasses

import duckdb
import pytest

from dmf_watch.commands.upgrade import LAYOUT_TABLE, layout_key, layout_problem, read_layout, upgrade_warehouse
from dmf_watch.core.config import load_settings
from support.mart_contracts import create_mart_tables, mart_contracts


@pytest.fixture
def settings(tmp_path):
    return load_settings({}).with_paths(
        duckdb_path=tmp_path / "dmf.duckdb", reports_dir=tmp_path / "reports", state_dir=tmp_path / "state"
    )


def build_marts(settings, *, without: tuple[str, str] | None = None) -> None:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("create schema if not exists mfds_raw")
        create_mart_tables(con, list(mart_contracts()))
        if without:
            con.execute(f"alter table marts.{without[0]} drop column {without[1]}")


def test_current_marts_are_recorded_once_and_then_take_the_fast_path(settings):
    build_marts(settings)
    assert read_layout(settings).stale is False and layout_problem(settings) is None

    assert upgrade_warehouse(settings) is None  # nothing to do, this release's layout recorded
    assert read_layout(settings).recorded
    assert upgrade_warehouse(settings) is None
    with duckdb.connect(str(settings.duckdb_path)) as con:
        assert con.execute(f"select layout from mfds_raw.{LAYOUT_TABLE}").fetchall() == [(layout_key(settings),)]


def test_marts_lacking_a_contract_column_are_named_in_one_line(settings):
    build_marts(settings, without=("dmf_loads", "attempt_order"))

    layout = read_layout(settings)
    assert layout.stale and layout.differences == {"dmf_loads": "lacks attempt_order"}
    problem = layout_problem(settings)
    assert problem == (
        "the marts were built by an earlier release of DMF Watch (dmf_loads lacks attempt_order); "
        "the next `dmf run` rebuilds them first, or run `dmf build --full-refresh` now."
    )
    assert "\n" not in problem


def test_a_layout_recorded_by_another_release_is_checked_again(settings, tmp_path):
    build_marts(settings, without=("dmf_events", "rationale_ko"))
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute(f"create table mfds_raw.{LAYOUT_TABLE} (layout varchar, recorded_at timestamp with time zone)")
        con.execute(f"insert into mfds_raw.{LAYOUT_TABLE} values ('an-earlier-key', now())")
    assert read_layout(settings).differences == {"dmf_events": "lacks rationale_ko"}
    # a checkout whose contracts differ has another key
    other = tmp_path / "other"
    (other / "models" / "marts").mkdir(parents=True)
    (other / "models" / "marts" / "_marts__models.yml").write_text("models: []\n", encoding="utf-8")
    assert layout_key(dataclasses.replace(settings, project_dir=other)) != layout_key(settings)


def test_an_unbuilt_warehouse_has_nothing_to_upgrade(settings):
    assert layout_problem(settings) is None  # no file at all
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("create schema mfds_raw")
    assert read_layout(settings).built is False
    assert upgrade_warehouse(settings) is None
    with duckdb.connect(str(settings.duckdb_path)) as con:
        assert con.execute("select count(*) from information_schema.tables").fetchone()[0] == 0
