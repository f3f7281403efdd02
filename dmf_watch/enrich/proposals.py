"""The human approval queue for AI proposals.

Nothing here applies a proposal. Accepting one records who decided, when and why, in
`enrichment.proposals` and the append-only `enrichment.proposal_decisions`; the analyst then
edits the alias seed by hand. Seeds and config are never opened for writing. The same
proposal (kind, watch term, candidate) is queued once, whatever its later fate.
Functions return values; none raises.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import SEOUL, Settings
from dmf_watch.core.warehouse import rows
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.parse import AliasCandidate
from dmf_watch.enrich.runner import open_warehouse

ALIAS_KIND = "ingredient_alias"
OVERDUE_DAYS = 7
DECISIONS = {"accept": "ACCEPTED", "accepted": "ACCEPTED", "reject": "REJECTED", "rejected": "REJECTED"}
FILE_NOTE = (
    "이 파일의 어떤 항목도 자동 반영되지 않습니다. 승인은 사람이 seeds/ 의 성분 별칭 seed 를 "
    "직접 편집하는 것이며, `dmf proposals accept` 는 그 결정을 감사 기록에 남길 뿐입니다."
)


def proposal_id(kind: str, watch_term: str, candidate: str) -> str:
    digest = hashlib.sha256(f"{kind}\x1f{watch_term}\x1f{candidate}".encode()).hexdigest()
    return "al-" + digest[:10]


def proposals_dir(settings: Settings) -> Path:
    return Path(settings.state_dir) / "proposals"


def alias_file(settings: Settings, as_of: date) -> Path:
    return proposals_dir(settings) / f"{as_of:%Y%m%d}_uc4_alias.json"


def _existing_ids(settings: Settings, ids: Sequence[str]) -> set[str]:
    if not ids:
        return set()
    opened, _ = open_warehouse(settings)
    if opened is None:
        return set()
    with opened as con:
        store.ensure_schema(con)
        found = rows(
            con,
            f"select proposal_id from {con.schemas.enrichment}.proposals where proposal_id in ("
            + ", ".join("?" for _ in ids)
            + ")",
            list(ids),
        )
    return {r["proposal_id"] for r in found}


def new_alias_rows(
    settings: Settings, as_of: date, run_id: str, model: str, prompt_sha: str, aliases: Sequence[AliasCandidate]
) -> list[dict[str, Any]]:
    """Rows for the proposals not queued before (by kind + term + candidate)."""
    now = store.utc_now()
    rows: dict[str, dict[str, Any]] = {}
    for a in aliases:
        pid = proposal_id(ALIAS_KIND, a.watch_term, a.candidate_ingredient_name)
        rows.setdefault(
            pid,
            {
                "proposal_id": pid,
                "as_of_date": as_of,
                "kind": ALIAS_KIND,
                "watch_term": a.watch_term,
                "candidate_ingredient_name": a.candidate_ingredient_name,
                "base_form": a.base_form,
                "salt_form": a.salt_form,
                "confidence": a.confidence,
                "reason": a.reason,
                "status": "PENDING",
                "created_at": now,
                "run_id": run_id,
                "isomer_note": a.isomer_note,
                "model": model,
                "prompt_sha256": prompt_sha,
                "source_file": str(alias_file(settings, as_of)),
            },
        )
    try:
        known = _existing_ids(settings, list(rows))
    except warehouse.Error:
        known = set()
    return [r for pid, r in rows.items() if pid not in known]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_alias_file(
    settings: Settings, as_of: date, run_id: str, model: str, prompt_sha: str, rows: Sequence[dict[str, Any]]
) -> Path | None:
    """The day's queue file in `state/proposals/` (items already in it are kept; new ones are appended)."""
    if not rows:
        return None
    path = alias_file(settings, as_of)
    try:
        current = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        current = None
    items = list(current.get("items") or []) if isinstance(current, dict) else []
    have = {i.get("proposal_id") for i in items if isinstance(i, dict)}
    for row in rows:
        if row["proposal_id"] in have:
            continue
        items.append(
            {
                "id": len(items) + 1,
                "proposal_id": row["proposal_id"],
                "watch_term": row["watch_term"],
                "candidate_ingredient_name": row["candidate_ingredient_name"],
                "base_form": row["base_form"],
                "salt_form": row["salt_form"],
                "isomer_note": row.get("isomer_note") or "",
                "confidence": row["confidence"],
                "reason": row["reason"],
                "decision": "PENDING",
            }
        )
    data = {
        "kind": ALIAS_KIND,
        "run_id": run_id,
        "generated_at": datetime.now(SEOUL).isoformat(timespec="seconds"),
        "model": model,
        "prompt_sha256": prompt_sha,
        "status": "PENDING" if any(i.get("decision") == "PENDING" for i in items) else "DECIDED",
        "note": FILE_NOTE,
        "items": items,
    }
    try:
        _write_json(path, data)
    except OSError:
        return None
    return path


def _with_age(row: dict[str, Any], today: date) -> dict[str, Any]:
    created = row.get("created_at")
    created_day = created.astimezone(SEOUL).date() if isinstance(created, datetime) else today
    age = (today - created_day).days
    row["age_days"] = age
    row["is_overdue"] = row.get("status") == "PENDING" and age > OVERDUE_DAYS
    return row


