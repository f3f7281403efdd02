"""Test helpers for dmf_watch/enrich/: settings pointing at a temp warehouse, contract-shaped marts, and
the fake agy. The real marts are built by dbt; these tables carry only the contract columns."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb

from dmf_watch.core.config import PROJECT_DIR, Settings
from support.mart_contracts import create_mart_tables
from support.model_sql import build_day_decisions

FAKE_AGY = Path(__file__).resolve().parent / "agy"
REAL_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mfds_real"

# The marts the enrich tests fill, created from their dbt contracts (tests/mart_contracts.py).
MARTS = [
    "dmf_loads",
    "dmf_events",
    "dmf_event_field_changes",
    "dmf_signals",
    "dmf_watchlist_unmatched",
    "dmf_daily_summary",
    "dmf_registrations",  # empty: read by the weekly models (rpt_weekly_single_source_changes)
]
RANK = {"CRITICAL": 1, "HIGH": 2, "MEDIUM": 3, "INFO": 4, "COSMETIC": 5}


def make_settings(tmp_path: Path, binary: Path | None = FAKE_AGY, config: str | None = "") -> Settings:
    """Settings for a temp warehouse and state dir. `config` is written to <state>/agy.toml
    ([enrich] keys); by default it removes the retry back-off so tests stay fast."""
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    body = "[enrich]\nretry_backoff_seconds = 0\n" + (config or "")
    if config is not None:
        (state / "agy.toml").write_text(body, encoding="utf-8")
    return Settings(
        project_dir=PROJECT_DIR,
        duckdb_path=tmp_path / "dmf.duckdb",
        reports_dir=tmp_path / "reports",
        state_dir=state,
        api_base_url="http://127.0.0.1:9",
        agy_binary=str(binary) if binary else None,
    )


def fake_env(monkeypatch, tmp_path: Path, mode: str = "ok", **extra: str) -> Path:
    log = tmp_path / "fake_agy_calls.jsonl"
    monkeypatch.setenv("FAKE_AGY_MODE", mode)
    monkeypatch.setenv("FAKE_AGY_LOG", str(log))
    monkeypatch.delenv("DMF_AI_DISABLED", raising=False)
    for key, value in extra.items():
        monkeypatch.setenv(key, value)
    return log


def fake_calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def real_records(limit: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in ("sample_2026-10-08.jsonl", "tail_B_2026-10-08.jsonl", "tail_A_2026-09-23.jsonl"):
        path = REAL_DATA / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out[:limit] if limit else out


def event_from_record(
    rec: dict[str, Any], as_of: date, event_type: str, severity: str, on_watchlist: bool = False, index: int = 0
) -> dict[str, Any]:
    key_src = "|".join(str(rec.get(k) or "") for k in ("DMF_PERMIT_NO", "INGR_KOR_NAME", "ENTP_NAME", "MNFCTR_NAME"))
    dmf_key = rec.get("DMF_PERMIT_NO") or ("nokey-" + hashlib.sha1(f"{key_src}{index}".encode()).hexdigest()[:10])
    return {
        "event_id": f"{as_of}:{dmf_key}:{index}",
        "as_of_date": as_of,
        "load_id": f"L{as_of:%Y%m%d}",
        "dmf_key": dmf_key,
        "permit_no": rec.get("DMF_PERMIT_NO"),
        "event_type": event_type,
        "severity": severity,
        "severity_rank": RANK[severity],
        "rule_priority": 10,
        "on_watchlist": on_watchlist,
        "watch_terms": None,
        "ingredient_name": rec.get("INGR_KOR_NAME"),
        "applicant": rec.get("ENTP_NAME"),
        "applicant_bizrno": rec.get("BIZRNO"),
        "manufacturer": rec.get("MNFCTR_NAME"),
        "manufacture_place": rec.get("MNFCTR_PLACE"),
        "countries": rec.get("MANUF_COUNTRY_CODE_NM"),
        "permit_date": None,
        "notice_code": rec.get("NOTICE_CODE"),
        "changed_fields": "manufacturer" if event_type == "CHANGED" else None,
        "change_kind": "substantive" if event_type == "CHANGED" else None,
    }


def sample_events(as_of: date, n: int = 5) -> list[dict[str, Any]]:
    recs = real_records()
    kinds = [("WITHDRAWN", "HIGH"), ("CHANGED", "MEDIUM"), ("NEW", "INFO"), ("CHANGED", "COSMETIC"), ("NEW", "MEDIUM")]
    events = []
    seen = set()
    for i, rec in enumerate(recs):
        if len(events) >= n:
            break
        et, sev = kinds[len(events) % len(kinds)]
        ev = event_from_record(rec, as_of, et, sev, on_watchlist=(len(events) == 0), index=i)
        if ev["dmf_key"] in seen:
            continue
        seen.add(ev["dmf_key"])
        events.append(ev)
    return events


class Marts:
    """Creates the contract marts in a DuckDB file and adds days to them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with duckdb.connect(str(path)) as con:
            create_mart_tables(con, MARTS)

    def _insert(self, con, table: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        cols = list(rows[0])
        con.executemany(
            f"insert into marts.{table} ({', '.join(cols)}) values ({', '.join('?' for _ in cols)})",
            [[r.get(c) for c in cols] for r in rows],
        )

    def add_day(
        self,
        as_of: date,
        events: list[dict[str, Any]] | None = None,
        signals: list[dict[str, Any]] | None = None,
        unmatched: list[dict[str, Any]] | None = None,
        changes: list[dict[str, Any]] | None = None,
        verdict: str = "accepted",
    ) -> None:
        events = events or []
        signals = signals or []
        load_id = f"L{as_of:%Y%m%d}"
        finished = datetime(as_of.year, as_of.month, as_of.day, 1, 0, tzinfo=UTC)
        if changes is None:
            changes = [
                {
                    "as_of_date": as_of,
                    "dmf_key": e["dmf_key"],
                    "permit_no": e["permit_no"],
                    "field_name": "manufacturer",
                    "before_value": "Old Pharma Co., Ltd.",
                    "after_value": e["manufacturer"],
                    "change_kind": "substantive",
                    "change_detail": None,
                    "severity": e["severity"],
                    "severity_rank": e["severity_rank"],
                    "on_watchlist": e["on_watchlist"],
                }
                for e in events
                if e["event_type"] == "CHANGED"
            ]

        def count(pred):
            return sum(1 for e in events if pred(e))

        with duckdb.connect(str(self.path)) as con:
            self._insert(
                con,
                "dmf_loads",
                [
                    {
                        "load_id": load_id,
                        "as_of_date": as_of,
                        "verdict": verdict,
                        "reason": None if verdict == "accepted" else "totalCount dropped below 97%",
                        "is_baseline": False,
                        "total_count": 9200,
                        "fetched_count": 9200,
                        "distinct_count": 9200,
                        "duplicate_count": 0,
                        "pages": 19,
                        "requests": 19,
                        "retries": 0,
                        "duration_s": 40.0,
                        "started_at": finished - timedelta(minutes=1),
                        "finished_at": finished,
                        "rejected_gates": None if verdict == "accepted" else "total_count_drop",
                        "fetch_status": "complete",
                        "load_status": "accepted" if verdict == "accepted" else "rejected_by_gate",
                    }
                ],
            )
            build_day_decisions(con)  # which load decides the day: the mart's own SQL
            self._insert(
                con,
                "dmf_daily_summary",
                [
                    {
                        "as_of_date": as_of,
                        "load_id": load_id,
                        "verdict": verdict,
                        "reason": None,
                        "is_baseline": False,
                        "registry_count": 9200,
                        "new_count": count(lambda e: e["event_type"] == "NEW"),
                        "changed_count": count(lambda e: e["event_type"] == "CHANGED"),
                        "withdrawn_count": count(lambda e: e["event_type"] == "WITHDRAWN"),
                        "event_count": len(events),
                        "critical_count": count(lambda e: e["severity"] == "CRITICAL"),
                        "high_count": count(lambda e: e["severity"] == "HIGH"),
                        "medium_count": count(lambda e: e["severity"] == "MEDIUM"),
                        "info_count": count(lambda e: e["severity"] == "INFO"),
                        "cosmetic_count": count(lambda e: e["severity"] == "COSMETIC"),
                        "watchlist_hit_count": count(lambda e: e["on_watchlist"]),
                        "fired_signal_count": sum(1 for s in signals if s.get("fired")),
                        "fired_gate_count": sum(1 for s in signals if s.get("fired") and s.get("is_gate")),
                    }
                ],
            )
            self._insert(con, "dmf_events", events)
            self._insert(con, "dmf_event_field_changes", changes)
            self._insert(con, "dmf_signals", [dict({"as_of_date": as_of, "load_id": load_id}, **s) for s in signals])
            self._insert(con, "dmf_watchlist_unmatched", [dict({"as_of_date": as_of}, **u) for u in (unmatched or [])])


def signal(signal_id: str = "withdrawn_burst", fired: bool = True, is_gate: bool = False) -> dict[str, Any]:
    return {
        "signal_id": signal_id,
        "is_gate": is_gate,
        "fired": fired,
        "severity": "HIGH",
        "observed": 47.0,
        "baseline": 6.0,
        "baseline_text": "최근 30일 최댓값 6",
        "window_text": "2026-09-08 ~ 2026-10-08",
        "context": json.dumps(
            {
                "top_applicants": [["(주)한국유나이티드제약", 21]],
                "top_groups": [["209-J", 33]],
                "date_spread": {"2026-10": 47},
            },
            ensure_ascii=False,
        ),
        "description": "WITHDRAWN above the 30-day maximum",
    }


def unmatched_term(
    term: str = "Formoterol Fumarate",
    candidates: tuple[str, ...] = ("포르모테롤푸마르산염수화물", "포르모테롤푸마르산염"),
) -> dict[str, Any]:
    return {
        "watch_term": term,
        "term_kind": "ingredient",
        "unmatched_reason": "never_matched",
        "candidates": json.dumps(list(candidates), ensure_ascii=False),
    }


def query(settings: Settings, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(str(settings.duckdb_path)) as con:
        return con.execute(sql, params or []).fetchall()
