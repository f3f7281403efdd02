"""An MFDS-compatible HTTP server on loopback, so every load can be exercised without the portal.

It speaks the real operation (`OPERATION_PATH`, from dmf_watch.core.config, with `serviceKey`,
`pageNo`, `numOfRows`, `type=json`), answers errors the way the portal does (HTTP 200 with an
XML body and a reason code), and injects the faults of `simulator.faults` so the
loader's retries and completeness checks meet every failure they are meant to survive.

The data comes from a *source*: any object with ``items_for(day) -> list[dict]`` (raw MFDS items,
9 keys) and ``day_of(as_of) -> int`` — the synthetic registry, a replay of a real dump, or the
`StaticSource` below. A loopback control endpoint, ``/_sim/state``, lets one shell steer a
`dmf sim serve` running in another (GET shows the state, POST ``{"day": ..., "faults": ...}``).
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections.abc import Sequence
from datetime import date
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from dmf_watch.core.config import MFDS_OPERATION_PATH, MFDS_SERVICE_PATH
from dmf_watch.simulator.faults import Faults, gzip_bomb

# The real API's paths (one home: dmf_watch.core.config), so the loader cannot drift from what is served.
SERVICE_PATH = MFDS_SERVICE_PATH
OPERATION_PATH = SERVICE_PATH + MFDS_OPERATION_PATH
CONTROL_PATH = "/_sim/state"
DEFAULT_SERVICE_KEY = "dmf-demo-key"
MAX_ROWS = 999  # the real portal is reported to fail at 1000

# The portal's reason codes and the auth messages it sends with them.
REASON_MESSAGES = {
    "01": "APPLICATION_ERROR",
    "02": "DB_ERROR",
    "03": "NODATA_ERROR",
    "04": "HTTP_ERROR",
    "05": "SERVICETIMEOUT_ERROR",
    "10": "INVALID_REQUEST_PARAMETER_ERROR",
    "11": "NO_MANDATORY_REQUEST_PARAMETERS_ERROR",
    "12": "NO_OPENAPI_SERVICE_ERROR",
    "20": "SERVICE_ACCESS_DENIED_ERROR",
    "21": "TEMPORARILY_DISABLE_THE_SERVICEKEY_ERROR",
    "22": "LIMITED_NUMBER_OF_SERVICE_REQUESTS_EXCEEDS_ERROR",
    "30": "SERVICE_KEY_IS_NOT_REGISTERED_ERROR",
    "31": "DEADLINE_HAS_EXPIRED_ERROR",
    "32": "UNREGISTERED_IP_ERROR",
    "99": "UNKNOWN_ERROR",
}


class RegistrySource(Protocol):
    """What the server needs from the data side: the first two methods of
    `simulator.source.SnapshotSource` (SyntheticRegistry, ReplaySource, StaticSource)."""

    def items_for(self, day: int) -> list[dict]: ...

    def day_of(self, as_of: date) -> int: ...


class StaticSource:
    """The same list of raw items on every day: for replaying one dump and for small tests."""

    def __init__(self, items: Sequence[dict], start_date: date | None = None) -> None:
        self._items = [dict(item) for item in items]
        self._start = start_date

    def items_for(self, day: int) -> list[dict]:
        return [dict(item) for item in self._items]

    def day_of(self, as_of: date) -> int:
        return 1 if self._start is None else (as_of - self._start).days + 1

    def truth_for(self, day: int) -> list[dict]:
        return self.items_for(day)


def error_xml(code: str) -> bytes:
    """The portal's error answer (sent with HTTP 200, whatever `type` was asked)."""
    message = REASON_MESSAGES.get(code, "UNKNOWN_ERROR")
    return (
        "<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg>"
        f"<returnAuthMsg>{message}</returnAuthMsg><returnReasonCode>{code}</returnReasonCode>"
        "</cmmMsgHeader></OpenAPI_ServiceResponse>"
    ).encode()


