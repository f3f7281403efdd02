"""The alert policy, computed from the warehouse (docs/delivery.md tells readers what each alert means).

Alerts fire when a watched condition changes state, never every day it stays the same:

| condition           | observed from                                   | alert on change              |
|---------------------|-------------------------------------------------|------------------------------|
| `pipeline`          | the day's verdict (marts.dmf_day_decisions) / a failed run | broken: WARN `load_rejected` or `run_failed`; ok again: WARN `recovered` |
| `ai`                | the day's latest daily enrichment run (outcome) | binary_missing INFO, auth WARN, quota INFO (the circuit opens), token_cap INFO; timeout and invalid answers: none |
| `ai_invalid_streak` | invalid AI answers on >= 5 of the last 7 days   | INFO `ai_invalid_streak`, once |
| (per day)           | an anomaly run judged ACTION_REQUIRED           | WARN `ai_action_required`; the day's level goes INFO → WARN; the pipeline never stops |

AI days that say nothing about the AI's health (no changes, disabled, load rejected, circuit
open) leave the `ai` state as it was, so a quota failure followed by "circuit open" days alerts
once. Pending proposals are a badge on the report, never an alert. A day older than the last
evaluated one is not evaluated again: its alerts are history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from dmf_watch.core.warehouse import Connection, table_exists
from dmf_watch.notify import ledger as store
from dmf_watch.reports.layout import load_reason_ko

PIPELINE = "pipeline"
BACKUP = "backup"
BROKEN = "broken"
AI = "ai"
AI_STREAK = "ai_invalid_streak"
AI_ANOMALY = "ai_anomaly"

#: AI outcomes that raise an alert when they start, with the level.
AI_ALERT_LEVEL = {"binary_missing": "INFO", "auth": "WARN", "quota": "INFO", "token_cap": "INFO"}
#: Outcomes that tell nothing about the AI's health: the state stays as it was.
AI_NEUTRAL = frozenset(
    {
        "diff_empty",
        "disabled",
        "load_rejected",
        "no_load",
        "circuit_open",
        "marts_missing",
        "no_signals",
        "call_cap",
        "prompt_guard",
    }
)
#: Outcomes that count as an invalid answer for the 5-of-7-days rule.
AI_INVALID = frozenset({"schema_invalid", "invalid_output", "parse_failed"})
STREAK_DAYS = 7
STREAK_MIN = 5

AI_TEXT = {
    "binary_missing": (
        "AI 요약 중단: agy 미설치",
        "agy 실행 파일을 찾지 못해 AI 요약 없이 리포트를 만들었습니다. "
        "dmf doctor 로 확인하고 DMF_AGY_BINARY 를 설정하세요. 리포트와 이벤트는 정상입니다.",
    ),
    "auth": (
        "AI 요약 중단: agy 재로그인 필요",
        "agy 인증이 만료되었습니다. 배치 계정으로 콘솔 창에서 agy 에 다시 로그인하세요. 리포트와 이벤트는 정상입니다.",
    ),
    "quota": (
        "AI 요약 일시 중지: AI 쿼터 소진",
        "agy 쿼터가 소진되어 서킷이 24시간 열렸습니다. 내일 자동으로 다시 시도합니다. 리포트와 이벤트는 정상입니다.",
    ),
    "token_cap": (
        "AI 요약 생략: 일일 토큰 상한 도달",
        "오늘의 AI 토큰 상한(dmf_watch/enrich/agy.toml)에 도달해 AI 호출을 하지 않았습니다. 리포트와 이벤트는 정상입니다.",
    ),
}


@dataclass(frozen=True)
class DayFacts:
    as_of: date
    verdict: str  # accepted | rejected | missing
    reason: str | None
    ai_outcome: str | None  # ok | a skip_reason | None (no daily run)
    invalid_days: int  # days of the last 7 with an invalid AI answer
    action_required: bool  # an anomaly run of the day judged ACTION_REQUIRED


def _reason_in_korean(reason: str | None, rejected_gates: str | None) -> str | None:
    """A gate's or a failed fetch's reason in the reader's words, the loader's own (English)
    sentence after it for whoever investigates; a person's decision is shown as they wrote it."""
    kind = (reason or "").partition(":")[0].strip()
    if not rejected_gates and kind not in ("incomplete", "failed"):
        return reason
    korean = load_reason_ko(reason, rejected_gates)
    return f"{korean} (원문: {reason})" if reason else korean