def list_proposals(
    settings: Settings, status: str | None = "PENDING", as_of: date | None = None
) -> list[dict[str, Any]]:
    """Proposals (PENDING by default; status=None for all), oldest first, with age_days and
    is_overdue (pending for more than 7 days, counted up to `as_of` or today in Seoul)."""
    opened, _ = open_warehouse(settings)
    if opened is None:
        return []
    today = as_of or datetime.now(SEOUL).date()
    try:
        with opened as con:
            store.ensure_schema(con)
            found = rows(
                con,
                f"select * from {con.schemas.enrichment}.proposals where (? is null or status = ?) order by created_at, proposal_id",
                [status, status],
            )
    except warehouse.Error:
        return []
    return [_with_age(r, today) for r in found]


def overdue_proposals(settings: Settings, as_of: date | None = None) -> list[dict[str, Any]]:
    """Pending proposals older than seven days (a dashboard badge, never an alert)."""
    return [r for r in list_proposals(settings, "PENDING", as_of) if r["is_overdue"]]


def _resolve(con: warehouse.Connection, wanted: str) -> tuple[dict[str, Any] | None, str]:
    wanted = (wanted or "").strip()
    if not wanted:
        return None, "Give a proposal id (see `dmf proposals list`)."
    proposals = f"{con.schemas.enrichment}.proposals"
    found = rows(con, f"select * from {proposals} where proposal_id = ?", [wanted])
    if not found:
        found = rows(con, f"select * from {proposals} where substr(proposal_id, 1, length(?)) = ?", [wanted, wanted])
    if not found:
        return None, f"No proposal {wanted} exists; `dmf proposals list --all` shows every id."
    if len(found) > 1:
        return None, f"{wanted} matches {len(found)} proposals; give more characters of the id."
    return found[0], ""


def show_proposal(settings: Settings, proposal_id_or_prefix: str) -> dict[str, Any] | None:
    """One proposal with its decision history, or None when it does not exist."""
    opened, _ = open_warehouse(settings)
    if opened is None:
        return None
    try:
        with opened as con:
            store.ensure_schema(con)
            row, _ = _resolve(con, proposal_id_or_prefix)
            if row is None:
                return None
            row["decisions"] = rows(
                con,
                f"select * from {con.schemas.enrichment}.proposal_decisions where proposal_id = ? order by decided_at",
                [row["proposal_id"]],
            )
    except warehouse.Error:
        return None
    return _with_age(row, datetime.now(SEOUL).date())


@dataclass(frozen=True)
class Decision:
    ok: bool
    message: str
    proposal_id: str | None = None
    status: str | None = None


def decide(settings: Settings, proposal_id_or_prefix: str, decision: str, by: str, note: str = "") -> Decision:
    """Record a human decision (accept | reject). Applies nothing: the seed is edited by hand."""
    final = DECISIONS.get((decision or "").strip().lower())
    if final is None:
        return Decision(False, "The decision must be accept or reject.")
    who = (by or "").strip()
    if not who:
        return Decision(False, "Say who decides (for the audit trail), e.g. --by your.name.")
    opened, problem = open_warehouse(settings)
    if opened is None:
        return Decision(False, problem)
    now = datetime.now(UTC)
    try:
        with opened as con:
            store.ensure_schema(con)
            row, why = _resolve(con, proposal_id_or_prefix)
            if row is None:
                return Decision(False, why)
            if row["status"] != "PENDING":
                when = row["decided_at"].astimezone(SEOUL).strftime("%Y-%m-%d") if row.get("decided_at") else "earlier"
                return Decision(
                    False,
                    f"Proposal {row['proposal_id']} was already {row['status']} "
                    f"by {row.get('decided_by') or 'someone'} on {when}; nothing changed.",
                    row["proposal_id"],
                    row["status"],
                )
            with con.transaction():
                con.execute(
                    f"""update {con.schemas.enrichment}.proposals set status = ?, decided_at = ?, decided_by = ?,
                               decision_note = ? where proposal_id = ?""",
                    [final, now, who[:120], (note or "")[:1000] or None, row["proposal_id"]],
                )
                con.execute(
                    f"""insert into {con.schemas.enrichment}.proposal_decisions
                               (decision_id, proposal_id, decision, previous_status, decided_by, decided_at, note)
                               values (?, ?, ?, ?, ?, ?, ?)""",
                    [
                        f"d-{now:%Y%m%d%H%M%S}-{secrets.token_hex(3)}",
                        row["proposal_id"],
                        final,
                        row["status"],
                        who[:120],
                        now,
                        (note or "")[:1000] or None,
                    ],
                )
    except warehouse.Error as exc:
        return Decision(False, f"The decision could not be recorded ({str(exc)[:120]}).")
    _mark_file(row, final)
    follow_up = (
        " Now add the alias to the ingredient-alias seed by hand and run `dmf build`." if final == "ACCEPTED" else ""
    )
    return Decision(
        True, f"Proposal {row['proposal_id']} {final.lower()} by {who}.{follow_up}", row["proposal_id"], final
    )


def _mark_file(row: dict[str, Any], final: str) -> None:
    path = Path(row["source_file"]) if row.get("source_file") else None
    if path is None or not path.is_file():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data.get("items") or []:
            if isinstance(item, dict) and item.get("proposal_id") == row["proposal_id"]:
                item["decision"] = final
        data["status"] = (
            "PENDING"
            if any(isinstance(i, dict) and i.get("decision") == "PENDING" for i in data.get("items") or [])
            else "DECIDED"
        )
        _write_json(path, data)
    except (OSError, ValueError, AttributeError):
        pass
