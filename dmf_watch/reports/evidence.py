"""`dmf evidence`: one registration's events with the proof behind each, as files a person can
attach to a filing and anyone can check.

For every event of the registration (`marts.dmf_event_evidence`, the lineage the dbt project
derives: event -> record -> row version, load, page and position), a folder holds:
- `record_after.json` / `record_before.json`: the record exactly as the raw layer stores it
  (`mfds_raw.dmf_item_versions`: the 9 fields in source order, nulls, empty strings, CR/LF and
  spaces kept), serialized deterministically (`record_json`). The loader keeps no HTTP bytes; this
  file re-hashes to the stored `row_hash` (`check_row_hash.py` in the folder shows it);
- `load_after.json` / `load_before.json`: the load the record came from: date, load id, when it was
  fetched, the page and position in the listing, the request without the service key;
- `decision.json`: what published the event's day: the verdict, every gate of that load (fired or
  passed) and who accepted it, or "automatic".
`SHA256SUMS` lists the SHA-256 of every file in `sha256sum` format, and `README.txt` (Korean and
English) says what each file is and how to check it.

Python only picks the rows of one registration; every fact is a column of a mart or of the raw
layer. How the loader stores a record (its fields, its table, its hash, its page size) is the
loader's to say (dmf_watch/pipelines/mfds): the command hands it in as `RawRecords`, since the
reports import no stage before them but enrich. The files are built in memory, checked (row hashes, no service key) and written into a
folder beside DIR that is renamed to DIR at the end, so a refusal leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import Connection, table_exists

LINEAGE_MART = "dmf_event_evidence"
MANIFEST = "SHA256SUMS"
README = "README.txt"
HASH_CHECK = "check_row_hash.py"
SERVICE_KEY_PARAMETER = "servicekey"  # compared case-insensitively


@dataclass(frozen=True)
class RawRecords:
    """How the loader stores a record: the API's field names in source order, their column names,
    the versions table, the row hash and the page size of its requests."""

    source_fields: Sequence[str]
    columns: Sequence[str]
    versions_table: str
    row_hash: Callable[[Sequence[Any]], int]
    page_size: int


def record_json(raw: RawRecords, values: Sequence[Any]) -> bytes:
    """A raw record as the file holds it: the 9 source fields by their API names in source order,
    JSON with ensure_ascii=False (Korean stays readable), indented, one final newline."""
    record = dict(zip(raw.source_fields, values, strict=True))
    return (json.dumps(record, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _plain(value: Any) -> Any:
    """A mart value as JSON: dates ISO, clocks in UTC, numbers as numbers."""
    if isinstance(value, datetime):
        return (value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def _json(document: Mapping[str, Any]) -> bytes:
    return (json.dumps(document, ensure_ascii=False, indent=2, default=_plain) + "\n").encode("utf-8")


def _rows(con: Connection, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [{name: _plain(value) for name, value in zip(names, row)} for row in cur.fetchall()]


def without_key(url: str | None) -> str | None:
    """The URL with any serviceKey parameter removed (the loader stores none; this makes sure)."""
    if not url:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() != SERVICE_KEY_PARAMETER]
    return urlunsplit(parts._replace(query=urlencode(query)))


def request_of(source_url: str | None, page_no: int | None, page_size: int) -> dict[str, Any]:
    """The request that listed a record, as the loader sends it, less the service key. A load
    imported from a dump (`dmf backfill`) has a file URL and no request."""
    url = without_key(source_url)
    if not url or not url.lower().startswith(("http://", "https://")) or page_no is None:
        return {"url": url, "note": "imported from a dump file (dmf backfill): no HTTP request"}
    query = urlencode({"pageNo": page_no, "numOfRows": page_size, "type": "json"})
    return {
        "method": "GET",
        "url": f"{url}{'&' if urlsplit(url).query else '?'}{query}",
        "service_key": "omitted (the loader never stores it)",
    }


@dataclass(frozen=True)
class Evidence:
    dmf_key: str
    files: dict[str, bytes]  # relative path -> bytes, manifest and README included


def find_dmf_keys(con: Connection, permit_no: str) -> list[str]:
    """The registrations that ever had `permit_no` (exactly): a renumbered one is found by any of
    its numbers, a withdrawn one by its last."""
    marts = con.schemas.marts
    rows = con.execute(
        f"""
        select dmf_key from {marts}.dmf_registration_history where permit_no = ?
        union
        select dmf_key from {marts}.{LINEAGE_MART} where permit_no = ?
        order by dmf_key
    """,
        [permit_no.strip(), permit_no.strip()],
    ).fetchall()
    return [key for (key,) in rows]


def _known_key(con: Connection, dmf_key: str) -> bool:
    marts = con.schemas.marts
    row = con.execute(
        f"select 1 from {marts}.dmf_registration_history where dmf_key = ? "
        f"union select 1 from {marts}.{LINEAGE_MART} where dmf_key = ?",
        [dmf_key, dmf_key],
    ).fetchone()
    return row is not None


def _stored_records(con: Connection, raw: RawRecords, hashes: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    if not hashes:
        return {}
    marks = ", ".join("?" for _ in hashes)
    found = con.execute(
        f"select row_hash, {', '.join(raw.columns)} from {con.schemas.raw}.{raw.versions_table} "
        f"where row_hash in ({marks})",
        list(hashes),
    ).fetchall()
    return {int(row[0]): tuple(row[1:]) for row in found}


def _decision(con: Connection, load_id: str, as_of: str) -> dict[str, Any]:
    marts = con.schemas.marts
    (day,) = _rows(
        con,
        f"""
        select d.as_of_date, d.load_id, d.verdict, d.load_status, d.reason, d.rejected_gates,
               d.attempt_count, l.decision, l.decided_by, l.decision_reason, l.decided_at
        from {marts}.dmf_day_decisions as d
        join {marts}.dmf_loads as l on l.load_id = d.load_id
        where d.as_of_date = ?
    """,
        [as_of],
    )
    signals = _rows(
        con,
        f"""
        select signal_id, is_gate, fired, severity, observed, baseline, baseline_text
        from {marts}.dmf_signals
        where load_id = ?
        order by is_gate desc, signal_id
    """,
        [load_id],
    )
    person = day["decision"] is not None
    return {
        "as_of_date": day["as_of_date"],
        "deciding_load_id": day["load_id"],
        "event_load_id": load_id,
        "verdict": day["verdict"],
        "load_status": day["load_status"],
        "reason": day["reason"],
        "load_attempts_that_day": day["attempt_count"],
        "published_by": (
            {
                "decision": day["decision"],
                "decided_by": day["decided_by"],
                "decided_at": day["decided_at"],
                "reason": day["decision_reason"],
            }
            if person
            else "automatic (every integrity gate passed; no person decided)"
        ),
        "gates": [
            {k: s[k] for k in ("signal_id", "fired", "observed", "baseline", "baseline_text")}
            for s in signals
            if s["is_gate"]
        ],
        "warnings_fired": [
            {k: s[k] for k in ("signal_id", "severity", "observed", "baseline_text")}
            for s in signals
            if not s["is_gate"] and s["fired"]
        ],
    }


def _load(raw: RawRecords, row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "as_of_date": row["record_as_of_date"],
        "load_id": row["record_load_id"],
        "fetch_started_at": row["started_at"],
        "fetch_finished_at": row["finished_at"],
        "page_no": row["page_no"],
        "item_position": row["item_position"],
        "row_hash": row["row_hash"],
        "record_id": row["record_id"],
        "quarantined_record_replaced_by_last_good_version": bool(row["is_quarantined"]),
        "request": request_of(row["source_url"], row["page_no"], raw.page_size),
        "raw_table": f"mfds_raw.{raw.versions_table}",
    }


def gather(con: Connection, raw: RawRecords, dmf_key: str) -> Evidence:
    """Every file of one registration's evidence, in memory, its row hashes checked."""
    lineage = _rows(
        con,
        f"""
        select * from {con.schemas.marts}.{LINEAGE_MART}
        where dmf_key = ?
        order by as_of_date, event_type, side desc
    """,
        [dmf_key],
    )
    if not lineage:
        raise DmfError(f"registration {dmf_key} has no event since its first load; there is no evidence to write.")
    records = _stored_records(con, raw, sorted({int(row["row_hash"]) for row in lineage}))
    files: dict[str, bytes] = {}
    events: list[str] = []
    for row in lineage:
        folder = f"{row['as_of_date']}_{row['event_type']}"
        values = records.get(int(row["row_hash"]))
        if values is None or raw.row_hash(values) != int(row["row_hash"]):
            raise DmfError(
                f"the raw record {row['row_hash']} behind the {row['event_type']} of {row['as_of_date']} is missing "
                "or does not match its row hash; nothing was written (run `dmf doctor`)."
            )
        files[f"{folder}/record_{row['side']}.json"] = record_json(raw, values)
        files[f"{folder}/load_{row['side']}.json"] = _json(_load(raw, row))
        if folder not in events:
            events.append(folder)
            files[f"{folder}/event.json"] = _json(
                {
                    "event_id": row["event_id"],
                    "as_of_date": row["as_of_date"],
                    "event_type": row["event_type"],
                    "dmf_key": row["dmf_key"],
                    "permit_no": row["permit_no"],
                }
            )
            files[f"{folder}/decision.json"] = _json(_decision(con, row["event_load_id"], row["as_of_date"]))
    files[HASH_CHECK] = hash_check_script().encode("utf-8")
    files[README] = readme(raw, dmf_key, events).encode("utf-8")
    files[MANIFEST] = manifest(files).encode("utf-8")
    return Evidence(dmf_key, files)


