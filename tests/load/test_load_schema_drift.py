"""The loader holds every load against the declared item schema: a renamed or grown item is an
incomplete load naming the fields, never a complete load of all-null records; the raw tables
are frozen to their declared columns, and a breach is a recorded load, not a traceback."""

from __future__ import annotations

import json

import duckdb
import pytest

import dmf_watch.pipelines.mfds as mfds
from dmf_watch.pipelines.mfds import helpers
from dmf_watch.pipelines.mfds.helpers import parse_page
from dmf_watch.pipelines.mfds.item_schema import KeyAudit
from dmf_watch.pipelines.mfds.load import load_day, mfds_pipeline
from dmf_watch.pipelines.mfds.settings import ITEM_SCHEMA, SOURCE_FIELDS
from dmf_watch.simulator.server import StaticSource, camel_case
from dmf_watch.transform.build import build
from support.mfds import SERVICE_KEY, START_DATE, pointed_at

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier


def audit_of(items: list[dict]) -> KeyAudit:
    audit = KeyAudit()
    for item in items:
        audit.observe(item)
    return audit


def runs(settings) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute(
            "select fetch_status, reason, schema_drift from mfds_raw.load_runs order by finished_at"
        ).fetchall()


# -- the verdict, unit by unit -------------------------------------------------------------------
def test_every_real_record_fits_the_declared_schema(real_sample):
    assert set(ITEM_SCHEMA) == set(SOURCE_FIELDS)
    assert all({key.upper() for key in item} == set(ITEM_SCHEMA) for item in real_sample)
    assert audit_of(real_sample).drift() is None


def test_camelcase_keys_are_drift_naming_every_missing_and_unknown_field(real_sample):
    renamed = [{camel_case(k): v for k, v in item.items()} for item in real_sample]
    drift = audit_of(renamed).drift()
    assert drift is not None
    # BIZRNO has no underscore: `bizrno` still matches it case-insensitively, as it should.
    assert drift.missing == [name for name in SOURCE_FIELDS if "_" in name]
    assert set(drift.unknown) == {camel_case(name) for name in SOURCE_FIELDS if "_" in name}
    assert drift.samples == renamed[:3]  # exactly as received
    reason = drift.reason()
    assert reason.startswith("the API's item schema changed: missing DMF_PERMIT_NO, INGR_KOR_NAME")
    assert "unknown " in reason and "dmfPermitNo" in reason and "\n" not in reason


def test_lower_case_keys_still_match_case_insensitively(real_sample):
    lowered = [{k.lower(): v for k, v in item.items()} for item in real_sample]
    assert audit_of(lowered).drift() is None
    page = parse_page(
        json.dumps(
            {"response": {"header": {"resultCode": "00"}, "body": {"totalCount": 1, "items": {"item": lowered[:1]}}}}
        ).encode(),
        1,
    )
    assert page.items[0]["DMF_PERMIT_NO"] == real_sample[0]["DMF_PERMIT_NO"]


def test_a_key_missing_from_some_items_is_drift_not_null(real_sample):
    # 15% of the items without MNFCTR_NAME read as "lost a manufacturer": never a null
    items = [dict(item) for item in real_sample]
    for item in items[::7]:
        del item["MNFCTR_NAME"]
    drift = audit_of(items).drift()
    assert drift is not None and drift.missing == []
    assert drift.shapes == [{"field": "MNFCTR_NAME", "shape": "key missing", "items": 53}]
    assert "MNFCTR_NAME key missing in 53 of 367 items" in drift.reason()


@pytest.mark.parametrize(
    ("value", "shape"),
    [
        (["헝가리", "체코공화국"], "sent as a JSON array"),
        ({"name": "헝가리"}, "sent as a JSON object"),
        (3, "sent as a number"),
        (True, "sent as a boolean"),
    ],
)
def test_a_value_that_is_not_text_is_drift(real_sample, value, shape):
    items = [dict(item) for item in real_sample]
    items[3]["MANUF_COUNTRY_CODE_NM"] = value
    drift = audit_of(items).drift()
    assert drift is not None and drift.shapes == [{"field": "MANUF_COUNTRY_CODE_NM", "shape": shape, "items": 1}]
    assert drift.samples == [items[3]]


def test_a_date_in_another_form_is_drift_named_by_its_pattern(real_sample):
    items = [dict(item) for item in real_sample]
    for item in items[:18]:
        item["DMF_PERMIT_DATE"] += " 00:00:00.0"
    items[20]["DMF_PERMIT_DATE"] = "2026-02-30"
    items[21]["DMF_PERMIT_DATE"] = None  # any field may be empty
    items[22]["DMF_PERMIT_DATE"] = ""
    items[23]["DMF_PERMIT_DATE"] = " " + items[23]["DMF_PERMIT_DATE"]  # stored, it would come back trimmed
    drift = audit_of(items).drift()
    assert drift is not None and drift.shapes == [
        {"field": "DMF_PERMIT_DATE", "shape": "as 9999-99-99 99:99:99.9", "items": 18},
        {"field": "DMF_PERMIT_DATE", "shape": "not a calendar date", "items": 1},
        {"field": "DMF_PERMIT_DATE", "shape": "with spaces around it", "items": 1},
    ]
    assert "2026" not in drift.summary()  # the pattern, never a value


