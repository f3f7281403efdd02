"""The alert ledger in the state folder: alerting that never needs the warehouse.

Why: the `notify` schema lives in the warehouse, so a morning whose fault IS the warehouse (a BI
tool holding the DuckDB file, the server down, a wrong password, a full warehouse disk, a role
that may not write) could neither record nor send its alert. This small JSON file in
DMF_STATE_DIR (`notify_ledger.json`) is written on every notify, whichever path sent it:

- `conditions`: per watched condition (`pipeline`, `backup`) the state last observed, since
  when and on which day; alerts fire on a change of state only, as in the warehouse's
  `notify.alert_state`, so the same fault on consecutive mornings alerts once.
- `alerts` and `deliveries`: the last few alerts raised and delivery tries made without the
  warehouse (destination NAMES and scrubbed errors, never a URL or a password).

It is replaced atomically (a temporary file, fsync, rename), so a crash or a full state disk
leaves the previous ledger whole; a ledger that cannot be read counts as empty.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

log = logging.getLogger("dmf.notify")

FILE_NAME = "notify_ledger.json"
KEEP = 50  # alerts and deliveries kept in the file: it is a ledger of recent faults, not history


def ledger_path(state_dir: Path) -> Path:
    return Path(state_dir) / FILE_NAME


def read(state_dir: Path) -> dict[str, Any]:
    """The ledger, or an empty one when there is none or it cannot be read."""
    try:
        data = json.loads(ledger_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"conditions": {}, "alerts": [], "deliveries": []}
    data.setdefault("conditions", {})
    data.setdefault("alerts", [])
    data.setdefault("deliveries", [])
    return data


def write(state_dir: Path, data: dict[str, Any]) -> bool:
    """Replace the ledger atomically; False (and a log line) when the state disk refuses."""
    data["alerts"] = data.get("alerts", [])[-KEEP:]
    data["deliveries"] = data.get("deliveries", [])[-KEEP:]
    target = ledger_path(state_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=FILE_NAME + ".", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False, indent=1, default=str)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        log.error("the alert ledger %s could not be written: %s", target, error.strerror or error)
        return False
    return True


def condition(data: dict[str, Any], name: str) -> dict[str, Any] | None:
    return data["conditions"].get(name)


def observe(
    data: dict[str, Any], name: str, state: str, as_of: date, detail: str | None = None
) -> tuple[bool, str | None, date | None]:
    """Record the state of `name` observed for `as_of`: (changed, previous state, since). A day
    older than the last one observed is history: it changes nothing."""
    current = condition(data, name)
    if current is not None and as_of.isoformat() < current["last_date"]:
        return False, current["state"], date.fromisoformat(current["since"])
    previous = current["state"] if current else None
    changed = previous != state
    since = as_of.isoformat() if changed or current is None else current["since"]
    data["conditions"][name] = {"state": state, "since": since, "last_date": as_of.isoformat(), "detail": detail}
    return changed, previous, date.fromisoformat(current["since"]) if current else None


def add_alert(data: dict[str, Any], alert: dict[str, Any]) -> None:
    data["alerts"].append(dict(alert))  # dates and times are written as their ISO text


def add_delivery(data: dict[str, Any], delivery: dict[str, Any]) -> None:
    data["deliveries"].append(dict(delivery))


def open_conditions(state_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """The conditions that are not ok now (a failing pipeline, a backup that failed), for
    `dmf status`."""
    return [
        (name, entry)
        for name, entry in sorted(read(state_dir)["conditions"].items())
        if entry.get("state") not in (None, "ok")
    ]
