"""HTTP details of the MFDS DMF API: paging, retries, tolerant parsing and the completeness verdict.

Why the verdict lives here: a withdrawal is only ever inferred from absence, so a
load that lost records on the way must never look like a good one. The fetch therefore returns
a `FetchResult` whose status says *complete* only when the pages add up to one consistent list:
every page answered 00, totalCount held still, exactly totalCount records arrived, and the next
pass, paged with boundaries elsewhere, read the same records at the same places. A record listed
twice in a list that moved stands where another should be (rejected); one listed twice at the
same places in both passes is a duplicate the registry holds, kept once with its repeat_count and
counted by the models (the quarantine share gates a day with too many).
A list that moved is read again, within `max_list_attempts` passes and the load's deadline.

Nothing in this module raises for API or data problems: they become the result's status and a
one-sentence reason. The service key never leaves this module in any text: error messages are
built here without URLs, and httpx's own request log has the key masked.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, quote_plus, unquote

import httpx

from dmf_watch.core.interrupts import RunInterrupted, hold
from dmf_watch.core.url_policy import base_url_problem, display_url
from dmf_watch.pipelines.mfds.item_schema import KeyAudit, SchemaDrift
from dmf_watch.pipelines.mfds.settings import (
    CODE_ADVICE,
    COLUMN_NAMES,
    MAX_PLAUSIBLE_TOTAL,
    OPERATION_PATH,
    RESULT_CODES,
    RETRYABLE_CODES,
    SOURCE_FIELDS,
    RetryPolicy,
)

log = logging.getLogger(__name__)

_KEY_IN_QUERY = re.compile(r"(serviceKey=)[^&\s\"'<>]*", re.IGNORECASE)
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


class _MaskServiceKey(logging.Filter):
    """httpx logs every request URL at INFO, query string and service key included: mask it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "servicekey" in message.lower():
            record.msg, record.args = _KEY_IN_QUERY.sub(r"\1***", message), ()
        return True


for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).addFilter(_MaskServiceKey())


# -- keys and text -----------------------------------------------------------------------------
def decode_service_key(key: str) -> str:
    """Keys are issued URL-encoded; httpx encodes again, so decode once (and only once)."""
    key = key.strip()
    return unquote(key) if _PERCENT_ESCAPE.search(key) else key


def redact(text: str, *secrets: str | None) -> str:
    """Remove every form of the given secrets (raw, URL-encoded) and any serviceKey= value."""
    text = _KEY_IN_QUERY.sub(r"\1***", text)
    for secret in secrets:
        if not secret or len(secret) < 6:  # too short to replace without mangling words
            continue
        for form in {secret, quote(secret, safe=""), quote_plus(secret), quote(secret)}:
            text = text.replace(form, "***")
    return text


def describe_code(code: str) -> str:
    """`'30'` -> `'the MFDS API does not know this service key (code 30)'`."""
    words = RESULT_CODES.get(code, f"the MFDS API answered an unknown result code {code!r}")
    return f"{words} (code {code})"


def _fmt(n: int | None) -> str:
    return "unknown" if n is None else f"{n:,}"


