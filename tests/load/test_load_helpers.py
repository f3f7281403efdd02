"""The small pieces of the MFDS client: key decoding, answer parsing, code wording, redaction."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from dlt.pipeline.exceptions import PipelineStepFailed

from dmf_watch.core.errors import ConfigError
from dmf_watch.core.interrupts import RunInterrupted
from dmf_watch.pipelines.mfds.helpers import ApiError, decode_service_key, describe_code, parse_page, redact
from dmf_watch.pipelines.mfds.load import LoadOutcome, load_day, new_load_id, stop_if_interrupted
from dmf_watch.pipelines.mfds.settings import RESULT_CODES, RetryPolicy
from dmf_watch.simulator.server import error_xml
from support.mfds import START_DATE

ITEM = {
    "DMF_PERMIT_NO": None,
    "INGR_KOR_NAME": "성분 ",
    "ENTP_NAME": "A\r\n",
    "MNFCTR_NAME": "",
    "MNFCTR_PLACE": " x  ",
    "MANUF_COUNTRY_CODE_NM": "스페인,스페인",
    "DMF_PERMIT_DATE": "2026-10-07",
    "BIZRNO": "1208128636",
    "NOTICE_CODE": "",
}


def _body(items, total=1):
    return json.dumps(
        {
            "response": {
                "header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE."},
                "body": {"pageNo": 1, "numOfRows": 500, "totalCount": total, "items": items},
            }
        },
        ensure_ascii=False,
    ).encode()


@pytest.mark.parametrize("items", [{"item": [ITEM]}, {"item": ITEM}, [ITEM]])
def test_every_items_shape_gives_the_same_item_untouched(items):
    page = parse_page(_body(items), 1)
    assert page.items == [ITEM] and page.total_count == 1


@pytest.mark.parametrize("items", ["", None, [], {"item": []}, {"item": ""}, {}])
def test_empty_items_shapes_give_no_items(items):
    assert parse_page(_body(items, total=0), 1).items == []


def test_xml_error_body_names_the_code_in_words():
    with pytest.raises(ApiError) as caught:
        parse_page(error_xml("30"), 1)
    assert caught.value.code == "30" and not caught.value.retryable
    assert caught.value.reason.startswith("the MFDS API does not know this service key (code 30)")


def test_json_result_code_other_than_00_is_an_error():
    body = json.dumps({"response": {"header": {"resultCode": "22", "resultMsg": "LIMITED"}}}).encode()
    with pytest.raises(ApiError, match=r"daily request limit .* \(code 22\)"):
        parse_page(body, 1)


def test_every_portal_code_has_words():
    for code in ("00", "01", "02", "03", "04", "05", "10", "11", "12", "20", "21", "22", "30", "31", "32", "99"):
        assert code in RESULT_CODES
        assert describe_code(code).endswith(f"(code {code})")


def test_encoded_key_is_decoded_once_and_a_decoded_key_is_left_alone():
    assert decode_service_key("abc%2Bdef%3D%3D") == "abc+def=="
    assert decode_service_key("abc+def==") == "abc+def=="
    assert decode_service_key("abc%252B") == "abc%2B"  # once, not twice


def test_redact_removes_the_key_in_any_form():
    key = "SECRET+KEY/9f3b=="
    text = f"GET /x?serviceKey=SECRET%2BKEY%2F9f3b%3D%3D&pageNo=1 failed for {key}"
    cleaned = redact(text, key)
    assert "9f3b" not in cleaned and "pageNo=1" in cleaned


def test_load_ids_sort_by_time_and_are_unique():
    ids = {new_load_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 25 and i[8] == "T" for i in ids)
    earlier = new_load_id(datetime(2026, 11, 29, 9, 30, tzinfo=UTC))
    later = new_load_id(datetime(2026, 11, 29, 9, 31, tzinfo=UTC))
    assert earlier < later


def test_not_an_http_base_url_is_a_config_error(tmp_settings):
    import dataclasses

    settings = dataclasses.replace(tmp_settings, api_base_url="apis.data.go.kr/1471000")
    with pytest.raises(ConfigError, match="MFDS_API_BASE_URL"):
        load_day(settings, START_DATE, service_key="k" * 20)


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(base_delay_s=0.5, max_delay_s=3)
    assert [policy.backoff_s(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3, 3]


def test_summary_is_one_line_naming_the_verdict():
    outcome = LoadOutcome(
        "20261129T093000Z-3f2a",
        START_DATE,
        "incomplete",
        "the list shifted during the load",
        9200,
        9200,
        9199,
        1,
        57,
        0,
        3.2,
    )
    line = outcome.summary()
    assert "\n" not in line and "is incomplete" in line and "the list shifted" in line


def test_a_stop_that_reaches_dlt_mid_step_stops_the_run_instead_of_reading_as_a_write_failure():
    """dlt wraps a KeyboardInterrupt raised in its steps; SIGTERM while dlt syncs the destination
    read 'could not be written ... check that no other program holds the file'."""
    pipeline = SimpleNamespace(pipeline_name="mfds_dmf", has_pending_data=False)  # what dlt's exception reads
    stopped = RunInterrupted("SIGTERM")
    with pytest.raises(RunInterrupted) as raised:
        stop_if_interrupted(PipelineStepFailed(pipeline, "sync", None, stopped, None))
    assert raised.value is stopped
    stop_if_interrupted(PipelineStepFailed(pipeline, "load", None, OSError("disk full"), None))  # not a stop
