"""The raw layer stores each record once (row versions) plus each load's list (membership), and
gives back every load exactly as the API served it. Real loads over the simulator's replay of
the real MFDS sample, with the quirks a careless loader would "fix" added."""

from __future__ import annotations

import dataclasses
import json
import logging
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

from dmf_watch.core.errors import DmfError
from dmf_watch.pipelines.mfds import row_versions, run_row, run_row_resource
from dmf_watch.pipelines.mfds.helpers import fetch_registry
from dmf_watch.pipelines.mfds.load import load_day, mfds_pipeline, new_load_id
from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES, ITEM_SCHEMA, RAW_SCHEMA_CONTRACT, SOURCE_FIELDS
from dmf_watch.simulator.replay import ReplaySource
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY, START_DATE, pointed_at, small_registry
from support.scenarios import query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2 = date(2026, 10, 8), date(2026, 10, 9)
ITEM_ROW = f"select {', '.join(COLUMN_NAMES)} from mfds_raw.dmf_items where load_id = ? order by item_position"


def _quirky_items() -> list[dict[str, Any]]:
    """Records whose exact bytes matter: nulls, '' vs null, 'null', CR/LF, spaces, invisibles.
    Distinct registrations (each its own ingredient), so the models see six records."""
    base = {name: None for name in SOURCE_FIELDS}
    return [
        {**base, "INGR_KOR_NAME": "널만있는성분"},  # every other field null
        {**base, "INGR_KOR_NAME": "빈문자성분", "NOTICE_CODE": "", "BIZRNO": ""},  # '' is not null
        {**base, "INGR_KOR_NAME": "널글자성분", "NOTICE_CODE": "null"},  # nor is the word
        {
            **base,
            "INGR_KOR_NAME": "  앞뒤 공백  ",
            "MNFCTR_NAME": "Sandoz GmbH\r\n,Suanfarma\r\n",
            "MNFCTR_PLACE": "\r\nA-1,  401 & 403 \r\n",
            "ENTP_NAME": "   ",
            "BIZRNO": "\t123-45-67890",
        },
        {**base, "INGR_KOR_NAME": "줄바꿈\r\n성분 ", "DMF_PERMIT_DATE": "2026-10-01", "ENTP_NAME": "회사\n"},
        {
            **base,
            "INGR_KOR_NAME": "보이지\u200b않는\ufeff문자",
            "MANUF_COUNTRY_CODE_NM": "스페인,인도,스페인",
            "DMF_PERMIT_NO": "S12:x;",
            "NOTICE_CODE": "N;",
        },  # values that look like the hash's framing
    ]


def _near_twins() -> list[tuple[Any, ...]]:
    """Records one byte apart: null / '' / 'null', one trailing space less, CR/LF vs LF."""
    base = (None,) * len(SOURCE_FIELDS)
    return [
        base,
        ("",) + base[1:],
        ("null",) + base[1:],
        (" a",) + base[1:],
        (" a ",) + base[1:],
        ("a\r\n",) + base[1:],
        ("a\n",) + base[1:],
        ("S0:;",) + base[1:],
        (None, "S0:;") + base[2:],
    ]


def _write_days(folder: Path, days: dict[date, list[dict[str, Any]]]) -> ReplaySource:
    folder.mkdir(parents=True, exist_ok=True)
    for as_of, items in days.items():
        with (folder / f"{as_of.isoformat()}.jsonl").open("w", encoding="utf-8") as out:
            for item in items:
                out.write(json.dumps(item, ensure_ascii=False) + "\n")
    return ReplaySource(folder)


def _counts(settings) -> tuple[int, int]:
    return query(
        settings,
        "select (select count(*) from mfds_raw.dmf_item_versions), (select count(*) from mfds_raw.dmf_load_items)",
    )[0]


