"""The operations sheet: load metrics and AI usage (shared with the weekly workbook), then, in the
daily workbook, the alerts raised and the messages delivered."""

from __future__ import annotations

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import (
    AGY_STATUS_LABEL,
    ALERT_KIND_LABEL,
    ALERT_LEVEL_LABEL,
    DESTINATION_LABEL,
    MESSAGE_KIND_LABEL,
    OUTCOME_LABEL,
    SERVICE_LABEL,
    VERDICT_LABEL,
    Col,
    Formats,
    back_link,
    label,
    write_sheet_title,
    write_table,
)
from dmf_watch.reports.sheets import DASHBOARD

LOAD_COLS = [
    Col("기준일", "as_of_date", "date", 11),
    Col("적재 ID", "load_id", "text", 24),
    Col("판정", "verdict_label", "text", 7),
    Col("기준선", "baseline_label", "text", 7),
    Col("사유", "reason", "wrap", 30),
    Col("거부 게이트", "rejected_gates", "text", 16),
    Col("API 총건수", "total_count", "int", 10),
    Col("수신 건수", "fetched_count", "int", 10),
    Col("고유 건수", "distinct_count", "int", 10),
    Col("중복", "duplicate_count", "int", 7),
    Col("페이지", "pages", "int", 7),
    Col("요청", "requests", "int", 7),
    Col("재시도", "retries", "int", 7),
    Col("소요(초)", "duration_s", "float", 9),
    Col("시작(KST)", "started_at", "datetime", 16),
    Col("종료(KST)", "finished_at", "datetime", 16),
]
AI_TOTAL_COLS = [
    Col("호출 수", "calls", "int"),
    Col("실패", "failed_calls", "int"),
    Col("입력 토큰", "input_tokens", "int"),
    Col("출력 토큰", "output_tokens", "int"),
    Col("캐시 토큰", "cached_tokens", "int"),
    Col("사고 토큰", "thinking_tokens", "int"),
    Col("총 토큰", "total_tokens", "int"),
    Col("소요(초)", "duration_s", "float"),
]
CALL_COLS = [
    Col("기준일", "as_of_date", "date"),
    Col("호출 ID", "call_id", "text"),
    Col("시작(KST)", "started_at", "datetime"),
    Col("상태", "status", "text"),
    Col("오류 종류", "error_kind", "text"),
    Col("모델", "model", "text"),
    Col("입력 토큰", "input_tokens", "int"),
    Col("출력 토큰", "output_tokens", "int"),
    Col("캐시 토큰", "cached_tokens", "int"),
    Col("사고 토큰", "thinking_tokens", "int"),
    Col("총 토큰", "total_tokens", "int"),
    Col("소요(초)", "duration_s", "float"),
    Col("스키마 유효", "schema_valid", "int"),
]
ALERT_COLS = [
    Col("기준일", "as_of_date", "date"),
    Col("발생(KST)", "raised_at", "datetime"),
    Col("수준", "level", "text"),
    Col("종류", "kind", "text"),
    Col("내용", "title", "text"),
]
DELIVERY_COLS = [
    Col("기준일", "as_of_date", "date"),
    Col("전달 시각(KST)", "delivered_at", "datetime"),
    Col("수준", "level", "text"),
    Col("메시지", "message_kind", "text"),
    Col("종류", "what", "text"),
    Col("대상(이름)", "destination", "text"),
    Col("서비스", "service", "text"),
    Col("결과", "outcome", "text"),
    Col("시도", "attempts", "int"),
    Col("오류", "error", "text"),
]


def _load_rows(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        row = dict(row)
        row["verdict_label"] = label(VERDICT_LABEL, row.get("verdict"))
        row["baseline_label"] = "예" if row.get("is_baseline") else None
        out.append(row)
    return out


def _labelled(rows: list[dict], **labels: dict[str, str]) -> list[dict]:
    """Rows with their codes replaced by Korean labels (an unknown code shows as itself)."""
    out = []
    for row in rows:
        row = dict(row)
        for key, mapping in labels.items():
            row[key] = label(mapping, row.get(key))
        out.append(row)
    return out


def write_operations(
    ws: Worksheet,
    f: Formats,
    title: str,
    loads: list[dict],
    calls: list[dict],
    totals: dict,
    ai_tables: bool,
    dashboard: str = DASHBOARD,
) -> int:
    """Load metrics and AI usage; shared with the weekly report (whose dashboard sheet has
    another name, hence `dashboard`). Returns the next free row."""
    top = write_sheet_title(
        ws, f, title, "적재 지표는 marts.dmf_loads, AI 사용량은 enrichment.agy_calls 에서 읽습니다."
    )
    back_link(ws, f, 4, dashboard)
    r = write_table(ws, f, top, LOAD_COLS, _load_rows(loads))
    r += 2
    ws.write_string(
        r, 0, "AI(agy) 호출과 토큰 — 보고서에 쓰인 답의 호출만 (실패·재시도는 enrichment.agy_calls)", f.section
    )
    r += 1
    r = write_table(ws, f, r, AI_TOTAL_COLS, [totals], main=False)
    if not ai_tables:
        ws.write_string(r, 0, "AI 호출 기록 테이블이 없습니다(AI 단계가 한 번도 실행되지 않음).", f.note)
        r += 1
    r += 1
    calls = _labelled(calls, status=AGY_STATUS_LABEL)
    return write_table(ws, f, r, CALL_COLS, calls, main=False, empty_text="답을 쓴 AI 호출 없음")


def _delivery_what(row: dict) -> str:
    """An alert's kind in Korean; for a summary, whose items it carried (everyone's or one owner's)."""
    what = str(row.get("what") or "")
    if row.get("message_kind") == "alert":
        return label(ALERT_KIND_LABEL, what) or ""
    _, owned, owner = what.partition(":owner:")
    return f"{owner} 담당 항목" if owned else "전체"


def write_daily_operations(ws: Worksheet, f: Formats, data: dict) -> None:
    """The daily workbook's operations sheet: the last 30 days of loads, today's AI usage, and
    the alerts and deliveries of the last 30 days."""
    r = write_operations(
        ws,
        f,
        "운영 — 최근 30일 적재와 오늘의 AI 사용량",
        data["loads"],
        data["ai_calls"],
        data["ai_totals"],
        data["tables"].agy_calls,
    )
    r += 2
    ws.write_string(r, 0, "알림 (최근 30일, 상태가 바뀔 때만 발생)", f.section)
    r = write_table(
        ws,
        f,
        r + 1,
        ALERT_COLS,
        _labelled(data["alerts"], level=ALERT_LEVEL_LABEL, kind=ALERT_KIND_LABEL),
        main=False,
        empty_text="알림 없음",
    )
    r += 2
    ws.write_string(r, 0, "메시지 전달 (대상은 이름만 표시, URL 은 기록하지 않음)", f.section)
    deliveries = _labelled(
        [dict(row, what=_delivery_what(row)) for row in data["deliveries"]],
        level=ALERT_LEVEL_LABEL,
        message_kind=MESSAGE_KIND_LABEL,
        outcome=OUTCOME_LABEL,
        destination=DESTINATION_LABEL,
        service=SERVICE_LABEL,
    )
    write_table(
        ws,
        f,
        r + 1,
        DELIVERY_COLS,
        deliveries,
        main=False,
        empty_text="전달 기록 없음 (설정된 대상이 없으면 보내지 않습니다: DMF_NOTIFY_URLS, dmf_watch/notify/notify.toml)",
    )