def test_a_record_with_every_field_empty_is_no_drift(real_sample):
    """An empty record fits the schema: the models quarantine it (int_load_items_quarantined), so
    one such record no longer rejects every morning while MFDS keeps it in the list."""
    items = [dict(item) for item in real_sample]
    items.append(dict.fromkeys(real_sample[0]))
    items.append({key: " " for key in real_sample[0]})
    assert audit_of(items).drift() is None


def test_a_field_absent_from_every_item_is_missing(real_sample):
    items = [{k: v for k, v in item.items() if k != "BIZRNO"} for item in real_sample]
    drift = audit_of(items).drift()
    assert drift is not None and drift.missing == ["BIZRNO"] and drift.unknown == []


def test_one_extra_key_in_one_item_is_drift_naming_it(real_sample):
    items = [dict(item) for item in real_sample]
    items[200]["NEW_FIELD"] = "x"
    drift = audit_of(items).drift()
    assert drift is not None and drift.missing == [] and drift.unknown == ["NEW_FIELD"]
    assert drift.samples == [items[200]]
    assert "unknown NEW_FIELD" in drift.reason()


def test_a_second_spelling_of_a_field_is_an_unknown_key(real_sample):
    item = dict(real_sample[0], dmf_permit_no="other")
    drift = audit_of([item]).drift()
    assert drift is not None and drift.unknown == ["dmf_permit_no"]


def test_hostile_key_names_are_printable_and_clipped_in_the_reason(real_sample):
    item = dict(real_sample[0], **{"evil\nkey\u202e" + "x" * 200: "v"})
    reason = audit_of([item]).drift().reason()
    assert "\n" not in reason and "\u202e" not in reason and "x" * 60 not in reason


def test_pages_merge_their_audits_so_a_late_page_counts(real_sample):
    first = audit_of(real_sample[:100])
    first.merge(audit_of([dict(real_sample[100], extra="1")]))
    assert first.drift().unknown == ["extra"]


def test_an_empty_list_has_no_drift():
    assert KeyAudit().drift() is None


# -- through the simulator, load_day and DuckDB --------------------------------------------------
@pytest.mark.fault("the API renames its fields (camelCase keys)")
def test_camelcase_keys_make_the_load_incomplete_and_record_the_drift(
    tmp_settings, start_simulator, fast_policy, real_sample
):
    server = start_simulator(StaticSource(real_sample, START_DATE), faults="camelcase_keys")
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "incomplete" and not outcome.ok
    assert "item schema changed" in outcome.reason and "DMF_PERMIT_NO" in outcome.reason
    assert server.requests == 1  # drift is not retried: another pass would say the same
    assert f"{len(real_sample)} records received" in outcome.summary()
    [(status, reason, stored)] = runs(tmp_settings)
    assert status == "incomplete" and reason == outcome.reason
    record = json.loads(stored)
    assert record["missing"] == [name for name in SOURCE_FIELDS if name != "BIZRNO"]
    assert "dmfPermitNo" in record["unknown"] and "ingrKorName" in record["unknown"]
    assert record["samples"] == [{camel_case(k): v for k, v in item.items()} for item in real_sample[:3]]


@pytest.mark.fault("the API grows an unknown item field")
def test_one_extra_key_makes_the_load_incomplete_naming_it(tmp_settings, start_simulator, fast_policy, real_sample):
    server = start_simulator(StaticSource(real_sample, START_DATE), faults="extra_key:remarkText")
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "incomplete"
    assert "unknown remarkText" in outcome.reason and "missing" not in outcome.reason
    record = json.loads(runs(tmp_settings)[0][2])
    assert record["missing"] == [] and record["unknown"] == ["remarkText"]
    assert record["samples"][0]["remarkText"] == "added by the API"


def test_xml_answers_are_audited_too(tmp_settings, start_simulator, fast_policy, real_sample, monkeypatch):
    server = start_simulator(StaticSource(real_sample, START_DATE), faults="extra_key:remark")
    monkeypatch.setattr(helpers.MfdsClient, "page", _xml_page)
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "incomplete" and "unknown remark" in outcome.reason


def _xml_page(self, page_no, rows):
    """The same request without type=json: the simulator answers XML."""
    self.requests += 1
    response = self._http.get(
        self.url, params={"serviceKey": self._key, "pageNo": str(page_no), "numOfRows": str(rows)}
    )
    self.outcomes["00"] += 1
    return parse_page(response.content, page_no)


