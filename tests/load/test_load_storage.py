"""What `load_day` leaves in DuckDB and under the state dir, and how it treats configuration."""

from __future__ import annotations

import duckdb
import pytest

from dmf_watch.core.errors import ConfigError
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES
from dmf_watch.simulator.server import StaticSource
from support.mfds import SERVICE_KEY, START_DATE, pointed_at

RUN_COLUMNS = [
    "load_id",
    "as_of_date",
    "started_at",
    "finished_at",
    "duration_s",
    "fetch_status",
    "reason",
    "total_count",
    "fetched_count",
    "distinct_count",
    "duplicate_count",
    "pages",
    "requests",
    "retries",
    "attempts",
    "result_codes",
    "source_url",
    "schema_drift",
    "attempt_seq",
]
ITEM_COLUMNS = ["load_id", "as_of_date", "item_position", "page_no", "repeat_count", *COLUMN_NAMES, "row_hash"]
VERSION_COLUMNS = ["row_hash", *COLUMN_NAMES]
MEMBERSHIP_COLUMNS = ["load_id", "as_of_date", "item_position", "page_no", "repeat_count", "row_hash"]


def _columns(settings, table: str) -> dict[str, str]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return dict(
            con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'mfds_raw' and table_name = ? order by ordinal_position",
                [table],
            ).fetchall()
        )


def test_failed_first_load_still_creates_every_column(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="xml_code:30")
    load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    items = _columns(tmp_settings, "dmf_items")  # the view over the two tables below
    runs = _columns(tmp_settings, "load_runs")
    assert [c for c in items if not c.startswith("_dlt")] == ITEM_COLUMNS
    assert all(items[c] == "VARCHAR" for c in COLUMN_NAMES)
    versions, memberships = _columns(tmp_settings, "dmf_item_versions"), _columns(tmp_settings, "dmf_load_items")
    assert [c for c in versions if not c.startswith("_dlt")] == VERSION_COLUMNS
    assert [c for c in memberships if not c.startswith("_dlt")] == MEMBERSHIP_COLUMNS
    assert versions["row_hash"] == memberships["row_hash"] == "BIGINT"
    assert [c for c in runs if not c.startswith("_dlt")] == RUN_COLUMNS
    assert runs["started_at"] == "TIMESTAMP WITH TIME ZONE" and runs["as_of_date"] == "DATE"
    assert runs["duration_s"] == "DOUBLE"
    # Later loads, with or without items, go on appending to the same tables.
    load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    server.set_faults(None)
    done = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert done.fetch_status == "complete"
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        assert con.execute("select count(*) from mfds_raw.dmf_items").fetchone()[0] == 1200
        assert con.execute("select list(fetch_status order by started_at) from mfds_raw.load_runs").fetchone()[0] == [
            "failed",
            "failed",
            "complete",
        ]


def test_all_null_fields_keep_their_text_columns(tmp_settings, start_simulator, fast_policy):
    nulls = [
        {
            "DMF_PERMIT_NO": None,
            "INGR_KOR_NAME": f"성분{i}",
            "ENTP_NAME": None,
            "MNFCTR_NAME": None,
            "MNFCTR_PLACE": None,
            "MANUF_COUNTRY_CODE_NM": None,
            "DMF_PERMIT_DATE": None,
            "BIZRNO": None,
            "NOTICE_CODE": None,
        }
        for i in range(3)
    ]
    server = start_simulator(StaticSource(nulls))
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete"
    items = _columns(tmp_settings, "dmf_items")
    assert all(items[c] == "VARCHAR" for c in COLUMN_NAMES)
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        assert con.execute("select count(*) from mfds_raw.dmf_items where dmf_permit_no is null").fetchone()[0] == 3