def test_every_load_is_reconstructed_byte_for_byte_and_a_day_with_3_changes_adds_3_versions(
    tmp_settings, start_simulator, fast_policy, real_sample, tmp_path
):
    day_1 = [*real_sample, *_quirky_items()]
    day_2 = [dict(item) for item in day_1]
    for index, value in ((0, "Changed Manufacturer\r\n"), (100, None), (366, " trailing ")):
        day_2[index]["MNFCTR_NAME"] = value  # 3 records changed, one of them to null
    assert sum(a != b for a, b in zip(day_1, day_2)) == 3
    replay = _write_days(tmp_path / "dumps", {DAY_1: day_1, DAY_2: day_2})
    server = start_simulator(replay, day=1)
    settings = pointed_at(tmp_settings, server)

    first = load_day(settings, DAY_1, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert first.fetch_status == "complete" and first.distinct_count == len(day_1) == 373
    assert _counts(settings) == (373, 373)
    server.set_day(2)
    second = load_day(settings, DAY_2, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert second.fetch_status == "complete"
    assert _counts(settings) == (373 + 3, 373 * 2)  # 3 new versions, not 373 rows again

    build_outcome = build(dataclasses.replace(settings, agy_binary="/nonexistent/agy"))
    assert build_outcome.success, build_outcome.failures
    for outcome, day, served in ((first, 1, day_1), (second, 2, day_2)):
        assert replay.items_for(day) == served  # what the simulator served, keys and all
        expected = [tuple(item[name] for name in SOURCE_FIELDS) for item in served]
        # the view a person reads, and the staging model every downstream model reads
        assert query(settings, ITEM_ROW, [outcome.load_id]) == expected
        raw_columns = (
            "permit_no_raw, ingredient_name_raw, applicant_raw, manufacturer_raw, manufacture_place_raw, "
            "countries_raw, permit_date_raw, applicant_bizrno_raw, notice_code_raw"
        )
        assert (
            query(
                settings,
                f"select {raw_columns} from staging.stg_mfds__items where load_id = ? order by item_position",
                [outcome.load_id],
            )
            == expected
        )
        assert query(
            settings,
            "select list(item_position order by item_position) = range(?) from mfds_raw.dmf_items where load_id = ?",
            [len(served), outcome.load_id],
        ) == [(True,)]


def test_the_sql_row_hash_is_the_loaders_row_hash():
    """The migration hashes in SQL; it must address each record exactly as the loader does."""
    records = [tuple(item[name] for name in SOURCE_FIELDS) for item in _quirky_items()] + _near_twins()
    with duckdb.connect() as con:
        con.execute(f"create table t ({', '.join(c + ' varchar' for c in COLUMN_NAMES)})")
        con.executemany(f"insert into t values ({', '.join('?' for _ in COLUMN_NAMES)})", records)
        in_sql = [h for (h,) in con.execute(f"select {row_versions.row_hash_sql()} from t order by rowid").fetchall()]
    assert in_sql == [row_versions.row_hash(values) for values in records]
    assert len(set(in_sql)) == len(records)  # null, '', 'null', one space or CR less: all different


def test_two_records_under_one_hash_refuse_the_load_and_store_nothing(
    tmp_settings, start_simulator, fast_policy, monkeypatch
):
    settings = pointed_at(tmp_settings, start_simulator())
    assert load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).ok
    stored = _counts(settings)
    ((taken,),) = query(settings, "select min(row_hash) from mfds_raw.dmf_item_versions")
    monkeypatch.setattr(row_versions, "row_hash", lambda values: taken)  # every record under a stored hash

    with pytest.raises(DmfError) as refused:
        load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy, force=True)

    message = str(refused.value)
    assert "was refused: two different MFDS records" in message and "share the row hash" in message
    assert "\n" not in message
    assert _counts(settings) == stored


OLD_ITEM_COLUMNS: dict[str, dict[str, Any]] = {  # mfds_raw.dmf_items as main wrote it until row versions
    "load_id": {"data_type": "text", "nullable": False},
    "as_of_date": {"data_type": "date", "nullable": False},
    "item_position": {"data_type": "bigint", "nullable": False},
    "page_no": {"data_type": "bigint", "nullable": False},
    "repeat_count": {"data_type": "bigint", "nullable": False},
    **{name.lower(): dict(spec) for name, spec in ITEM_SCHEMA.items()},
}


def _load_the_old_way(settings, as_of: date) -> None:
    """What the loader before row versions did: every row of the load appended to dmf_items."""
    result = fetch_registry(settings.api_base_url, SERVICE_KEY)
    load_id = new_load_id()

    @dlt.resource(
        name="dmf_items", write_disposition="append", columns=OLD_ITEM_COLUMNS, schema_contract=RAW_SCHEMA_CONTRACT
    )
    def dmf_items():
        yield [{"load_id": load_id, "as_of_date": as_of, **row} for row in result.rows]

    mfds_pipeline(settings).run(
        [dmf_items, run_row_resource(run_row(result, load_id, as_of))], loader_file_format="jsonl"
    )


def test_a_warehouse_with_the_per_load_items_table_is_migrated_once_and_keeps_every_load(
    tmp_settings, start_simulator, fast_policy, caplog
):
    caplog.set_level(logging.INFO)
    registry = small_registry(300)
    server = start_simulator(registry)
    settings = pointed_at(dataclasses.replace(tmp_settings, agy_binary="/nonexistent/agy"), server)
    days = [registry.date_of(day) for day in (1, 2, 3)]
    for day, as_of in enumerate(days[:2], start=1):
        server.set_day(day)
        _load_the_old_way(settings, as_of)
    columns = "load_id, as_of_date, item_position, page_no, repeat_count, " + ", ".join(COLUMN_NAMES)
    before = query(settings, f"select {columns} from mfds_raw.dmf_items order by load_id, item_position")
    assert len(before) >= 600 and query(
        settings, "select table_type from information_schema.tables where table_name = 'dmf_items'"
    ) == [("BASE TABLE",)]

    server.set_day(3)
    third = load_day(settings, days[2], service_key=SERVICE_KEY, retry_policy=fast_policy)

    assert third.fetch_status == "complete"
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Migrated mfds_raw.dmf_items")]
    assert len(lines) == 1 and f"({len(before):,} rows of 2 loads)" in lines[0]
    assert query(settings, "select table_type from information_schema.tables where table_name = 'dmf_items'") == [
        ("VIEW",)
    ]
    after = query(
        settings,
        f"select {columns} from mfds_raw.dmf_items where load_id <> ? order by load_id, item_position",
        [third.load_id],
    )
    assert after == before
    versions, memberships = _counts(settings)
    assert memberships == len(before) + third.distinct_count
    assert third.distinct_count <= versions < len(before)  # unchanged records stored once
    outcome = build(settings)
    assert outcome.success, outcome.failures
    assert query(settings, "select count(*) from staging.stg_mfds__load_runs where is_usable") == [(3,)]
    assert query(settings, "select count(*) from marts.dmf_loads where verdict = 'accepted'") == [(3,)]
    # a later load (a forced reload of the published day is refused now) does not migrate again
    again = load_day(settings, days[2] + timedelta(days=1), service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert (
        again.fetch_status == "complete"
        and len([r for r in caplog.records if r.getMessage().startswith("Migrated")]) == 1
    )