def test_a_normal_load_after_drift_is_complete_with_no_drift_record(
    tmp_settings, start_simulator, fast_policy, real_sample
):
    server = start_simulator(StaticSource(real_sample, START_DATE), faults="camelcase_keys")
    settings = pointed_at(tmp_settings, server)
    load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    server.set_faults(None)
    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete" and outcome.schema_drift is None
    assert [(s, d is None) for s, _, d in runs(tmp_settings)] == [("incomplete", False), ("complete", True)]


# -- the frozen raw schema -----------------------------------------------------------------------
def test_a_warehouse_from_before_schema_drift_gets_the_column_and_keeps_loading(
    tmp_settings, start_simulator, fast_policy, real_sample, monkeypatch
):
    server = start_simulator(StaticSource(real_sample, START_DATE))
    settings = pointed_at(tmp_settings, server)
    old_columns = {k: v for k, v in mfds.RUN_COLUMNS.items() if k != "schema_drift"}
    old_row = mfds.run_row
    with monkeypatch.context() as old_code:  # the loader as it was before the column existed
        old_code.setattr(mfds, "RUN_COLUMNS", old_columns)
        old_code.setattr(mfds, "run_row", lambda *a: {k: v for k, v in old_row(*a).items() if k != "schema_drift"})
        assert load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).ok
    with duckdb.connect(str(settings.duckdb_path)) as con:
        before = {
            c
            for (c,) in con.execute(
                "select column_name from information_schema.columns where table_name = 'load_runs'"
            ).fetchall()
        }
    assert "schema_drift" not in before

    server.set_faults("camelcase_keys")
    outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy, force=True)
    assert outcome.fetch_status == "incomplete"
    stored = runs(settings)
    assert [s for s, _, _ in stored] == ["complete", "incomplete"]
    assert stored[0][2] is None and "DMF_PERMIT_NO" in json.loads(stored[1][2])["missing"]


@pytest.mark.fault("the API grows an unknown item field")
def test_a_column_the_contract_refuses_is_a_rejected_load_naming_it(
    tmp_settings, start_simulator, fast_policy, real_sample, monkeypatch
):
    server = start_simulator(StaticSource(real_sample, START_DATE))
    settings = pointed_at(tmp_settings, server)
    assert load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).ok
    real_distinct_rows = helpers.distinct_rows
    with monkeypatch.context() as broken:  # a code path that yields a column nobody declared
        broken.setattr(
            helpers,
            "distinct_rows",
            lambda received: [dict(row, surprise_col="x") for row in real_distinct_rows(received)],
        )
        outcome = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy, force=True)
    assert outcome.fetch_status == "incomplete"
    assert "mfds_raw.dmf_load_items refused the undeclared column surprise_col" in outcome.reason
    with duckdb.connect(str(settings.duckdb_path)) as con:
        columns = {
            c
            for (c,) in con.execute(
                "select column_name from information_schema.columns where table_name like 'dmf_%'"
            ).fetchall()
        }
        counts = con.execute("select load_id, count(*) from mfds_raw.dmf_items group by load_id").fetchall()
    assert "surprise_col" not in columns
    assert [n for _, n in counts] == [len(real_sample)]  # nothing of the refused load was stored
    assert [s for s, _, _ in runs(settings)] == ["complete", "incomplete"]
    pipeline = mfds_pipeline(settings)
    assert not pipeline.has_pending_data  # the refused package was dropped, not left for the next run
    again = load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy, force=True)
    assert again.fetch_status == "complete"


def test_both_raw_resources_carry_the_frozen_contract():
    source = mfds.mfds_source(START_DATE, "L1", mfds_service_key="k", mfds_api_base_url="http://127.0.0.1:9")
    for resource in source.resources.values():
        assert resource.compute_table_schema()["schema_contract"] == {"tables": "evolve", "columns": "freeze"}


def test_dbt_builds_a_warehouse_whose_load_runs_predate_schema_drift(
    tmp_settings, start_simulator, fast_policy, real_sample, monkeypatch
):
    server = start_simulator(StaticSource(real_sample, START_DATE))
    settings = pointed_at(tmp_settings, server)
    old_columns = {k: v for k, v in mfds.RUN_COLUMNS.items() if k != "schema_drift"}
    old_row = mfds.run_row
    monkeypatch.setattr(mfds, "RUN_COLUMNS", old_columns)
    monkeypatch.setattr(mfds, "run_row", lambda *a: {k: v for k, v in old_row(*a).items() if k != "schema_drift"})
    assert load_day(settings, START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy).ok

    built = build(settings)  # no new load yet: staging must read the column as null

    assert built.success, built.failures
    with duckdb.connect(str(settings.duckdb_path)) as con:
        assert con.execute("select verdict, schema_drift from marts.dmf_loads").fetchall() == [("accepted", None)]
