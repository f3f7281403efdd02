"""The messages, in Korean: the daily summary, the weekly note, alerts and the test message.

Every fact comes from the warehouse (marts, the AI run of the day) and is quoted, never
computed here. Each message has a plain-text body for chat and an HTML body for mail; every
value is HTML-escaped, and AI text is labelled as AI.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from dmf_watch.core.warehouse import Connection, table_exists
from dmf_watch.notify.policy import DayFacts, day_level, read_facts
from dmf_watch.reports.actions import Action, day_actions

MAX_ACTIONS = 30
LEVEL_TAG = {"CRITICAL": "[긴급]", "WARN": "[경고]", "INFO": ""}
APPRISE_TYPE = {"INFO": "info", "WARN": "warning", "CRITICAL": "failure"}
VERDICT_WORD = {"accepted": "적재 반영", "rejected": "적재 거부", "missing": "적재 기록 없음"}


@dataclass(frozen=True)
class Message:
    kind: str  # daily | weekly | alert | test
    key: str  # what makes it "the same message" (idempotency)
    level: str
    title: str
    text: str
    html: str
    attachments: tuple[Path, ...] = ()
    alert_kind: str | None = None
    notify_type: str = "info"
    extra: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None  # a daily summary narrowed to one owner's items

    def suits(self, owner: str | None) -> bool:
        """Whether a destination serving `owner` (None: everything) gets this message: the
        daily summary is made once for everyone and once per owner; the rest is shared."""
        return self.kind != "daily" or self.owner == owner


def _fetch_one(con, sql: str, params: list[Any]) -> dict[str, Any] | None:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    row = cur.fetchone()
    return dict(zip(names, row)) if row else None


def _ai_headline(con, as_of: date) -> str | None:
    if not table_exists(con, con.schemas.enrichment, "enrichment_run"):
        return None
    row = con.execute(
        f"""select headline from {con.schemas.enrichment}.enrichment_run
                         where as_of_date = ? and kind = 'daily' and status = 'OK'
                         order by created_at desc, run_id desc limit 1""",
        [as_of],
    ).fetchone()
    return " ".join(str(row[0]).split()) if row and row[0] else None


def _html_doc(title: str, parts: list[str]) -> str:
    return (
        f'<html><body style="font-family: sans-serif"><h2>{html.escape(title)}</h2>' + "".join(parts) + "</body></html>"
    )


def _quarantine_line(con, as_of: date) -> str | None:
    """The records the day held out of the diff (signal records_quarantined: what was wrong, one
    line), or None when it held none."""
    marts = con.schemas.marts
    if not table_exists(con, marts, "dmf_signals"):
        return None
    row = _fetch_one(
        con,
        f"select baseline_text from {marts}.dmf_signals where as_of_date = ? and signal_id = 'records_quarantined' and fired",
        [as_of],
    )
    return f"격리(무결성신호 시트): {row['baseline_text']}" if row else None


def _counts_line(summary: dict[str, Any]) -> str:
    return (
        f"신규 {summary.get('new_count') or 0} · 변경 {summary.get('changed_count') or 0} · "
        f"취하 {summary.get('withdrawn_count') or 0} · 긴급 {summary.get('critical_count') or 0} · "
        f"관심목록 {summary.get('watchlist_hit_count') or 0}"
    )


def daily_message(
    con: Connection,
    as_of: date,
    report: Path | None,
    empty_day: str = "line",
    owner: str | None = None,
    attach: bool = True,
) -> Message | None:
    """The day's summary, or None when there is nothing to say (`empty_day = "none"`). With an
    `owner`, the summary of that owner's items only, and None on an accepted day without any.
    The report is named, and attached when `attach` (it was rendered from this warehouse)."""
    facts: DayFacts = read_facts(con, as_of)
    if facts.verdict == "missing":
        return None  # no load for the day: there is no summary to give (a failed run alerts)
    marts = con.schemas.marts
    summary = (
        _fetch_one(con, f"select * from {marts}.dmf_daily_summary where as_of_date = ?", [as_of])
        if table_exists(con, marts, "dmf_daily_summary")
        else None
    ) or {}
    actions: list[Action] = day_actions(con, as_of) if summary else []
    if owner is not None:
        if facts.verdict != "accepted" and not _rejection_alerted(con, as_of):
            return None  # a rejection streak reaches an owner once, on the day its alert was raised
        mine = [a for a in actions if a.owned_by(owner)]
        return _owner_message(facts, summary, mine, as_of, report, owner, attach)
    level = day_level(facts, int(summary.get("critical_count") or 0))
    headline = _ai_headline(con, as_of) if facts.verdict == "accepted" else None
    attachments = (report,) if attach and report is not None and report.is_file() else ()
    report_line = f"리포트: {report.name}" + (" (메일에 첨부)" if attachments else "") if report else None
    tag = LEVEL_TAG[level]
    verdict_word = VERDICT_WORD.get(facts.verdict, facts.verdict)

    if (
        facts.verdict == "accepted"
        and not summary.get("is_baseline")
        and not summary.get("event_count")
        and not facts.action_required
    ):
        if empty_day == "none":
            return None
        line = f"DMF Watch {as_of}: 변경 없음 ({verdict_word}, 등록 {summary.get('registry_count') or 0}건)."
        quarantined = _quarantine_line(con, as_of)
        line += f"\n{quarantined}" if quarantined else ""
        return Message(
            "daily",
            f"daily:{as_of}",
            level,
            f"[DMF Watch] {as_of} 변경 없음",
            line,
            _html_doc(f"DMF Watch {as_of}", [f"<p>{html.escape(line)}</p>"]),
            attachments,
            notify_type=APPRISE_TYPE[level],
        )

    title = f"[DMF Watch]{tag} {as_of} 일일 요약 — {verdict_word}"
    if facts.verdict == "accepted" and summary.get("is_baseline"):
        title += ": 기준선 설정"
    elif facts.verdict == "accepted" and summary:
        title += f": {_counts_line(summary)}"
    lines = [f"DMF Watch {as_of} 일일 요약 ({verdict_word})"]
    parts: list[str] = []
    if facts.verdict != "accepted":
        note = f"적재가 거부되어 이벤트를 발행하지 않았습니다. 사유: {facts.reason or '-'}"
        lines.append(note)
        parts.append(f"<p><b>{html.escape(note)}</b></p>")
    elif summary.get("is_baseline"):
        note = "기준선을 설정한 날입니다: 비교할 이전 적재가 없어 이벤트가 없습니다."
        lines.append(note)
        parts.append(f"<p>{html.escape(note)}</p>")
    else:
        counts = _counts_line(summary)
        lines.append(counts)
        parts.append(f"<p>{html.escape(counts)}</p>")
        if actions:
            head = f"조치 목록 (긴급·높음·관심목록 {len(actions)}건):"
            lines.append(head)
            lines += [f"- {a.line}" for a in actions[:MAX_ACTIONS]]
            items = "".join(f"<li>{html.escape(a.line)}</li>" for a in actions[:MAX_ACTIONS])
            if len(actions) > MAX_ACTIONS:
                more = f"외 {len(actions) - MAX_ACTIONS}건 — 리포트를 보세요"
                lines.append(f"- {more}")
                items += f"<li>{html.escape(more)}</li>"
            parts.append(f"<p><b>{html.escape(head)}</b></p><ul>{items}</ul>")
        else:
            note = "조치 목록: 긴급·높음·관심목록 이벤트 없음"
            lines.append(note)
            parts.append(f"<p>{html.escape(note)}</p>")
    quarantined = _quarantine_line(con, as_of) if facts.verdict == "accepted" else None
    if quarantined:
        lines.append(quarantined)
        parts.append(f"<p>{html.escape(quarantined)}</p>")
    if facts.action_required:
        note = "AI 이상 해석: 조치 필요(ACTION_REQUIRED) — 무결성신호 시트를 확인하세요 (AI 생성·참고용)"
        lines.append(note)
        parts.append(f"<p>{html.escape(note)}</p>")
    if headline:
        ai = f"AI 요약 (AI 생성·참고용): {headline}"
        lines.append(ai)
        parts.append(f"<p><i>{html.escape(ai)}</i></p>")
    if report is not None:  # chat gets the name only; mail carries the file itself
        lines.append(f"리포트: {report.name}")
        parts.append(f"<p>{html.escape(report_line or '')}</p>")
    return Message(
        "daily",
        f"daily:{as_of}",
        level,
        title,
        "\n".join(lines),
        _html_doc(title, parts),
        attachments,
        notify_type=APPRISE_TYPE[level],
        extra={"actions": len(actions)},
    )


def _rejection_alerted(con, as_of: date) -> bool:
    """Whether the alert policy raised the `load_rejected` alert on as_of (first day of a streak)."""
    if not table_exists(con, con.schemas.notify, "alerts"):
        return False
    found = con.execute(
        f"select count(*) from {con.schemas.notify}.alerts where as_of_date = ? and kind = 'load_rejected'", [as_of]
    ).fetchone()
    return bool(found and found[0])


def _owner_message(
    facts: DayFacts,
    summary: dict[str, Any],
    actions: list[Action],
    as_of: date,
    report: Path | None,
    owner: str,
    attach: bool,
) -> Message | None:
    """One owner's morning: the day's verdict and the action items of the terms they own, with
    their reasons. Nothing on an accepted day without any; a rejected day's verdict alone."""
    verdict_word = VERDICT_WORD.get(facts.verdict, facts.verdict)
    if facts.verdict == "accepted" and not actions:
        return None
    critical = sum(a.severity == "CRITICAL" for a in actions)
    level = day_level(facts, critical)
    lines = [f"DMF Watch {as_of} 일일 요약 — {owner} 담당 ({verdict_word})"]
    if facts.verdict != "accepted":
        lines.append(f"적재가 거부되어 이벤트를 발행하지 않았습니다. 사유: {facts.reason or '-'}")
        title = f"[DMF Watch]{LEVEL_TAG[level]} {as_of} {owner} 담당 — {verdict_word}"
    else:
        lines.append(f"{owner} 담당 조치 목록 ({len(actions)}건, 전체 등록 {summary.get('registry_count') or 0}건 중):")
        lines += [f"- {a.line}" for a in actions[:MAX_ACTIONS]]
        if len(actions) > MAX_ACTIONS:
            lines.append(f"- 외 {len(actions) - MAX_ACTIONS}건 — 리포트의 조치항목 시트에서 담당으로 거르세요")
        title = f"[DMF Watch]{LEVEL_TAG[level]} {as_of} {owner} 담당 {len(actions)}건"
    attachments = (report,) if attach and report is not None and report.is_file() else ()
    if report is not None:
        lines.append(f"리포트: {report.name}")
    parts = [f"<p>{html.escape(lines[0])}</p>", f"<p><b>{html.escape(lines[1])}</b></p>"]
    items = [line[2:] for line in lines[2:] if line.startswith("- ")]
    if items:
        parts.append("<ul>" + "".join(f"<li>{html.escape(item)}</li>" for item in items) + "</ul>")
    if report is not None:
        parts.append(f"<p>{html.escape(lines[-1])}</p>")
    return Message(
        "daily",
        f"daily:{as_of}:owner:{owner}",
        level,
        title,
        "\n".join(lines),
        _html_doc(title, parts),
        attachments,
        notify_type=APPRISE_TYPE[level],
        extra={"actions": len(actions)},
        owner=owner,
    )