def _items_xml(items: list[dict]) -> str:
    rows = []
    for item in items:
        cells = "".join(f"<{key}>{'' if value is None else escape(str(value))}</{key}>" for key, value in item.items())
        rows.append(f"<item>{cells}</item>")
    return "".join(rows)


class _State:
    """Everything the handler threads share, behind one lock."""

    def __init__(self, source: RegistrySource, service_key: str, day: int, faults: Faults) -> None:
        self.lock = threading.Lock()
        self.source = source
        self.service_key = service_key
        self.requests = 0
        self.bomb_bytes = 0  # compressed bytes of gzip_bomb answers that reached the socket
        self.bomb_bytes_total = 0  # and how many those answers held in all
        self._cache: tuple[int, list[dict]] | None = None
        self.day = day
        self.faults = faults
        self._reset_run()

    # -- run state -------------------------------------------------------------------------
    def _reset_run(self) -> None:
        f = self.faults
        self.remaining = {
            "drop": f.drop,
            "http500": f.http500,
            "http503": f.http503,
            "http429": f.http429,
            "slow": -1 if f.slow_times is None else f.slow_times,
            "xml_code": -1 if f.xml_code_times is None else f.xml_code_times,
        }
        self.shifted: list[dict] | None = None
        self.shift_count = 0
        self.moves_left = f.list_moves_times if f.list_moves else 0
        self.moved = False  # the pages after the last page 1 are cut from the moved list

    def set_day(self, day: int) -> None:
        with self.lock:
            self.day = day
            self._reset_run()

    def set_faults(self, faults: Faults) -> None:
        with self.lock:
            self.faults = faults
            self._reset_run()

    def take(self, name: str) -> bool:
        """Use one firing of a fault; -1 means permanent. Call with the lock held."""
        left = self.remaining[name]
        if left == 0:
            return False
        if left > 0:
            self.remaining[name] = left - 1
        return True

    def base_items(self) -> list[dict]:
        """The day's list as served (a stable duplicate included). Call with the lock held."""
        if self._cache is None or self._cache[0] != self.day:
            self._cache = (self.day, list(self.source.items_for(self.day)))
        items = self._cache[1]
        if self.faults.item_shape == "empty_record":
            items = [*items, dict.fromkeys(items[0] if items else ("DMF_PERMIT_NO",))]
        if self.faults.bad_text is not None or self.faults.permit_no_twice:
            items = self._unchanged_record_faults(items)
        if self.faults.duplicate_across_pages and len(items) > 1:
            # A record that really is listed twice: the same record at the same two places.
            items = list(items)
            items.insert(len(items) * 2 // 3, items[min(7, len(items) - 1)])
        return items

    def _unchanged_record_faults(self, items: list[dict]) -> list[dict]:
        """bad_text and permit_no_twice, on the first record from the middle of the list on that
        has a number and no change in the source's truth today (so the fault alone is what a
        client sees differ)."""
        truth = getattr(self.source, "truth_for", None)
        changed = {entry.get("permit_no") for entry in (truth(self.day) if truth else [])}
        position = next(
            (
                i
                for i in range(len(items) // 2, len(items))
                if items[i].get("DMF_PERMIT_NO") and items[i]["DMF_PERMIT_NO"] not in changed
            ),
            None,
        )
        if position is None:
            return items
        items = list(items)
        original = items[position]
        record = dict(original)
        if self.faults.bad_text == "cp949":
            # bytes that are not UTF-8, as a client decoding with surrogateescape holds them
            record["ENTP_NAME"] = (record["ENTP_NAME"] or "신청인").encode("cp949").decode("utf-8", "surrogateescape")
        elif self.faults.bad_text == "surrogate":
            name = record["ENTP_NAME"] or "신청인"
            record["ENTP_NAME"] = name[:1] + "\ud800" + name[1:]
        items[position] = record
        if self.faults.permit_no_twice:
            twin = dict(original, MNFCTR_NAME=(original.get("MNFCTR_NAME") or "") + ",Second Site Pharma Co., Ltd.")
            items.insert(position + 1, twin)
        return items

    def listing(self, page_no: int = 1) -> list[dict]:
        """The list page `page_no` is cut from right now. Call with the lock held."""
        if self.moved and page_no > 1:
            return _moved(self.base_items(), self.faults.list_moves)
        if not self.faults.duplicate_shifting:
            return self.base_items()
        if self.shifted is None:
            self.shifted = list(self.base_items())
        return self.shifted

    def page_one_served(self) -> None:
        """A client started a pass: the list moves under its next pages (list_moves), or not."""
        self.moved = self.moves_left > 0
        self.moves_left = max(0, self.moves_left - 1)
        if self.faults.duplicate_shifting:
            self.shift()

    def shift(self) -> None:
        """A new record lands at the top and the last one falls off (totalCount unchanged)."""
        if self.shifted:
            self.shift_count += 1
            template = self.shifted[0]
            newcomer = {key: template.get(key) for key in template}
            newcomer["DMF_PERMIT_NO"] = None
            newcomer["INGR_KOR_NAME"] = f"시뮬레이션신규원료{self.shift_count}"
            self.shifted.insert(0, newcomer)
            self.shifted.pop()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"day": self.day, "faults": self.faults.spec(), "requests": self.requests}


def _moved(items: list[dict], move: str | None) -> list[dict]:
    """The list after one move (Faults.list_moves): the 4th record withdrawn and a new one added
    at the end, or the 4th record edited and moved to the end; the count stays the same."""
    if len(items) < 4:
        return items
    record = items[3]
    if move == "to_end":
        edited = dict(record, MNFCTR_PLACE=f"{record.get('MNFCTR_PLACE') or ''} (moved)".strip())
        return [*items[:3], *items[4:], edited]
    newcomer = dict(record, DMF_PERMIT_NO=None, INGR_KOR_NAME="시뮬레이션이동신규원료")
    return [*items[:3], *items[4:], newcomer]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "MFDS-Simulator/1.0"
    state: _State  # set on the per-server subclass

    # The request line holds the service key: never write it anywhere.
    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        bomb = self.state.faults.gzip_bomb_mib
        if bomb and status == 200 and content_type.startswith("application/json"):
            self._send_gzip_bomb(body, content_type, bomb)
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        drip = self.state.faults.drip_s
        if not drip:
            self.wfile.write(body)
            return
        for index in range(len(body)):
            self.wfile.write(body[index : index + 1])
            self.wfile.flush()
            time.sleep(drip)

    def _send_gzip_bomb(self, body: bytes, content_type: str, mib: int) -> None:
        """The gzip_bomb fault: the answer compressed and padded to expand to `mib` MiB; the
        compressed bytes that reached the socket are counted, until the client hangs up."""
        length, parts = gzip_bomb(body, mib)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        with self.state.lock:
            self.state.bomb_bytes_total += length
        try:
            for part in parts:
                self.wfile.write(part)
                with self.state.lock:
                    self.state.bomb_bytes += len(part)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: what a bound does
            self.close_connection = True

    def _send_xml_error(self, code: str) -> None:
        self._send(200, error_xml(code), "text/xml;charset=UTF-8")

    def _send_json(self, payload: Any, status: int = 200) -> None:
        try:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate travels as JSON's \ud800 escape, as a real API sends it
            body = json.dumps(payload, ensure_ascii=True).encode("ascii")
        self._send(status, body, "application/json;charset=UTF-8")

    def _control_allowed(self) -> bool:
        """Only the machine itself may steer the simulator."""
        if str(self.client_address[0]).startswith("127.") or self.client_address[0] == "::1":
            return True
        self._send(403, b"the control endpoint answers loopback clients only", "text/plain")
        return False

    # -- routing -----------------------------------------------------------------------------
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == CONTROL_PATH:
            if self._control_allowed():
                self._send_json(self.state.snapshot())
        elif parts.path == OPERATION_PATH:
            self._serve_list(parse_qs(parts.query, keep_blank_values=True))
        else:
            self._send_xml_error("12")

    def do_POST(self) -> None:
        if urlsplit(self.path).path != CONTROL_PATH:
            self._send(404, b"not found", "text/plain")
            return
        if not self._control_allowed():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if "faults" in body:
                self.state.set_faults(Faults.parse(body["faults"]))
            if "day" in body:
                self.state.set_day(_day_number(self.state.source, body["day"]))
        except (ValueError, TypeError) as exc:
            self._send_json({"error": str(exc)}, status=400)
            return
        self._send_json(self.state.snapshot())

    def _serve_list(self, query: dict[str, list[str]]) -> None:
        state = self.state
        with state.lock:
            state.requests += 1
            if state.take("drop"):
                self.close_connection = True  # cut off without an answer
                return
            for name, status in (("http500", 500), ("http503", 503)):
                if state.take(name):
                    self._send(status, HTTPStatus(status).phrase.encode(), "text/plain")
                    return
            if state.take("http429"):
                headers = {"Retry-After": str(state.faults.retry_after_s)}
                self._send(429, b"Too Many Requests", "text/plain", headers)
                return
            delay = state.faults.slow_s if state.faults.slow_s and state.take("slow") else 0.0
        if delay:
            time.sleep(delay)

        def arg(name: str) -> str | None:
            values = query.get(name)
            return values[0] if values else None

        if arg("serviceKey") != state.service_key:
            self._send_xml_error("30")
            return
        try:
            page_no = int(arg("pageNo") or 1)
            rows = int(arg("numOfRows") or 10)
        except ValueError:
            self._send_xml_error("10")
            return
        if page_no < 1 or rows < 1 or rows > MAX_ROWS:
            self._send_xml_error("10")
            return

        with state.lock:
            faults = state.faults
            if faults.xml_code is not None and state.take("xml_code"):
                code = faults.xml_code
                page_items: list[dict] | None = None
            else:
                code = "00"
                listing = state.listing(page_no)
                total = len(listing)
                served_rows = 2 * rows if faults.oversized_page else rows
                first = (page_no - 1) * served_rows
                page_items = listing[first : first + served_rows]
                if faults.repeat_first and page_no == max(1, math.ceil(total / rows)) and page_items:
                    k = min(faults.repeat_first, len(page_items))
                    page_items = page_items[: len(page_items) - k] + listing[:k]
                if page_no == 1:
                    state.page_one_served()
        if page_items is None:
            self._send_xml_error(code)
            return

        last_page = max(1, math.ceil(total / rows))
        if faults.total_count_shift and page_no >= 2:
            total += faults.total_count_shift
        total *= faults.total_count_scale
        if faults.empty_page == page_no:
            page_items = []
        if faults.truncate_last_page is not None and page_no == last_page and page_items:
            cut = faults.truncate_last_page or max(1, len(page_items) // 2)
            page_items = page_items[: max(0, len(page_items) - cut)]

        page_items = _rekey([faults.reshape_item(item, first + i) for i, item in enumerate(page_items)], faults)
        if (arg("type") or "").lower() != "json":
            self._send(200, _list_xml(page_items, page_no, rows, total), "text/xml;charset=UTF-8")
            return
        self._send_json(
            {
                "response": {
                    "header": {"resultCode": "00", "resultMsg": "NORMAL SERVICE."},
                    "body": {
                        "pageNo": page_no,
                        "numOfRows": rows,
                        "totalCount": total,
                        "items": _shape(page_items, faults.items_shape),
                    },
                }
            }
        )


def camel_case(name: str) -> str:
    """`DMF_PERMIT_NO` -> `dmfPermitNo` (the renaming of the camelcase_keys fault)."""
    head, *rest = name.lower().split("_")
    return head + "".join(part.capitalize() for part in rest)


def _rekey(items: list[dict], faults: Faults) -> list[dict]:
    """The key faults: renamed keys (camelcase_keys), one extra key on a page's first item."""
    if faults.camelcase_keys:
        items = [{camel_case(key): value for key, value in item.items()} for item in items]
    if faults.extra_key is not None and items:
        items = [{**items[0], faults.extra_key: "added by the API"}, *items[1:]]
    return items


def _shape(items: list[dict], shape: str) -> Any:
    """The tolerated shapes of `items`."""
    if shape == "list":
        return items
    if shape == "single":
        if not items:
            return ""
        return {"item": items[0] if len(items) == 1 else items}
    if shape == "empty_string" and not items:
        return ""
    return {"item": items}


def _list_xml(items: list[dict], page_no: int, rows: int, total: int) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><response><header>'
        "<resultCode>00</resultCode><resultMsg>NORMAL SERVICE.</resultMsg></header><body>"
        f"<pageNo>{page_no}</pageNo><totalCount>{total}</totalCount><items>{_items_xml(items)}</items>"
        f"<numOfRows>{rows}</numOfRows></body></response>"
    ).encode()


def _day_number(source: RegistrySource, day: date | int | str | None) -> int:
    if day is None:
        return 1
    if isinstance(day, bool):
        raise TypeError("day must be a number or a date")
    if isinstance(day, int):
        return day
    if isinstance(day, str):
        return int(day) if day.isdigit() else source.day_of(date.fromisoformat(day))
    return source.day_of(day)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout) leaves a broken pipe behind: not worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class SimulatorServer:
    """The simulator on 127.0.0.1 in a background thread; `start()` returns the base URL."""

    def __init__(
        self,
        source: RegistrySource,
        *,
        service_key: str = DEFAULT_SERVICE_KEY,
        day: date | int = 1,
        faults: Faults | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._state = _State(source, service_key, _day_number(source, day), _faults(faults))
        self._host, self._port = host, port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the simulator is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{SERVICE_PATH}"

    @property
    def requests(self) -> int:
        """API requests answered (or refused) since the server started; control calls excluded."""
        return self._state.requests

    @property
    def bomb_bytes(self) -> tuple[int, int]:
        """Compressed bytes of gzip_bomb answers that reached the socket, and how many they held."""
        with self._state.lock:
            return self._state.bomb_bytes, self._state.bomb_bytes_total

    @property
    def day(self) -> int:
        return self._state.day

    @property
    def faults(self) -> Faults:
        return self._state.faults

    def start(self) -> str:
        if self._httpd is None:
            handler = type("Handler", (_Handler,), {"state": self._state})
            self._httpd = _Server((self._host, self._port), handler)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="mfds-simulator",
                daemon=True,
            )
            self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._httpd = None
            self._thread = None

    def set_day(self, day: date | int) -> None:
        """Serve another day of the registry (also resets the run's transient faults)."""
        self._state.set_day(_day_number(self._state.source, day))

    def set_faults(self, faults: Faults | str | None) -> None:
        """Inject a new set of faults; transient ones start counting again from their n."""
        self._state.set_faults(_faults(faults))

    def __enter__(self) -> SimulatorServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _faults(faults: Faults | str | None) -> Faults:
    if faults is None:
        return Faults()
    return faults if isinstance(faults, Faults) else Faults.parse(faults)


def serve(
    host: str,
    port: int,
    source: RegistrySource,
    service_key: str = DEFAULT_SERVICE_KEY,
    day: date | int = 1,
    faults: Faults | str | None = None,
) -> None:
    """Run the simulator in the foreground until interrupted (`dmf sim serve`)."""
    server = SimulatorServer(source, service_key=service_key, day=day, faults=faults, host=host, port=port)
    base_url = server.start()
    print(
        f"MFDS simulator serving {base_url} (day {server.day}); steer it at "
        f"{base_url.split(SERVICE_PATH)[0]}{CONTROL_PATH}; Ctrl-C stops it.",
        flush=True,
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
