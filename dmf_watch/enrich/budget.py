"""Runaway protection: daily token and call caps, a result cache, a circuit breaker.

All three live in small JSON files under the state directory, so they work even when the
warehouse is unavailable, and none of them can stop the pipeline: an unreadable or corrupt
file is replaced by a fresh one (the `enrichment.agy_calls` table stays the audit record).
Writes go through a temp file and `os.replace`, so a crash never leaves half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dmf_watch.core.config import SEOUL


def _now() -> datetime:
    return datetime.now(UTC)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json(path: Path, data: Mapping[str, Any]) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
        os.replace(tmp, path)
        return True
    except OSError:
        return False


def _int(value: Any) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


class TokenBudget:
    """Per-day usage (Asia/Seoul day) in `agy_budget.json`; the caps are checked before a call.

    The check uses what was already spent, so one call may overshoot the token cap by its own
    size; the next one is refused. That is the accepted trade-off: the caps stop a runaway, they
    do not ration tokens.
    """

    def __init__(self, path: Path, token_cap: int, call_cap: int, clock: Callable[[], datetime] = _now) -> None:
        self.path = path
        self.token_cap = max(0, int(token_cap))
        self.call_cap = max(0, int(call_cap))
        self.clock = clock

    def _today(self) -> str:
        return self.clock().astimezone(SEOUL).date().isoformat()

    def state(self) -> dict[str, Any]:
        today = self._today()
        raw = _read_json(self.path)
        if raw is None or raw.get("day") != today:
            return {"day": today, "calls": 0, "tokens": 0, "by_purpose": {}}
        by_purpose = raw.get("by_purpose") if isinstance(raw.get("by_purpose"), dict) else {}
        return {
            "day": today,
            "calls": _int(raw.get("calls")),
            "tokens": _int(raw.get("tokens")),
            "by_purpose": {
                str(k): {"calls": _int((v or {}).get("calls")), "tokens": _int((v or {}).get("tokens"))}
                for k, v in by_purpose.items()
                if isinstance(v, dict)
            },
        }

    def check(self) -> tuple[bool, str, str]:
        """(allowed, reason, detail) with reason 'call_cap' or 'token_cap' when refused."""
        st = self.state()
        if self.call_cap and st["calls"] >= self.call_cap:
            return False, "call_cap", f"{st['calls']} agy calls today, cap {self.call_cap}"
        if self.token_cap and st["tokens"] >= self.token_cap:
            return False, "token_cap", f"{st['tokens']} tokens today, cap {self.token_cap}"
        return True, "", ""

    def record(self, purpose: str, tokens: int) -> None:
        st = self.state()
        st["calls"] += 1
        st["tokens"] += _int(tokens)
        slot = st["by_purpose"].setdefault(purpose, {"calls": 0, "tokens": 0})
        slot["calls"] += 1
        slot["tokens"] += _int(tokens)
        st["updated_at"] = self.clock().astimezone(SEOUL).isoformat(timespec="seconds")
        _write_json(self.path, st)


class ResultCache:
    """Validated answers by sha256(purpose, prompt identity, model, effort, schema)."""

    def __init__(self, directory: Path, ttl_seconds: int) -> None:
        self.directory = directory
        self.ttl = max(0, int(ttl_seconds))

    @staticmethod
    def key(purpose: str, prompt_identity: str, model: str, effort: str, schema_sha: str) -> str:
        digest = hashlib.sha256()
        for part in (purpose, prompt_identity, model, effort, schema_sha):
            digest.update(part.encode("utf-8", errors="replace"))
            digest.update(b"\x1f")
        return digest.hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        if self.ttl <= 0:
            return None
        path = self.directory / (key + ".json")
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            return None
        if age > self.ttl:
            return None
        return _read_json(path)

    def put(self, key: str, obj: Mapping[str, Any]) -> None:
        if self.ttl > 0:
            _write_json(self.directory / (key + ".json"), obj)


CLOSED, OPEN, HALF_OPEN = "CLOSED", "OPEN", "HALF_OPEN"


@dataclass(frozen=True)
class CircuitState:
    state: str = CLOSED
    failures: int = 0
    opened_at: str | None = None
    last_error_kind: str | None = None


class CircuitBreaker:
    """Three states: `threshold` consecutive failures open it for `open_hours`;
    a quota failure opens it at once; after the cool-down one trial call is let through
    (HALF_OPEN) and its result closes or re-opens the breaker."""

    def __init__(
        self, path: Path, threshold: int = 3, open_hours: float = 24.0, clock: Callable[[], datetime] = _now
    ) -> None:
        self.path = path
        self.threshold = max(1, int(threshold))
        self.open_for = timedelta(hours=float(open_hours))
        self.clock = clock

    def read(self) -> CircuitState:
        raw = _read_json(self.path) or {}
        state = raw.get("state") if raw.get("state") in (CLOSED, OPEN, HALF_OPEN) else CLOSED
        opened = raw.get("opened_at") if isinstance(raw.get("opened_at"), str) else None
        kind = raw.get("last_error_kind") if isinstance(raw.get("last_error_kind"), str) else None
        return CircuitState(state, _int(raw.get("failures")), opened, kind)

    def _write(self, st: CircuitState) -> None:
        _write_json(
            self.path,
            {
                "state": st.state,
                "failures": st.failures,
                "opened_at": st.opened_at,
                "last_error_kind": st.last_error_kind,
                "updated_at": self.clock().isoformat(timespec="seconds"),
            },
        )

    def _opened(self, st: CircuitState) -> datetime | None:
        try:
            return datetime.fromisoformat(st.opened_at) if st.opened_at else None
        except ValueError:
            return None

    def peek(self) -> tuple[bool, str]:
        """Would a call be let through now? Changes nothing (for `dmf doctor`)."""
        st = self.read()
        if st.state != OPEN:
            return True, ""
        opened = self._opened(st)
        if opened is not None and self.clock() < opened + self.open_for:
            until = (opened + self.open_for).astimezone(SEOUL).strftime("%Y-%m-%d %H:%M")
            return False, f"circuit open after {st.last_error_kind or 'failures'} until {until} KST"
        return True, "cool-down over; the next call is a trial"

    def allow(self) -> tuple[bool, str]:
        st = self.read()
        if st.state == CLOSED:
            return True, ""
        if st.state == HALF_OPEN:
            return True, "half-open trial"
        opened = self._opened(st)
        if opened is not None and self.clock() < opened + self.open_for:
            until = (opened + self.open_for).astimezone(SEOUL).strftime("%Y-%m-%d %H:%M")
            return False, f"circuit open after {st.last_error_kind or 'failures'} until {until} KST"
        self._write(CircuitState(HALF_OPEN, st.failures, st.opened_at, st.last_error_kind))
        return True, "half-open trial"

    def record_success(self) -> None:
        if self.read() != CircuitState():
            self._write(CircuitState())

    def record_failure(self, kind: str) -> None:
        st = self.read()
        failures = st.failures + 1
        now = self.clock().isoformat(timespec="seconds")
        if kind == "quota" or st.state == HALF_OPEN or failures >= self.threshold:
            self._write(CircuitState(OPEN, failures, now, kind))
        else:
            self._write(CircuitState(CLOSED, failures, None, kind))

    def reset(self) -> None:
        self._write(CircuitState())