def manifest(files: Mapping[str, bytes]) -> str:
    """`sha256sum` format: the hex digest, two spaces, the relative path; sorted by path."""
    return "".join(f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files) if name != MANIFEST)


def hash_check_script() -> str:
    """A standalone check (Python 3, no package needed) that each record file re-hashes to the
    row_hash its load file names: the hash of row_versions.py, restated so anyone can run it."""
    return f'''"""Check that every record_*.json re-hashes to the row_hash in its load_*.json.

The row hash (DMF Watch, dmf_watch/pipelines/mfds/row_versions.py): SHA-256 of the 9 fields in
source order, each written as "N;" for null or "S<utf-8 byte length>:<value>;", its first
15 hex digits read as an integer. Run: python3 {HASH_CHECK}
"""

import hashlib
import json
import pathlib
import sys


def row_hash(values):
    text = "".join("N;" if v is None else "S%d:%s;" % (len(v.encode("utf-8", "surrogatepass")), v) for v in values)
    return int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:15], 16)


failed = 0
here = pathlib.Path(__file__).resolve().parent
for record_file in sorted(here.glob("*/record_*.json")):
    values = list(json.loads(record_file.read_text(encoding="utf-8")).values())
    load_file = record_file.with_name(record_file.name.replace("record_", "load_"))
    stored = json.loads(load_file.read_text(encoding="utf-8"))["row_hash"]
    ok = row_hash(values) == stored
    failed += not ok
    print(("OK  " if ok else "BAD ") + str(record_file.relative_to(here)) + " row_hash " + str(stored))
sys.exit(1 if failed else 0)
'''