def read_facts(con: Connection, as_of: date) -> DayFacts:
    verdict, reason = "missing", "이 날짜의 적재 기록이 없습니다"
    marts = con.schemas.marts
    if table_exists(con, marts, "dmf_day_decisions"):
        row = con.execute(
            f"select verdict, reason, rejected_gates from {marts}.dmf_day_decisions where as_of_date = ?",
            [as_of],
        ).fetchone()
        if row:
            # the reader's words: the kind of failure or the gates in Korean, the loader's own
            # (English) sentence after it for whoever investigates
            verdict, reason = row[0], _reason_in_korean(row[1], row[2])
    ai_outcome, invalid_days, action_required = None, 0, False
    enrichment = con.schemas.enrichment
    if table_exists(con, enrichment, "enrichment_run"):
        row = con.execute(
            f"""select status, skip_reason from {enrichment}.enrichment_run
                             where as_of_date = ? and kind = 'daily'
                             order by created_at desc, run_id desc limit 1""",
            [as_of],
        ).fetchone()
        if row:
            ai_outcome = "ok" if row[0] == "OK" else (row[1] or "failed")
        invalid = ", ".join(f"'{r}'" for r in sorted(AI_INVALID))  # module constants, not input
        found = con.execute(
            f"""
            with ranked as (
                select
                    skip_reason,
                    row_number() over (partition by as_of_date order by created_at desc, run_id desc) as recency
                from {enrichment}.enrichment_run
                where kind = 'daily' and as_of_date between ? and ?
            )
            select count(*) from ranked where recency = 1 and skip_reason in ({invalid})
        """,
            [as_of - timedelta(days=STREAK_DAYS - 1), as_of],
        ).fetchone()
        invalid_days = int(found[0]) if found else 0
        row = con.execute(
            f"""select overall_assessment from {enrichment}.enrichment_run
                             where as_of_date = ? and kind = 'anomaly' and status = 'OK'
                             order by created_at desc, run_id desc limit 1""",
            [as_of],
        ).fetchone()
        action_required = bool(row and row[0] == "ACTION_REQUIRED")
    return DayFacts(as_of, verdict, reason, ai_outcome, invalid_days, action_required)


def make_alert(as_of: date, kind: str, level: str, condition: str, title: str, body: str) -> dict[str, Any]:
    return {
        "alert_id": f"{kind}:{as_of.isoformat()}:{condition}",
        "as_of_date": as_of,
        "raised_at": store.utc_now(),
        "level": level,
        "kind": kind,
        "condition_name": condition,
        "title": f"[DMF Watch] {title} ({as_of.isoformat()})",
        "body": body,
    }


def _transition(con, condition: str, observed: str, as_of: date) -> tuple[bool, str | None, date | None]:
    """Record the observed state; returns (changed, previous state, since) — or (False, ...) when
    the day is older than the last evaluated one (history is not re-judged)."""
    current = store.condition_state(con, condition)
    if current is not None and as_of < current["last_evaluated_date"]:
        return False, current["state"], current["since_date"]
    previous = current["state"] if current else None
    changed = previous != observed
    store.set_condition_state(con, condition, observed, as_of, changed=changed)
    return changed, previous, current["since_date"] if current else None


def broken_state(fault: str | None) -> str:
    """The pipeline's state when broken: a named fault of the warehouse (core/faults.py) is a
    state of its own, so a different fault starts a new streak; any other failure is `broken`."""
    return f"{BROKEN}:{fault}" if fault else BROKEN


def is_broken(state: str | None) -> bool:
    return bool(state) and (state == BROKEN or state.startswith(BROKEN + ":"))


def run_failed_alert(as_of: date, why: str) -> dict[str, Any]:
    return make_alert(
        as_of,
        "run_failed",
        "WARN",
        PIPELINE,
        "경고: 일일 작업 실패",
        f"{as_of} 의 dmf run 이 끝까지 실행되지 못했습니다: "
        f"{why}. 자세한 내용은 state/logs/dmf.log 에 있습니다. "
        "문제가 이어지는 동안에는 다시 알리지 않고, 정상 반영되면 한 번 알려 드립니다.",
    )


