"""The simulator speaks the MFDS API as the real portal does, and can be steered over loopback."""

from __future__ import annotations

import json

import httpx
import pytest

from dmf_watch.simulator.faults import Faults, FaultSpecError
from dmf_watch.simulator.server import SERVICE_PATH, StaticSource, error_xml
from support.mfds import SERVICE_KEY, START_DATE

LIST = "/getMdcDmfList01"


def _get(server, **params):
    query = {"serviceKey": SERVICE_KEY, "pageNo": 1, "numOfRows": 500, "type": "json", **params}
    return httpx.get(server.base_url + LIST, params={k: v for k, v in query.items() if v is not None})


def test_json_page_has_the_real_shape_and_counts(simulator):
    body = _get(simulator, pageNo=3).json()
    assert body["response"]["header"] == {"resultCode": "00", "resultMsg": "NORMAL SERVICE."}
    page = body["response"]["body"]
    assert (page["pageNo"], page["numOfRows"], page["totalCount"]) == (3, 500, 1200)
    items = page["items"]["item"]
    assert len(items) == 200
    assert list(items[0]) == [
        "DMF_PERMIT_NO",
        "INGR_KOR_NAME",
        "ENTP_NAME",
        "MNFCTR_NAME",
        "MNFCTR_PLACE",
        "MANUF_COUNTRY_CODE_NM",
        "DMF_PERMIT_DATE",
        "BIZRNO",
        "NOTICE_CODE",
    ]
    assert simulator.base_url.endswith(SERVICE_PATH) and simulator.base_url.startswith("http://127.0.0.1:")


def test_unknown_key_gets_the_portal_xml_error_code_30(simulator):
    response = _get(simulator, serviceKey="someone-else")
    assert response.status_code == 200
    assert response.content == error_xml("30")
    assert b"SERVICE_KEY_IS_NOT_REGISTERED_ERROR" in response.content


def test_more_than_999_rows_per_page_is_an_invalid_parameter(simulator):
    assert b"<returnReasonCode>10</returnReasonCode>" in _get(simulator, numOfRows=1000).content
    assert _get(simulator, numOfRows=999).json()["response"]["body"]["totalCount"] == 1200


def test_without_type_json_the_answer_is_xml(simulator):
    response = _get(simulator, type=None, numOfRows=2)
    assert response.text.startswith("<?xml")
    assert "<totalCount>1200</totalCount>" in response.text and response.text.count("<item>") == 2


def test_transient_faults_fire_their_count_then_stop(start_simulator):
    server = start_simulator(faults="http500:2,http429:1@retry_after=3")
    statuses = [_get(server) for _ in range(4)]
    assert [r.status_code for r in statuses] == [500, 500, 429, 200]
    assert statuses[2].headers["Retry-After"] == "3"
    assert server.requests == 4


def test_stable_duplicate_sits_at_the_same_places_on_every_pass(start_simulator):
    server = start_simulator(faults="duplicate_across_pages")

    def listing():
        return [
            item for page in (1, 2, 3) for item in _get(server, pageNo=page).json()["response"]["body"]["items"]["item"]
        ]

    first, second = listing(), listing()
    assert first == second and len(first) == 1201
    assert first[7] == first[800]


def test_shifting_list_shows_one_record_twice_and_loses_another(start_simulator):
    items = [{"DMF_PERMIT_NO": f"N-{i}", "INGR_KOR_NAME": "x"} for i in range(6)]
    server = start_simulator(StaticSource(items), faults="duplicate_shifting")
    pages = [_get(server, pageNo=page, numOfRows=3).json()["response"]["body"] for page in (1, 2)]
    numbers = [item["DMF_PERMIT_NO"] for page in pages for item in page["items"]["item"]]
    assert numbers == ["N-0", "N-1", "N-2", "N-2", "N-3", "N-4"]  # N-2 twice, N-5 never
    assert {page["totalCount"] for page in pages} == {6}


def test_items_shapes(start_simulator):
    items = [{"DMF_PERMIT_NO": f"N-{i}"} for i in range(3)]
    server = start_simulator(StaticSource(items), faults="items_shape:single")
    assert _get(server, pageNo=2, numOfRows=2).json()["response"]["body"]["items"] == {"item": {"DMF_PERMIT_NO": "N-2"}}
    assert _get(server, pageNo=9, numOfRows=2).json()["response"]["body"]["items"] == ""
    server.set_faults("items_shape:list")
    assert _get(server, numOfRows=2).json()["response"]["body"]["items"] == items[:2]


def test_control_endpoint_shows_and_sets_day_and_faults(start_simulator):
    server = start_simulator(size=1200)
    control = server.base_url.split(SERVICE_PATH)[0] + "/_sim/state"
    assert httpx.get(control).json() == {"day": 1, "faults": "", "requests": 0}
    state = httpx.post(control, json={"day": (START_DATE.replace(day=30)).isoformat(), "faults": "http503:1"}).json()
    assert state["day"] == 2 and state["faults"] == "http503:1"
    assert server.day == 2 and server.faults == Faults(http503=1)
    assert _get(server).status_code == 503
    assert httpx.post(control, content=json.dumps({"faults": "bogus"})).status_code == 400


def test_fault_specs_parse_and_round_trip():
    spec = (
        "http500:2,http503:1,http429:1@retry_after=1,drop:1,slow:0.5@times=2,xml_code:30,"
        "truncate_last_page,total_count_shift:3,duplicate_across_pages,duplicate_shifting,"
        "empty_page:3,items_shape:single"
    )
    faults = Faults.parse(spec)
    assert faults.http429 == 1 and faults.retry_after_s == 1 and faults.slow_times == 2
    assert faults.xml_code == "30" and faults.xml_code_times is None
    assert Faults.parse(faults.spec()) == faults
    assert not Faults.parse("") and Faults.parse("xml_code:1").xml_code == "01"
    with pytest.raises(FaultSpecError, match="unknown fault"):
        Faults.parse("meteor_strike")


def test_server_writes_nothing_about_requests_to_the_terminal(simulator, capfd):
    _get(simulator)
    _get(simulator, serviceKey="wrong")
    out, err = capfd.readouterr()
    assert SERVICE_KEY not in out + err and "wrong" not in out + err