def test_load_runs_row_matches_the_outcome(sim_settings, fast_policy):
    outcome = load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    with duckdb.connect(str(sim_settings.duckdb_path)) as con:
        row = con.execute(
            "select load_id, as_of_date, fetch_status, total_count, distinct_count, requests, source_url, "
            "finished_at >= started_at from mfds_raw.load_runs"
        ).fetchone()
        positions = con.execute(
            "select min(item_position), max(item_position), count(distinct item_position), "
            "min(page_no), max(page_no), max(repeat_count), count(distinct load_id) from mfds_raw.dmf_items"
        ).fetchone()
    assert row[:6] == (outcome.load_id, START_DATE, "complete", 1200, 1200, 6)  # two passes of 3 pages
    assert row[6].endswith("/1471000/MdcDmfInfoService01/getMdcDmfList01") and "?" not in row[6]
    assert row[7] is True
    assert positions == (0, 1199, 1200, 1, 3, 1, 1)


def test_second_load_of_a_completed_date_is_skipped_without_calling_the_api(sim_settings, simulator, fast_policy):
    first = load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    requests_before = simulator.requests
    again = load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert again.fetch_status == "skipped"
    assert again.load_id == first.load_id
    assert "--force" in again.summary()
    assert simulator.requests == requests_before


def test_force_loads_a_completed_date_again(sim_settings, simulator, fast_policy):
    load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    forced = load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, force=True, retry_policy=fast_policy)
    assert forced.fetch_status == "complete"
    with duckdb.connect(str(sim_settings.duckdb_path)) as con:
        assert con.execute("select count(*) from mfds_raw.load_runs").fetchone()[0] == 2
        assert con.execute("select count(*) from mfds_raw.dmf_items").fetchone()[0] == 2400
        # the same list again adds its membership only: every record is stored once
        assert con.execute("select count(*) from mfds_raw.dmf_item_versions").fetchone()[0] == 1200


def test_failed_load_does_not_block_the_next_attempt_that_day(tmp_settings, start_simulator, fast_policy):
    server = start_simulator(faults="truncate_last_page")
    settings = pointed_at(tmp_settings, server)
    assert (
        load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).fetch_status == "incomplete"
    )
    server.set_faults(None)
    assert load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).fetch_status == "complete"


def test_missing_service_key_raises_one_sentence_config_error(tmp_settings, monkeypatch):
    monkeypatch.delenv("MFDS_SERVICE_KEY", raising=False)
    monkeypatch.chdir(tmp_settings.project_dir.parent)  # no .dlt/secrets.toml here
    with pytest.raises(ConfigError) as caught:
        load_day(tmp_settings, START_DATE)
    message = str(caught.value)
    assert "MFDS_SERVICE_KEY" in message and "\n" not in message
    with pytest.raises(ConfigError):
        load_day(tmp_settings, START_DATE, service_key="  ")


def test_key_from_environment_reaches_the_api_through_dlt_secrets(sim_settings, monkeypatch, fast_policy):
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
    outcome = load_day(sim_settings, START_DATE, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason


def test_url_encoded_key_is_decoded_exactly_once(tmp_settings, start_simulator, fast_policy):
    from urllib.parse import quote

    server = start_simulator()
    encoded = quote(SERVICE_KEY, safe="")  # as data.go.kr issues it: SECRET-KEY-...%2BZq%2FWx%3D%3D
    assert encoded != SERVICE_KEY
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=encoded, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason


def test_dlt_working_dir_lives_under_the_state_dir(sim_settings, fast_policy):
    load_day(sim_settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    pipeline_dir = sim_settings.state_dir / "dlt" / "mfds_dmf"
    assert (pipeline_dir / "state.json").is_file()
    assert sim_settings.duckdb_path.is_file()


def test_loads_of_several_days_append(tmp_settings, start_simulator, fast_policy):
    from datetime import timedelta

    server = start_simulator()
    settings = pointed_at(tmp_settings, server)
    for offset in range(3):
        server.set_day(START_DATE + timedelta(days=offset))
        outcome = load_day(
            settings, START_DATE + timedelta(days=offset), service_key=SERVICE_KEY, retry_policy=fast_policy
        )
        assert outcome.fetch_status == "complete"
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        per_day = con.execute("select as_of_date, count(*) from mfds_raw.dmf_items group by 1 order by 1").fetchall()
    assert [day for day, _ in per_day] == [START_DATE + timedelta(days=d) for d in range(3)]