def readme(raw: RawRecords, dmf_key: str, events: Sequence[str]) -> str:
    listed = "\n".join(f"  {name}/" for name in events)
    return f"""DMF Watch 근거 자료 / evidence — dmf_key {dmf_key}

[한국어]
이 폴더는 한 등록(dmf_key {dmf_key})의 모든 이벤트(신규·변경·취하·재등록)에 대해 그 근거를 담습니다.
이벤트마다 폴더 하나(날짜_이벤트):
{listed}
  record_after.json  이벤트 후 레코드(신규·변경·재등록): 원천 계층(mfds_raw.{raw.versions_table})에 저장된
                     그대로의 9개 필드(API 필드명, 원천 순서, null·빈 문자열·줄바꿈·공백 보존)를 JSON으로 쓴 것.
                     적재기는 HTTP 응답 바이트를 보관하지 않으므로 이것이 보관된 원본 레코드입니다.
  record_before.json 이벤트 전 레코드(변경·취하: 직전 승인 적재에 마지막으로 실린 레코드).
  load_*.json        레코드가 온 적재: 기준일, 적재 ID, 조회 시각(UTC), 페이지와 목록 내 위치,
                     서비스 키를 뺀 요청 URL, row_hash.
  decision.json      이벤트를 게시한 날의 판정: 무결성 게이트별 결과, 사람이 승인했다면 누가·언제·왜,
                     아니면 "automatic"(자동).
  event.json         이벤트 자체(날짜, 종류, 등록번호).
검증 방법:
  1) 파일이 바뀌지 않았는지: 이 폴더에서 `sha256sum -c {MANIFEST}`
  2) 레코드가 원천 계층의 것인지: `python3 {HASH_CHECK}` (레코드를 다시 해시해 row_hash와 비교)

[English]
This folder holds, for every event (NEW, CHANGED, WITHDRAWN, REINSTATED) of registration
{dmf_key}, the proof behind it. One folder per event (date_EVENT), listed above:
  record_after.json  the record after the event (NEW, CHANGED, REINSTATED) exactly as the raw layer
                     stores it (mfds_raw.{raw.versions_table}): the 9 fields by their API names in source
                     order, nulls, empty strings, CR/LF and spaces kept, as JSON. The loader keeps no
                     HTTP response bytes; this is the stored record.
  record_before.json the record before the event (CHANGED, WITHDRAWN: the last record listed).
  load_*.json        the load each record came from: as-of date, load id, fetch clock (UTC), page and
                     position in the listing, the request URL without the service key, the row_hash.
  decision.json      what published the event's day: each integrity gate's result, and who accepted it,
                     when and why, or "automatic".
  event.json         the event itself (date, type, registration number).
How to check:
  1) nothing was edited: in this folder, `sha256sum -c {MANIFEST}`
  2) each record is the raw layer's: `python3 {HASH_CHECK}` (re-hashes each record, compares its row_hash)
"""


