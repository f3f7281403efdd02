"""Reading dated dumps of the raw MFDS list for `dmf backfill`: where a past load's items come from.

A dump is one day's list, read into the same `FetchResult` a live fetch returns, so that the
one writer of the raw layer (load.write_load over mfds_dump_source) stores it exactly like a
live load. Two forms, one day per file, the as-of date being the first `YYYY-MM-DD` or
`YYYYMMDD` in the file name:

- `*.jsonl`: one raw MFDS item per line (the simulator's replay format, and the shape of the
  real samples); values are kept exactly as written (nulls, "", `\\r\\n`, spaces);
- `*.json`: the API's own response pages, a JSON array of `{"response": {"header", "body"}}`
  answers of getMdcDmfList01 (or one such answer), each read by the live page parser.

Why a dump needs its own completeness rules: it carries no second pass to compare and, in the
JSON Lines form, no totalCount. What is checked instead (any failure is one line naming the
file and the line or page, and nothing of any dump is written):

- every line is a JSON object, in UTF-8; a last line cut short is named as a truncated file;
- at least one record;
- the item keys pass the live loader's audit (item_schema.KeyAudit): an unknown key, or a
  declared field no item carries, is drift and refused;
- pages: every page answered resultCode 00, pages are numbered 1..n without gaps or repeats,
  one totalCount on all of them, every page but the last is full (numOfRows items), and the
  items add up to totalCount.

The record count of a JSON Lines dump stands in for its totalCount, so the count gates of the
build (total_count_drop, zero_records, withdrawn_share, ...) judge it against the previous
load like any other. A record listed twice is kept once with its repeat_count, as live; a
dump is a single pass, so a list that shifted while it was dumped cannot be told from a real
duplicate (the live loader's second pass has no equivalent here).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from dmf_watch.core.config import EARLIEST_AS_OF
from dmf_watch.core.errors import ConfigError
from dmf_watch.pipelines.mfds.helpers import ApiError, FetchResult, Page, _page, distinct_rows, parse_page
from dmf_watch.pipelines.mfds.settings import ITEM_SCHEMA, PAGE_SIZE

DUMP_SUFFIXES = (".jsonl", ".json")
# People's decisions on loads, written by `dmf export-loads` beside its dumps, read by `dmf backfill`.
DECISIONS_FILE = "load_decisions.jsonl"
# The first date of a name; digits around it would make it part of a longer number.
_DATE_IN_NAME = re.compile(r"(?<!\d)(?:(\d{4})-(\d{2})-(\d{2})|(\d{4})(\d{2})(\d{2}))(?!\d)")
_DECLARED = {name.upper() for name in ITEM_SCHEMA}


class DumpError(ConfigError):
    """A dump that cannot be imported: bad input, exit 1, one line naming the file."""


@dataclass(frozen=True)
class Dump:
    """One dated dump file."""

    path: Path
    as_of: date

    @property
    def form(self) -> str:
        return "pages" if self.path.suffix.lower() == ".json" else "jsonl"


def date_in_name(name: str) -> date | None:
    """The first YYYY-MM-DD or YYYYMMDD of a file name; None when there is none.

    Raises DumpError for a date-shaped run of digits that is no date (20261345)."""
    match = _DATE_IN_NAME.search(name)
    if match is None:
        return None
    year, month, day = (group for group in match.groups() if group is not None)
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        raise DumpError(
            f"{name}: '{match.group(0)}' in the file name is not a date; "
            "name each dump after its as-of date (YYYY-MM-DD or YYYYMMDD)."
        ) from None


def find_dumps(path: Path, today: date) -> list[Dump]:
    """The dated dumps at `path` (a file or a folder of them), oldest first; refused in one line
    when there are none, a date is in the future (Seoul) or before 2000, or two share a date."""
    if not path.exists():
        raise DumpError(
            f"{path} does not exist; give a dump file or a folder of them "
            "(YYYY-MM-DD.jsonl, one raw item a line, or YYYY-MM-DD.json of API pages)."
        )
    if path.is_dir():
        candidates = sorted(
            p
            for p in path.iterdir()
            if p.is_file() and p.suffix.lower() in DUMP_SUFFIXES and not p.name.startswith((".", "truth_"))
        )
    elif path.suffix.lower() in DUMP_SUFFIXES:
        candidates = [path]
    else:
        raise DumpError(f"{path} is neither a .jsonl nor a .json dump; give a dump file or a folder of them.")
    dumps: dict[date, Dump] = {}
    for candidate in candidates:
        as_of = date_in_name(candidate.name)
        if as_of is None:
            if candidate == path:
                raise DumpError(
                    f"{path}: the file name carries no date; name it after its as-of date (e.g. 2026-03-01.jsonl)."
                )
            continue
        if as_of > today:
            raise DumpError(
                f"{candidate}: its date {as_of} is after today in Seoul ({today}); "
                "a dump can only be of today or a past day."
            )
        if as_of < EARLIEST_AS_OF:
            raise DumpError(
                f"{candidate}: its date {as_of} is before {EARLIEST_AS_OF}; the MFDS DMF list has no data that old."
            )
        if as_of in dumps:
            raise DumpError(f"{candidate} and {dumps[as_of].path.name} are both dated {as_of}; keep one dump per day.")
        dumps[as_of] = Dump(candidate, as_of)
    if not dumps:
        raise DumpError(f"{path} holds no dated dump (*.jsonl or *.json with YYYY-MM-DD or YYYYMMDD in the name).")
    return [dumps[as_of] for as_of in sorted(dumps)]


def read_dump(dump: Dump, page_size: int = PAGE_SIZE) -> FetchResult:
    """The dump as a complete `FetchResult`, or DumpError naming the file and what is wrong.

    `page_size` numbers the pages of a JSON Lines dump as a live load of it would have."""
    started = datetime.now(UTC)
    if dump.form == "pages":
        received, total, pages = _read_pages(dump.path)
    else:
        received, pages = _read_lines(dump.path, page_size)
        total = len(received)
    if not received:
        raise DumpError(f"{dump.path}: holds no record; a day's list is never empty, so this dump is broken.")
    return FetchResult(
        status="complete",
        reason=None,
        total_count=total,
        fetched_count=len(received),
        rows=distinct_rows(received),
        pages=pages,
        requests=0,
        retries=0,
        attempts=1,
        result_codes="",
        source_url=dump.path.resolve().as_uri(),
        started_at=started,
        finished_at=datetime.now(UTC),
    )


Received = list[tuple[int, int, dict[str, Any]]]  # (position, page, item), as helpers.ListPass


def _read_lines(path: Path, page_size: int) -> tuple[Received, int]:
    raw_items: list[dict[str, Any]] = []
    numbers: list[int] = []
    try:
        # newline="": a line is cut at "\n" only, and "\r\n" ends are just whitespace to JSON.
        with path.open(encoding="utf-8", newline="") as handle:
            lines = handle.readlines()
    except UnicodeDecodeError as error:
        raise DumpError(f"{path}: not UTF-8 text (byte {error.start}); export the dump as UTF-8.") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as error:
            if number == len(lines) and not line.endswith("\n"):
                raise DumpError(
                    f"{path}:{number}: the last line ends in the middle of a record; "
                    "the file is truncated, dump the day again."
                ) from None
            raise DumpError(
                f"{path}:{number}: not JSON ({error.msg}); each line must be one raw MFDS item as a JSON object."
            ) from None
        if not isinstance(item, dict):
            raise DumpError(
                f"{path}:{number}: a JSON {type(item).__name__}, not an object; each line must be one raw MFDS item."
            )
        raw_items.append(item)
        numbers.append(number)
    page = _page(1, None, raw_items)  # mapped to the declared fields and audited by the live code
    first_odd = next(
        (number for number, item in zip(numbers, raw_items) if any(str(key).upper() not in _DECLARED for key in item)),
        numbers[0] if numbers else 0,
    )
    _refuse_drift(path, f":{first_odd}", page)
    received = [(position, position // page_size + 1, item) for position, item in enumerate(page.items)]
    return received, max(1, math.ceil(len(received) / page_size))


def _read_pages(path: Path) -> tuple[Received, int, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise DumpError(f"{path}: not UTF-8 text (byte {error.start}); export the dump as UTF-8.") from None
    except json.JSONDecodeError as error:
        raise DumpError(f"{path}:{error.lineno}: not JSON ({error.msg}); the file may be truncated.") from None
    answers = data if isinstance(data, list) else [data]
    received: Received = []
    totals: set[int] = set()
    expected_pages = 0
    for index, answer in enumerate(answers, start=1):
        response = answer.get("response", answer) if isinstance(answer, dict) else None
        if not isinstance(response, dict):
            raise DumpError(f"{path}: page {index} is not an API answer object.")
        try:  # the live parser: result codes, the tolerated shapes of items, the key audit
            page = parse_page(json.dumps(answer, ensure_ascii=False).encode("utf-8"), index)
        except ApiError as error:
            raise DumpError(f"{path}: page {index}: {error.reason}; only complete answers can be imported.") from None
        _refuse_drift(path, f": page {index}", page)
        body = response.get("body") or {}
        page_no, rows = _as_int(body.get("pageNo")), _as_int(body.get("numOfRows"))
        if page_no != index:
            raise DumpError(
                f"{path}: page {index} says pageNo {body.get('pageNo')!r}; the pages must be "
                "numbered 1, 2, ... in order, none missing or repeated."
            )
        if rows is None or rows < 1:
            raise DumpError(f"{path}: page {index} has no numOfRows; cannot tell whether it is full.")
        if page.total_count is None:
            raise DumpError(f"{path}: page {index} has no totalCount; cannot tell whether the list is complete.")
        totals.add(page.total_count)
        expected_pages = max(1, math.ceil(page.total_count / rows))
        if index < expected_pages and len(page.items) != rows:
            raise DumpError(
                f"{path}: page {index} holds {len(page.items)} of its {rows} items; only the last page may be short."
            )
        received.extend(((index - 1) * rows + offset, index, item) for offset, item in enumerate(page.items))
    if len(totals) > 1:
        raise DumpError(
            f"{path}: the totalCount differs between pages ({', '.join(map(str, sorted(totals)))}); "
            "the list moved while it was dumped."
        )
    total = next(iter(totals), 0)
    if len(answers) != expected_pages or len(received) != total:
        raise DumpError(
            f"{path}: {len(answers)} page(s) with {len(received):,} items, but totalCount "
            f"{total:,} needs {expected_pages} page(s); the dump is incomplete."
        )
    return received, total, len(answers)


def _refuse_drift(path: Path, at: str, page: Page) -> None:
    """Keys that do not fit the declared schema: the live loader's audit, refused here."""
    drift = page.audit.drift()
    if drift is None:
        return
    raise DumpError(f"{path}{at}: the items do not fit the declared schema ({drift.summary()}); nothing was imported.")


def _as_int(raw: Any) -> int | None:
    try:
        return int(str(raw).strip())
    except (TypeError, ValueError):
        return None