def recovered_alert(as_of: date, since: date | None) -> dict[str, Any]:
    return make_alert(
        as_of,
        "recovered",
        "WARN",
        PIPELINE,
        "복구: 적재 정상 반영",
        f"{as_of} 적재가 정상 반영되었습니다. {since} 부터 이어진 문제가 해소되었습니다.",
    )


def evaluate(
    con: Connection, as_of: date, run_error: str | None = None, fault: str | None = None
) -> list[dict[str, Any]]:
    """Raise the day's alerts (stored in the notify schema's alerts) and return the new ones.
    `fault`: the kind of warehouse fault that stopped the run, if it is one (a new streak)."""
    facts = read_facts(con, as_of)
    raised: list[dict[str, Any]] = []

    broken = run_error is not None or facts.verdict != "accepted"
    if facts.verdict == "missing" and run_error is None:
        changed, previous, since = False, None, None  # no load and no run: nothing is known yet
    else:
        observed = broken_state(fault if run_error is not None else None) if broken else "ok"
        changed, previous, since = _transition(con, PIPELINE, observed, as_of)
    if changed and broken:
        if run_error is not None or facts.verdict == "missing":
            raised.append(run_failed_alert(as_of, run_error or facts.reason or ""))
        else:
            raised.append(
                make_alert(
                    as_of,
                    "load_rejected",
                    "WARN",
                    PIPELINE,
                    "경고: 적재 거부 — 발행 없음",
                    f"{as_of} 적재가 거부되어 이벤트를 발행하지 않았습니다. 사유: {facts.reason}. "
                    "다음 정상 적재는 마지막으로 반영된 날과 비교됩니다. 거부가 이어지는 동안에는 "
                    "다시 알리지 않고, 정상 반영되면 한 번 알려 드립니다.",
                )
            )
    elif changed and is_broken(previous):
        raised.append(recovered_alert(as_of, since))

    if facts.ai_outcome is not None and facts.ai_outcome not in AI_NEUTRAL:
        changed, _, _ = _transition(con, AI, facts.ai_outcome, as_of)
        if changed and facts.ai_outcome in AI_ALERT_LEVEL:
            title, body = AI_TEXT[facts.ai_outcome]
            raised.append(
                make_alert(as_of, f"ai_{facts.ai_outcome}", AI_ALERT_LEVEL[facts.ai_outcome], AI, title, body)
            )

    streak = facts.invalid_days >= STREAK_MIN
    changed, _, _ = _transition(con, AI_STREAK, "firing" if streak else "ok", as_of)
    if changed and streak:
        raised.append(
            make_alert(
                as_of,
                "ai_invalid_streak",
                "INFO",
                AI_STREAK,
                "AI 응답 형식 오류가 잦음",
                f"최근 {STREAK_DAYS}일 중 {facts.invalid_days}일 AI 응답이 형식 검증을 통과하지 "
                "못했습니다. 프롬프트와 모델 설정(dmf_watch/enrich/agy.toml)을 점검하세요. "
                "리포트와 이벤트는 정상입니다.",
            )
        )

    if facts.action_required:
        raised.append(
            make_alert(
                as_of,
                "ai_action_required",
                "WARN",
                AI_ANOMALY,
                "AI 이상 해석: 조치 필요",
                "AI 가 오늘의 무결성 신호를 '조치 필요(ACTION_REQUIRED)'로 판단했습니다(AI 생성·참고용). "
                "리포트의 무결성신호 시트를 확인하세요. 파이프라인은 중단되지 않았습니다.",
            )
        )

    return [alert for alert in raised if store.insert_alert(con, alert)]


def day_level(facts: DayFacts, critical_count: int) -> str:
    """CRITICAL with a CRITICAL event; WARN for a rejected day or an ACTION_REQUIRED anomaly."""
    if critical_count > 0:
        return "CRITICAL"
    if facts.verdict != "accepted" or facts.action_required:
        return "WARN"
    return "INFO"
