"""Constants of the MFDS DMF source: the operation, the fields, the portal's codes, the retry policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dmf_watch.core.config import DEFAULT_LOAD_DEADLINE_S, DEFAULT_PAGE_DEADLINE_S, MFDS_OPERATION_PATH
from dmf_watch.core.warehouse import RAW_DATASET

OPERATION_PATH = MFDS_OPERATION_PATH
PAGE_SIZE = 500  # 500 works; the portal is reported to fail at 1000
# The real list holds about 9,200 registrations (2026); a first load believes a count up to this.
MAX_PLAUSIBLE_TOTAL = 200_000
# The most one page's body may hold once decompressed: a page of 500 records is about 0.3 MiB, so
# 64 MiB is far beyond any real answer and still small for the machine (a gzip body can expand
# about 1,000-fold: without a bound, 2 MiB on the wire becomes 2 GiB in memory).
MAX_PAGE_BYTES = 64 * 1024 * 1024

PIPELINE_NAME = "mfds_dmf"
DATASET_NAME = RAW_DATASET
# The raw items: each distinct record once (versions, by content hash) plus each load's list of
# hashes (membership); `dmf_items` is the view joining them back into every load as received.
VERSIONS_TABLE = "dmf_item_versions"
MEMBERSHIP_TABLE = "dmf_load_items"
ITEMS_TABLE = "dmf_items"
RUNS_TABLE = "load_runs"
# A person's word that a list larger than the plausibility cap is real (`dmf accept-load
# --list-size`): append-only beside the loads, read by the loader before it fetches.
LIST_SIZE_DECISIONS_TABLE = "list_size_decisions"

# The 9 item fields in the order the API sends them; stored under their lower-case names.
SOURCE_FIELDS = (
    "DMF_PERMIT_NO",
    "INGR_KOR_NAME",
    "ENTP_NAME",
    "MNFCTR_NAME",
    "MNFCTR_PLACE",
    "MANUF_COUNTRY_CODE_NM",
    "DMF_PERMIT_DATE",
    "BIZRNO",
    "NOTICE_CODE",
)
COLUMN_NAMES = tuple(field.lower() for field in SOURCE_FIELDS)

# The declared schema of one API item: the 9 fields, each nullable text, nothing else. Keys are
# matched case-insensitively (the real API sends them upper-case). The fetch verdict holds every
# load against it: a field no item carries, or a key it does not list, is schema drift and makes
# the load incomplete (helpers.KeyAudit), because mapping renamed keys to the old names would
# give all-null records and a false WITHDRAWN for the whole registry. The raw tables are frozen
# to the columns derived from it (a dlt schema contract), so they can never silently grow.
ITEM_SCHEMA: dict[str, dict[str, Any]] = {name: {"data_type": "text", "nullable": True} for name in SOURCE_FIELDS}
# Where each field sits in an answer, for the drift diagnosis prompt (dmf_watch/enrich/drift.py).
ITEM_FIELD_PATHS = {name: f"response.body.items.item[].{name}" for name in ITEM_SCHEMA}
# The contract of both raw tables: new tables may be created, new columns never.
RAW_SCHEMA_CONTRACT: dict[str, str] = {"tables": "evolve", "columns": "freeze"}

# The public-data portal's reason codes, in words a user understands.
RESULT_CODES = {
    "00": "the MFDS API answered normally",
    "01": "the MFDS API had an application error",
    "02": "the MFDS API had a database error",
    "03": "the MFDS API says it has no data",
    "04": "the MFDS API had an HTTP error",
    "05": "the MFDS API timed out on its side",
    "10": "the MFDS API rejected a request parameter as invalid",
    "11": "the MFDS API is missing a mandatory request parameter",
    "12": "the MFDS API does not offer this service (check MFDS_API_BASE_URL)",
    "20": "the MFDS API denied access to this service for this key",
    "21": "the MFDS API has temporarily disabled this service key",
    "22": "the MFDS API daily request limit for this key is used up",
    "30": "the MFDS API does not know this service key",
    "31": "the MFDS API service key has expired",
    "32": "the MFDS API does not accept calls from this IP address",
    "99": "the MFDS API had an unknown error",
}
# What to do about each failing code, so the one-line error says it.
CODE_ADVICE = {
    "20": "apply for use of dataset 15057075 on data.go.kr",
    "21": "wait until the portal re-enables the key",
    "22": "try again tomorrow",
    "30": "check MFDS_SERVICE_KEY (use the decoded key from data.go.kr)",
    "31": "renew the key on data.go.kr",
    "32": "register this machine's IP address on data.go.kr",
}
# Server-side hiccups worth another try; every other failing code is final for this load.
RETRYABLE_CODES = frozenset({"01", "02", "04", "05", "99"})
# Codes that say the key itself is refused: never retried, never hammered.
PERMANENT_CODES = frozenset({"20", "22", "30", "31", "32"})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard the loader tries. Defaults suit the real portal; tests shrink the delays."""

    max_retries: int = 4  # extra tries per request after the first
    base_delay_s: float = 0.5  # backoff: base * 2**(try-1), capped below
    max_delay_s: float = 8.0
    retry_after_cap_s: float = 30.0  # a Retry-After longer than this is cut to it
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0
    # Whole-list passes: a list is complete when two consecutive passes read the same records at
    # the same places, so 2 when it holds still, 3 when it moved once while it was read.
    max_list_attempts: int = 3
    page_size: int = PAGE_SIZE
    # Wall-clock bounds (a read timeout restarts on every byte: a server that drips one byte a
    # second would hold a page for days). Settings DMF_PAGE_DEADLINE_S and DMF_LOAD_DEADLINE_S.
    page_deadline_s: float = DEFAULT_PAGE_DEADLINE_S  # one page, every byte of it, each try
    load_deadline_s: float = DEFAULT_LOAD_DEADLINE_S  # the whole fetch: every page, retry and pass
    max_page_bytes: int = MAX_PAGE_BYTES  # one page's body once decompressed; past it the load fails

    def pass_page_size(self, attempt: int) -> int:
        """The page size of list pass `attempt` (1-based): every other pass pages by one record
        fewer, so each page boundary of one pass falls inside a page of the next and a record
        that moved across a boundary while the list was read shows as a difference."""
        return self.page_size - 1 if attempt % 2 == 0 and self.page_size > 1 else self.page_size

    def plausible_total(self, previous_total: int | None) -> int:
        """The largest totalCount a load believes before paging: twice the last accepted list (or
        1,000 more, for a small one), or MAX_PLAUSIBLE_TOTAL when there is none. A larger count is
        a rejection after page 1, never thousands of requests against a key allowed 10,000 a day."""
        if previous_total is None:
            return MAX_PLAUSIBLE_TOTAL
        return max(2 * previous_total, previous_total + 1000)

    def backoff_s(self, retry: int) -> float:
        return min(self.max_delay_s, self.base_delay_s * 2 ** max(0, retry - 1))