def _target_problem(out: Path) -> str | None:
    if out.exists() and not out.is_dir():
        return f"{out} exists and is not a folder; give --out a new or empty folder."
    if out.is_dir() and any(out.iterdir()):
        return f"{out} is not empty; evidence is never overwritten: give --out a new or empty folder."
    parent = out.parent if not out.exists() else out
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write into {parent}; give --out a folder you may write."
    return None


def check_out(out: Path) -> None:
    problem = _target_problem(out)
    if problem:
        raise DmfError(problem)


def write(evidence: Evidence, out: Path) -> None:
    """The files into `out` (new or empty), whole or not at all."""
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for name, data in evidence.files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if out.is_dir():
            out.rmdir()
        staging.rename(out)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise DmfError(f"could not write the evidence into {out}: {error.strerror or error}.") from None


def write_evidence(
    settings: Settings, raw: RawRecords, out: Path, *, permit_no: str | None = None, dmf_key: str | None = None
) -> Evidence:
    """What `dmf evidence` does; any refusal is a DmfError (one line, exit 1) before a file is written."""
    check_out(out)
    where = warehouse.describe(settings)
    if not warehouse.exists(settings):
        raise DmfError(f"no warehouse at {where}: run `dmf run` (or `dmf demo` to try).")
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.marts, LINEAGE_MART, "dmf_registration_history"):
            raise DmfError(f"{where} is not built with the evidence lineage yet: run `dmf build` first.")
        if permit_no is not None:
            keys = find_dmf_keys(con, permit_no)
            if not keys:
                raise DmfError(f"no registration ever had the number {permit_no!r}; check it with `dmf history`.")
            if len(keys) > 1:
                raise DmfError(
                    f"the number {permit_no!r} belonged to {len(keys)} registrations ({', '.join(keys)}); "
                    "choose one with --dmf-key."
                )
            (key,) = keys
        else:
            key = (dmf_key or "").strip()
            if not _known_key(con, key):
                raise DmfError(f"no registration has the dmf key {dmf_key!r}; find it with `dmf history`.")
        evidence = gather(con, raw, key)
    secret = os.environ.get("MFDS_SERVICE_KEY")
    if secret and any(secret.encode("utf-8") in data for data in evidence.files.values()):
        raise DmfError("the evidence would contain the service key; nothing was written (report this).")
    write(evidence, out)
    return evidence