# -- pages ---------------------------------------------------------------------------------------
class ApiError(Exception):
    """The API refused or failed a request; `reason` is a plain sentence without any URL."""

    def __init__(self, reason: str, *, code: str | None = None, retryable: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.code, self.retryable = reason, code, retryable


@dataclass(frozen=True)
class Answer:
    """One HTTP answer read whole (its body decoded as httpx decodes it)."""

    status_code: int
    headers: httpx.Headers
    content: bytes


class PageDeadline(Exception):
    """A page's body was still arriving at its deadline; the message says which and the setting."""


class PageTooLarge(Exception):
    """A page's body grew past RetryPolicy.max_page_bytes once decompressed (a gzip bomb, or a
    server gone wrong); it was refused without reading the rest."""


@dataclass(frozen=True)
class Page:
    page_no: int
    total_count: int | None
    items: list[dict[str, Any]]
    audit: KeyAudit = field(default_factory=KeyAudit)  # the key sets as received


def _code_error(code: str) -> ApiError:
    advice = CODE_ADVICE.get(code)
    reason = describe_code(code) + (f"; {advice}" if advice else "")
    return ApiError(reason, code=code, retryable=code in RETRYABLE_CODES)


def _norm_code(raw: Any) -> str:
    text = str(raw if raw is not None else "").strip()
    return text.zfill(2) if text.isdigit() else text


def _as_int(raw: Any) -> int | None:
    try:
        return int(str(raw).strip())
    except (TypeError, ValueError):
        return None


def _items_of(raw: Any) -> list[Any]:
    """Every tolerated shape of `items`: dict with list/object/empty item, list, "", null."""
    if raw in (None, "", [], {}):
        return []
    if isinstance(raw, list):
        return raw
    if isinstance(raw, dict):
        inner = raw.get("item")
        if inner in (None, "", []):
            return []
        return inner if isinstance(inner, list) else [inner]
    raise ApiError("the MFDS API sent items in a shape this loader does not know", retryable=True)


def parse_page(content: bytes, page_no: int) -> Page:
    """One answer of getMdcDmfList01 as a `Page`, or an `ApiError` naming the portal code."""
    # bytes that are not UTF-8 are kept (surrogateescape), to be stored escaped, never replaced
    text = content.decode("utf-8", errors="surrogateescape").lstrip("\ufeff \t\r\n")
    if text.startswith("<"):
        return _parse_xml(text, page_no)
    try:
        data = json.loads(text)
    except ValueError:
        raise ApiError("the MFDS API sent a body that is neither JSON nor XML", retryable=True) from None
    if not isinstance(data, dict):
        raise ApiError("the MFDS API sent JSON of an unexpected shape", retryable=True)
    response = data.get("response", data)
    header = response.get("header") or {}
    code = _norm_code(header.get("resultCode"))
    if code != "00":
        raise _code_error(code or "99")
    body = response.get("body") or {}
    return _page(page_no, _as_int(body.get("totalCount")), _items_of(body.get("items")))


def _parse_xml(text: str, page_no: int) -> Page:
    """The portal's HTTP-200 XML error body, or (if asked without type=json) an XML list."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        raise ApiError("the MFDS API sent an XML body that could not be read", retryable=True) from None
    code = root.findtext(".//returnReasonCode") or root.findtext(".//resultCode") or "99"
    code = _norm_code(code)
    if code != "00":
        raise _code_error(code)
    items = [{child.tag: child.text for child in item} for item in root.iter("item")]
    return _page(page_no, _as_int(root.findtext(".//totalCount")), items)


def _page(page_no: int, total_count: int | None, raw_items: list[Any]) -> Page:
    """Map the items to the declared fields, auditing their keys as received on the way."""
    audit = KeyAudit()
    items = []
    for raw in raw_items:
        item = _item(raw)
        audit.observe(raw)
        items.append(item)
    return Page(page_no, total_count, items, audit)


def _item(raw: Any) -> dict[str, Any]:
    """The 9 fields exactly as received (values untouched but for `storable`; keys matched
    case-insensitively)."""
    if not isinstance(raw, dict):
        raise ApiError("the MFDS API sent an item that is not an object", retryable=True)
    upper = {str(key).upper(): value for key, value in raw.items()}
    item: dict[str, Any] = {}
    for name in SOURCE_FIELDS:
        value = upper.get(name)
        if value is not None and not isinstance(value, str):
            value = str(value) if isinstance(value, (int, float)) else json.dumps(value, ensure_ascii=False)
        item[name] = storable(value)
    return item


# Marks a raw value stored escaped. Any value that begins with it is escaped too, so a stored value
# that begins with it is always an escape and `received` is exact.
ESCAPE_MARK = "\u241b"  # ␛ SYMBOL FOR ESCAPE


def storable(value: str | None) -> str | None:
    """A received value as the warehouse can hold it. Text DuckDB cannot store (a lone surrogate
    such as \\ud800, a NUL, bytes that were not UTF-8, kept as surrogateescape) is stored as
    ESCAPE_MARK + its ASCII JSON string, so one bad record is judged like any other instead of
    failing every load; `received` gives the value back exactly. Other values are untouched (and
    their row hashes with them)."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
        clean = "\x00" not in value and not value.startswith(ESCAPE_MARK)
    except UnicodeEncodeError:
        clean = False
    return value if clean else ESCAPE_MARK + json.dumps(value, ensure_ascii=True)


def received(stored: str | None) -> str | None:
    """The value as the API sent it, from what `storable` stored (bytes that were not UTF-8 come
    back as surrogateescape: `.encode("utf-8", "surrogateescape")` gives the bytes)."""
    if stored is None or not stored.startswith(ESCAPE_MARK):
        return stored
    return json.loads(stored[len(ESCAPE_MARK) :])


# -- one request, retried ---------------------------------------------------------------------
class MfdsClient:
    """One httpx client for a load; counts requests, retries and every outcome it saw."""

    def __init__(
        self,
        base_url: str,
        service_key: str,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = _operation_url(base_url)
        self._key = decode_service_key(service_key)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self.requests = 0
        self.retries = 0
        self.outcomes: Counter[str] = Counter()
        self.load_deadline = time.monotonic() + self.policy.load_deadline_s
        read_s = min(self.policy.read_timeout_s, self.policy.page_deadline_s)
        timeout = httpx.Timeout(read_s, connect=min(self.policy.connect_timeout_s, self.policy.page_deadline_s))
        self._http = httpx.Client(timeout=timeout, follow_redirects=False, headers={"Accept": "application/json"})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MfdsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def page(self, page_no: int, rows: int) -> Page:
        """Fetch one page, retrying transient failures; raises `ApiError` when it cannot."""
        policy = self.policy
        params = {"serviceKey": self._key, "pageNo": str(page_no), "numOfRows": str(rows), "type": "json"}
        failure = "the MFDS API could not be reached"
        for attempt in range(policy.max_retries + 1):
            delay = policy.backoff_s(attempt + 1)
            self._check_load_deadline(page_no)
            self.requests += 1
            try:
                response = self._get(params, page_no)
            except (httpx.InvalidURL, httpx.UnsupportedProtocol):
                self.outcomes["bad_url"] += 1
                raise ApiError("the MFDS API base URL cannot be used; check MFDS_API_BASE_URL") from None
            except PageDeadline as late:
                failure = str(late)
            except PageTooLarge as large:  # the same answer again would only cost the same memory
                raise ApiError(str(large)) from None
            except httpx.TimeoutException:
                self.outcomes["timeout"] += 1
                failure = "the MFDS API did not answer in time"
            except httpx.TransportError as exc:
                self.outcomes["connection"] += 1
                failure = f"the connection to the MFDS API failed ({type(exc).__name__})"
            else:
                status = response.status_code
                if status == 429:
                    self.outcomes["http429"] += 1
                    failure = "the MFDS API kept answering 429 Too Many Requests"
                    wait = _retry_after_s(response.headers.get("Retry-After"))
                    delay = min(policy.retry_after_cap_s, wait if wait is not None else delay)
                elif status >= 500:
                    self.outcomes[f"http{status}"] += 1
                    failure = f"the MFDS API kept answering HTTP {status}"
                elif status != 200:
                    self.outcomes[f"http{status}"] += 1
                    raise ApiError(f"the MFDS API answered HTTP {status}; check MFDS_API_BASE_URL")
                else:
                    try:
                        page = parse_page(response.content, page_no)
                    except ApiError as exc:
                        self.outcomes[exc.code or "unreadable"] += 1
                        if not exc.retryable:
                            raise
                        failure = exc.reason
                    else:
                        self.outcomes["00"] += 1
                        return page
            if attempt < policy.max_retries:
                self.retries += 1
                log.info("MFDS page %d: %s; retry %d in %.2fs", page_no, failure, attempt + 1, delay)
                self._sleep(min(delay, max(0.0, self.load_deadline - time.monotonic())))
        tries = policy.max_retries + 1
        raise ApiError(f"{failure} (page {page_no}, {tries} tries)", retryable=False)

    def _check_load_deadline(self, page_no: int) -> None:
        if time.monotonic() >= self.load_deadline:
            raise ApiError(
                f"the load was still going after {self.policy.load_deadline_s:g} s, at page {page_no} "
                "(DMF_LOAD_DEADLINE_S)"
            )

    def _get(self, params: dict[str, str], page_no: int) -> Answer:
        """One request, its whole body read within the page's deadline (and the load's): httpx's
        read timeout restarts on every byte, so a dripping server is cut off by the clock here.
        A page past its deadline is a timeout like any other (retried within the load's bound)."""
        deadline = min(time.monotonic() + self.policy.page_deadline_s, self.load_deadline)
        limit = self.policy.max_page_bytes
        with self._http.stream("GET", self.url, params=params) as response:
            body = bytearray()
            # iter_bytes decodes (gzip, deflate, ...) one network read at a time, so counting what
            # it gives bounds the memory of a page whatever its compression: the limit plus what
            # one read expands to, never the whole body
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > limit:
                    self.outcomes["page_too_large"] += 1
                    raise PageTooLarge(
                        f"page {page_no} of the MFDS API grew past {limit / 2**20:g} MiB once decompressed "
                        f"(a real page of {params['numOfRows']} records is under 1 MiB); refused without reading "
                        "the rest: the server sent a compression bomb or has gone wrong, try again later"
                    )
                if time.monotonic() > deadline:
                    self.outcomes["page_deadline"] += 1
                    raise PageDeadline(
                        f"page {page_no} was still arriving after {self.policy.page_deadline_s:g} s "
                        "(DMF_PAGE_DEADLINE_S)"
                    )
            return Answer(response.status_code, response.headers, bytes(body))


def _retry_after_s(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


# -- whole list, verdict ------------------------------------------------------------------------
Identity = tuple[Any, ...]


@dataclass
class ListPass:
    """One walk over all pages."""

    total_counts: list[int | None] = field(default_factory=list)
    received: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)  # (position, page, item)
    pages: int = 0
    problem: str | None = None
    error: ApiError | None = None
    audit: KeyAudit = field(default_factory=KeyAudit)
    implausible: bool = False  # the count was refused before paging: another pass would ask the same

    @property
    def total_count(self) -> int | None:
        return self.total_counts[0] if self.total_counts else None

    def repeats(self) -> dict[Identity, tuple[int, ...]]:
        """Records seen more than once, with every position they were seen at."""
        seen: dict[Identity, list[int]] = {}
        for position, _, item in self.received:
            seen.setdefault(identity(item), []).append(position)
        return {key: tuple(positions) for key, positions in seen.items() if len(positions) > 1}


def identity(item: dict[str, Any]) -> Identity:
    """A record is the full 9-field tuple: two rows are 'the same' only if every field is."""
    return tuple(item.get(name) for name in SOURCE_FIELDS)


# In the reason of a load the plausibility cap refused (load.py adds the command that lets it through).
IMPLAUSIBLE_MARKER = "it can plausibly hold"


def fetch_pass(client: MfdsClient, page_size: int, plausible_total: int = MAX_PLAUSIBLE_TOTAL) -> ListPass:
    """One walk over the pages. It asks for no more pages than `plausible_total` records fill, and
    stops at the first empty page: a count that lies is never a storm of requests."""
    result = ListPass()
    page_no, last_page = 1, 1
    while page_no <= last_page:
        try:
            page = client.page(page_no, page_size)
        except ApiError as exc:
            result.error = exc
            return result
        result.pages += 1
        result.total_counts.append(page.total_count)
        result.audit.merge(page.audit)
        if page_no == 1:
            if page.total_count is None:
                result.problem = "the MFDS API did not report a totalCount"
                return result
            if page.total_count > plausible_total:
                result.implausible = True
                result.problem = (
                    f"the MFDS API reported {_fmt(page.total_count)} records, more than the {_fmt(plausible_total)} "
                    f"{IMPLAUSIBLE_MARKER} (twice the last accepted list); refused after page 1 instead of asking "
                    f"for {_fmt(math.ceil(page.total_count / page_size))} pages"
                )
                return result
            last_page = max(1, math.ceil(page.total_count / page_size))
        start = (page_no - 1) * page_size
        for index, item in enumerate(page.items):
            result.received.append((start + index, page_no, item))
        if not page.items and page.total_count:
            result.problem = result.problem or (
                f"page {page_no} came back empty although the API reported {_fmt(result.total_count)} records"
            )
            return result  # the pages after an empty one are not asked for: the count cannot be trusted
        page_no += 1
    counts = {count for count in result.total_counts}
    if len(counts) > 1:
        result.problem = (
            f"the totalCount moved from {_fmt(result.total_counts[0])} to "
            f"{_fmt(next(c for c in result.total_counts if c != result.total_counts[0]))} during the load"
        )
    elif result.problem is None and len(result.received) != result.total_count:
        result.problem = (
            f"received {_fmt(len(result.received))} of the {_fmt(result.total_count)} records the API reported"
        )
    return result


def _repeats_problem(current: ListPass) -> str | None:
    """A record listed twice in a pass that the next pass does not repeat place by place: the list
    moved under the pages (one record seen twice, another never), so the list holds fewer
    distinct records than it reports and is not the list. A record listed twice at the
    same places in two passes is a stable duplicate, kept once (the caller decides)."""
    repeats = current.repeats()
    if not repeats:
        return None
    places = next(iter(repeats.values()))
    return (
        f"the API reported {_fmt(current.total_count)} records but listed "
        f"{_fmt(len(current.received) - sum(len(p) - 1 for p in repeats.values()))} distinct ones: "
        f"{len(repeats)} record(s) came back twice (e.g. at positions {places[0]:,} and {places[1]:,}), "
        "in place of others"
    )


def _difference(before: list[Identity], after: list[Identity]) -> str:
    """How two passes over the same list differ, e.g. `37 of 9,200 places hold another record`."""
    moved = sum(1 for old, new in zip(before, after, strict=False) if old != new) + abs(len(before) - len(after))
    first = next((i for i, (old, new) in enumerate(zip(before, after, strict=False)) if old != new), None)
    where = f" from position {first:,}" if first is not None else ""
    return f"{moved:,} of {_fmt(len(after))} places hold another record in the next pass{where}"


@dataclass
class FetchResult:
    """What one load got from the API, and whether it is complete (never raised, always returned)."""

    status: str  # 'complete' | 'incomplete' | 'failed'
    reason: str | None
    total_count: int | None
    fetched_count: int
    rows: list[dict[str, Any]]  # distinct records: item_position, page_no, repeat_count, 9 fields
    pages: int
    requests: int
    retries: int
    attempts: int
    result_codes: str
    source_url: str
    started_at: datetime
    finished_at: datetime
    schema_drift: str | None = None  # JSON {"missing", "unknown", "samples"} when keys drifted

    @property
    def distinct_count(self) -> int:
        return len(self.rows)

    @property
    def duplicate_count(self) -> int:
        return self.fetched_count - self.distinct_count

    @property
    def duration_s(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()


def distinct_rows(received: Iterable[tuple[int, int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each record once, at its first position, with how many times it was listed."""
    rows: dict[Identity, dict[str, Any]] = {}
    for position, page_no, item in received:
        key = identity(item)
        row = rows.get(key)
        if row is None:
            row = {"item_position": position, "page_no": page_no, "repeat_count": 0}
            row.update({column: item[name] for column, name in zip(COLUMN_NAMES, SOURCE_FIELDS)})
            rows[key] = row
        row["repeat_count"] += 1
    return list(rows.values())


def fetch_registry(
    base_url: str,
    service_key: str,
    policy: RetryPolicy | None = None,
    allowed_hosts: Iterable[str] = (),
    previous_total: int | None = None,
) -> FetchResult:
    """Fetch the whole list and judge it; API and data problems come back as the status.

    The URL is judged again here, whoever called: a URL the policy refuses is never connected to.
    """
    policy = policy or RetryPolicy()
    started = datetime.now(UTC)

    def failed(reason: str, attempts: int) -> FetchResult:
        return FetchResult(
            status="failed",
            reason=reason,
            total_count=None,
            fetched_count=0,
            rows=[],
            pages=0,
            requests=0,
            retries=0,
            attempts=attempts,
            result_codes="",
            source_url=_operation_url(base_url),
            started_at=started,
            finished_at=datetime.now(UTC),
        )

    problem = base_url_problem(base_url, allowed_hosts)
    if problem is not None:
        return failed(problem, 0)
    try:
        return _fetch_registry(base_url, service_key, policy, started, policy.plausible_total(previous_total))
    except RunInterrupted as stopped:  # recorded as a failed attempt first; load_day stops the run after
        hold(stopped)
        return failed(f"the fetch was stopped by {stopped.cause}", 1)
    except Exception as exc:  # a bug must still leave a recorded (failed) load, and no key in text
        log.error("MFDS fetch stopped on an unexpected %s", type(exc).__name__)
        return failed(f"the load stopped on an unexpected error ({type(exc).__name__}); please report it", 1)


def _operation_url(base_url: str) -> str:
    """The operation URL without any query string (safe to store and show)."""
    return display_url(base_url).rstrip("/") + OPERATION_PATH


def is_usable_base_url(base_url: str, allowed_hosts: Iterable[str] = ()) -> bool:
    """A URL the loader may connect to (dmf_watch.core.url_policy decides: https, or http on
    loopback; never link-local, metadata or unnamed private hosts; no credentials)."""
    return base_url_problem(base_url, allowed_hosts) is None


def _fetch_registry(
    base_url: str, service_key: str, policy: RetryPolicy, started: datetime, plausible_total: int
) -> FetchResult:
    with MfdsClient(base_url, service_key, policy) as client:
        status, reason = "incomplete", None
        confirmed: list[Identity] | None = None  # the last clean pass, which the next must equal
        current = ListPass()
        drift: SchemaDrift | None = None
        keys = (service_key, decode_service_key(service_key))  # never in any text we keep
        attempts = 0
        for attempts in range(1, policy.max_list_attempts + 1):
            current = fetch_pass(client, policy.pass_page_size(attempts), plausible_total)
            if current.error is not None:
                status, reason = "failed", current.error.reason
                break
            if current.implausible:
                reason = current.problem
                log.warning("MFDS list pass %d: %s", attempts, reason)
                break
            drift = current.audit.drift()
            if drift is not None:  # items that do not fit the schema: never complete
                status, reason = "incomplete", redact(drift.reason(), *keys)
                log.warning("MFDS list pass %d: %s", attempts, reason)
                break
            reason = current.problem
            if reason is not None:
                log.info("MFDS list pass %d incomplete: %s", attempts, reason)
                confirmed = None
                continue
            listed = [identity(item) for _, _, item in current.received]
            if confirmed is not None:
                if listed == confirmed:
                    # Two passes paged differently agree place by place: a record listed twice
                    # is one the registry itself holds twice (a stable duplicate), kept once
                    # with its repeat_count; the models count it and a share gates the day.
                    status, reason = "complete", None
                    break
                # a record seen twice in a list that moved stands where another should be
                reason = _repeats_problem(current) or (
                    "the list changed while it was read: " + _difference(confirmed, listed)
                )
                log.info("MFDS list pass %d: %s; reading it again", attempts, reason)
            confirmed = listed
        if status == "incomplete" and reason is None:  # one clean pass and no attempt left to confirm it
            reason = "the list was read once; no pass was left to confirm it held still"
        if status == "incomplete" and attempts > 1 and drift is None:
            reason = f"{reason} ({attempts} passes)"
        codes = ",".join(f"{name}:{count}" for name, count in sorted(client.outcomes.items()))
        return FetchResult(
            status=status,
            reason=None if reason is None else redact(reason, *keys),
            total_count=current.total_count,
            fetched_count=len(current.received),
            rows=distinct_rows(current.received),
            pages=current.pages,
            requests=client.requests,
            retries=client.retries,
            attempts=attempts,
            result_codes=codes,
            source_url=client.url,
            started_at=started,
            finished_at=datetime.now(UTC),
            schema_drift=None if drift is None else drift.map_text(lambda t: redact(t, *keys)).as_json(),
        )