WEEKLY_METRICS = {
    "new_count": "신규",
    "changed_count": "변경",
    "withdrawn_count": "취하",
    "critical_count": "긴급",
    "watchlist_hit_count": "관심목록",
    "rejected_load_days": "거부된 적재일",
}


def weekly_message(con: Connection, as_of: date, report: Path | None, attach: bool = True) -> Message:
    rows = []
    marts = con.schemas.marts
    if table_exists(con, marts, "rpt_weekly_totals"):
        cur = con.execute(
            f"""select metric, this_week, previous_week, period_start, period_end
                             from {marts}.rpt_weekly_totals where report_date = ? order by metric_order""",
            [as_of],
        )
        rows = cur.fetchall()
    period = f"{rows[0][3]} ~ {rows[0][4]}" if rows else f"{as_of} 이전 7일"
    title = f"[DMF Watch] 주간 리포트 {period}"
    figures = [
        f"{WEEKLY_METRICS[m]} {this or 0} (전주 {prev or 0})" for m, this, prev, _, _ in rows if m in WEEKLY_METRICS
    ]
    lines = [f"DMF Watch 주간 리포트 ({period})", " · ".join(figures) or "집계 없음"]
    attachments = (report,) if attach and report is not None and report.is_file() else ()
    html_lines = list(lines[1:])
    if report is not None:
        lines.append(f"리포트: {report.name}")
        html_lines.append(f"리포트: {report.name}" + (" (메일에 첨부)" if attachments else ""))
    return Message(
        "weekly",
        f"weekly:{as_of}",
        "INFO",
        title,
        "\n".join(lines),
        _html_doc(title, [f"<p>{html.escape(line)}</p>" for line in html_lines]),
        attachments,
    )


def alert_message(alert: dict[str, Any]) -> Message:
    kind = alert["kind"]
    notify_type = "success" if kind == "recovered" else APPRISE_TYPE.get(alert["level"], "info")
    return Message(
        "alert",
        alert["alert_id"],
        alert["level"],
        alert["title"],
        f"{alert['title']}\n{alert['body']}",
        _html_doc(alert["title"], [f"<p>{html.escape(alert['body'])}</p>"]),
        alert_kind=kind,
        notify_type=notify_type,
    )


def test_message(name: str, stamp: str, owner: str | None = None) -> Message:
    title = "[DMF Watch] 시험 메시지"
    serves = f"{owner} 담당 항목만" if owner else "모든 항목"
    text = f"DMF Watch 시험 메시지: 대상 '{name}' 으로 알림이 전달됩니다({serves}). ({stamp})"
    return Message("test", f"test:{stamp}", "INFO", title, text, _html_doc(title, [f"<p>{html.escape(text)}</p>"]))
