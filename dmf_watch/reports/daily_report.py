"""The daily xlsx report RA staff open every morning.

`render_daily(settings, as_of)` reads only the warehouse (marts, and the optional enrichment
tables) and writes `dmf_daily_YYYYMMDD.xlsx`. It never calls the API or `agy`, so any past day
can be re-rendered, and the same warehouse gives the same bytes.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from xlsxwriter.format import Format
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.reports import queries as q
from dmf_watch.reports.actions import Action, day_actions, describe_change
from dmf_watch.reports.drift_block import DRIFT_NO_GATE, drift_record, drift_rows
from dmf_watch.reports.history import Timeline, timeline
from dmf_watch.reports.layout import (
    AGY_STATUS_LABEL,
    ALERT_KIND_LABEL,
    ALERT_LEVEL_LABEL,
    CHANGE_KIND_LABEL,
    DESTINATION_LABEL,
    EVENT_LABEL,
    FIELD_LABEL,
    MESSAGE_KIND_LABEL,
    OUTCOME_LABEL,
    SERVICE_LABEL,
    SEVERITY_LABEL,
    SIGNAL_LABEL,
    TERM_KIND_LABEL,
    UNMATCHED_REASON_LABEL,
    YES_NO,
    Col,
    Formats,
    ai_reader_badge,
    back_link,
    context_text,
    field_list_label,
    field_names_in_korean,
    label,
    load_reason_ko,
    merged_text,
    one_page,
    plain_markdown,
    print_setup,
    text_lines,
    watch_matches_label,
    workbook,
    write_sheet_title,
    write_table,
    write_truncation_note,
    write_value,
)

# Sheet names (Korean; ≤ 31 characters, no []:*?/\).
DASHBOARD = "요약"
ACTIONS = "조치항목"
NEW = "신규"
CHANGED = "변경"
WITHDRAWN = "취하"
WATCHLIST = "관심목록"
SIGNALS = "무결성신호"
OPERATIONS = "운영"
PROPOSALS = "AI제안"
HISTORY = "이력"  # the timelines of the day's watchlist registrations
TREND_DATA = "추세데이터"  # hidden: the series behind the dashboard sparklines and chart
SHEETS = (DASHBOARD, ACTIONS, NEW, CHANGED, WITHDRAWN, WATCHLIST, HISTORY, SIGNALS, OPERATIONS, PROPOSALS, TREND_DATA)

AI_COMMENT_HEADER = "AI 코멘트 (AI 생성·참고용)"

#: What to check when a gate gives no guidance of its own (the catalog's what_to_check_ko).
DEFAULT_GUIDANCE = (
    "운영 시트의 적재 지표(요청·재시도·페이지)를 확인하세요. 오늘이면 원인 해소 후 dmf run 으로 "
    "다시 적재하고, 지난 날짜는 다음 정상 적재가 마지막 반영 적재와 비교됩니다."
)


def report_path(reports_dir: Path, as_of: date) -> Path:
    return Path(reports_dir) / f"dmf_daily_{as_of:%Y%m%d}.xlsx"


def render_daily(settings: Settings, as_of: date) -> Path:
    """Render the daily report for `as_of` from the warehouse and return its path."""
    path = report_path(settings.reports_dir, as_of)
    with warehouse.connect(settings, read_only=True) as con:
        data = _collect(con, as_of)
    with workbook(path, as_of, f"DMF 일일 리포트 {as_of:%Y-%m-%d}") as wb:
        _write(wb, as_of, data)
    return path


# --- data -------------------------------------------------------------------------------------


def _collect(con: warehouse.Connection, as_of: date) -> dict[str, Any]:
    """Every SELECT the report needs, run before any cell is written."""
    tables = q.Tables.probe(con)
    summary = q.day_summary(con, as_of)
    load = q.day_load(con, as_of)
    bounds = q.week_bounds(con, as_of)
    verdict = (summary or load or {}).get("verdict")
    load_id = (summary or load or {}).get("load_id")
    publishes = verdict == "accepted"
    data: dict[str, Any] = {
        "tables": tables,
        "summary": summary,
        "load": load,
        "verdict": verdict,
        "is_baseline": bool((summary or load or {}).get("is_baseline")),
        "trend": q.trend(con, as_of),
        "gates": q.gate_signals(con, load_id) if load_id and verdict == "rejected" else [],
        "signals": q.signals(con, tables, as_of, load_id) if load_id else [],
        "loads": q.loads(con, bounds["trend_start"], as_of),
        "ai_run": q.ai_run(con, tables, as_of, "daily"),
        "drift_run": q.ai_run(con, tables, as_of, "drift"),
        "ai_calls": q.ai_calls(con, tables, as_of, as_of),
        "ai_totals": q.ai_call_totals(con, tables, as_of, as_of),
        "alerts": q.notify_alerts(con, bounds["trend_start"], as_of),
        "deliveries": q.notify_deliveries(con, bounds["trend_start"], as_of),
        "proposals": q.pending_proposals(con, tables, as_of),
        "proposal_counts": q.pending_proposal_counts(con, tables, as_of),
        "unmatched": q.watchlist_unmatched(con, tables, as_of) if publishes else None,
    }
    # A rejected load publishes nothing: its events are not read even if some exist.
    # A registration back after a withdrawal is reported beside the new ones: both are
    # registrations present today that were not yesterday.
    data["new"] = q.events(con, tables, as_of, "NEW") + q.events(con, tables, as_of, "REINSTATED") if publishes else []
    data["withdrawn"] = q.events(con, tables, as_of, "WITHDRAWN") if publishes else []
    data["changes"] = q.field_changes(con, tables, as_of) if publishes else []
    data["watch"] = q.watchlist_events(con, tables, as_of) if publishes else []
    data["actions"] = day_actions(con, as_of) if publishes else []
    # Cut at as_of so that re-rendering an old day gives the same timelines.
    watched_keys = list(dict.fromkeys(row["dmf_key"] for row in data["watch"]))
    data["timelines"] = [timeline(con, key, as_of) for key in watched_keys]
    return data


# --- sheets -----------------------------------------------------------------------------------


def _write(wb: Workbook, as_of: date, data: dict[str, Any]) -> None:
    f = Formats(wb)
    sheets = {name: wb.add_worksheet(name) for name in SHEETS}
    for ws in sheets.values():
        ws.hide_gridlines(2)
        print_setup(ws)
    sheets[TREND_DATA].hide()
    one_page(sheets[DASHBOARD])
    _dashboard(sheets[DASHBOARD], f, wb, as_of, data)
    _actions_sheet(sheets[ACTIONS], f, data)
    _event_sheet(
        sheets[NEW], f, "신규 등록 (NEW) · 재등장 (REINSTATED: 취하됐다가 다시 나타난 등록)", data["new"], data
    )
    _changed_sheet(sheets[CHANGED], f, data["changes"], data)
    _event_sheet(sheets[WITHDRAWN], f, "등록 취하 (WITHDRAWN) — 목록에서 사라진 등록", data["withdrawn"], data)
    timeline_rows = _history_sheet(sheets[HISTORY], f, data)
    _watchlist_sheet(sheets[WATCHLIST], f, data, timeline_rows)
    _signals_sheet(sheets[SIGNALS], f, data)
    _operations_sheet(sheets[OPERATIONS], f, data)
    _proposals_sheet(sheets[PROPOSALS], f, data)
    write_truncation_note(sheets[OPERATIONS], f)
    sheets[DASHBOARD].activate()


def _status_note(data: dict[str, Any]) -> str | None:
    if data["load"] is None:
        return "이 날짜의 적재 기록이 없어 이벤트가 없습니다."
    if data["verdict"] == "rejected":
        return "적재가 거부된 날입니다: 이벤트를 발행하지 않았습니다(요약 시트 참고)."
    if data["is_baseline"]:
        return "기준선을 설정한 날입니다: 비교할 이전 적재가 없어 이벤트가 없습니다."
    return None


EVENT_COLS = [
    Col("구분", "event_label", "text", 7),
    Col("중요도", "severity", "severity", 11),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 26),
    Col("신청인", "applicant", "text", 22),
    Col("사업자등록번호", "applicant_bizrno", "text", 13),
    Col("제조소명", "manufacturer", "text", 30),
    Col("제조소 소재지", "manufacture_place", "text", 40),
    Col("제조국", "countries", "text", 12),
    Col("등록일자", "permit_date", "date", 11),
    Col("고시구분", "notice_code", "text", 9),
    Col("관심목록", "watch", "text", 8),
    Col("관심 키워드", "watch_terms", "text", 16),
    Col("부재 일수", "absent_days", "int", 9),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
]


def _with_labels(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        row = dict(row)
        row["watch"] = YES_NO.get(bool(row.get("on_watchlist")))
        row["event_label"] = label(EVENT_LABEL, row.get("event_type"))
        row["changed_fields_label"] = field_list_label(row.get("changed_fields"))
        row["watch_matches_label"] = watch_matches_label(row.get("watch_matches"))
        row["change_kind_label"] = label(CHANGE_KIND_LABEL, row.get("change_kind"))
        row["field_label"] = label(FIELD_LABEL, row.get("field_name"))
        if row.get("field_name"):
            row["change_text"] = describe_change(
                row["field_name"],
                row.get("change_detail"),
                row.get("before_value"),
                row.get("after_value"),
                row.get("removed_entries"),
                row.get("added_entries"),
            )
            row["change_code"] = f"{row['field_name']}/{row.get('change_detail') or '-'}"
        out.append(row)
    return out


def _event_sheet(ws: Worksheet, f: Formats, title: str, rows: list[dict], data: dict) -> None:
    top = write_sheet_title(ws, f, title, _status_note(data))
    back_link(ws, f, 3, DASHBOARD)
    write_table(ws, f, top, EVENT_COLS, _with_labels(rows), source="marts.dmf_events")


CHANGED_COLS = [
    Col("중요도", "severity", "severity", 11),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 24),
    Col("신청인", "applicant", "text", 20),
    Col("변경 항목", "field_label", "text", 13),
    Col("무엇이 바뀌었나", "change_text", "wrap", 40),
    Col("변경 전", "before_value", "wrap", 36),
    Col("변경 후", "after_value", "wrap", 36),
    Col("변경 종류", "change_kind_label", "text", 10),
    Col("관심목록", "watch", "text", 8),
    Col("관심 키워드", "watch_terms", "text", 16),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
    Col("코드(필터용)", "change_code", "text", 14),
]


def _changed_sheet(ws: Worksheet, f: Formats, rows: list[dict], data: dict) -> None:
    top = write_sheet_title(
        ws,
        f,
        "등록 변경 (CHANGED) — 변경된 항목마다 한 행",
        _status_note(data) or "같은 등록의 여러 항목이 바뀌면 항목 수만큼 행이 있습니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    write_table(ws, f, top, CHANGED_COLS, _with_labels(rows), source="marts.dmf_event_field_changes")


WATCH_COLS = [
    Col("구분", "event_label", "text", 7),
    Col("중요도", "severity", "severity", 11),
    Col("관심 키워드", "watch_terms", "text", 18),
    Col("담당", "watch_owners", "text", 10),
    Col("일치 방식", "watch_matches_label", "text", 30),
    Col("등록번호", "permit_no", "text", 22),
    Col("성분명", "ingredient_name", "text", 24),
    Col("신청인", "applicant", "text", 20),
    Col("제조소명", "manufacturer", "text", 30),
    Col("제조국", "countries", "text", 12),
    Col("변경 항목", "changed_fields_label", "text", 20),
    Col(AI_COMMENT_HEADER, "ai_comment", "wrap", 50),
    Col("이력", "history_label", "text", 10),
]
UNMATCHED_COLS = [
    Col("관심 항목", "watch_term", "text"),
    Col("종류", "term_kind_label", "text"),
    Col("찾지 못한 이유", "reason_label", "text"),
    Col("비슷한 이름 후보(규칙 기반)", "candidates_text", "text"),
]


def _watchlist_sheet(ws: Worksheet, f: Formats, data: dict, timeline_rows: dict[str, int]) -> None:
    top = write_sheet_title(ws, f, "관심목록 해당 이벤트", _status_note(data))
    back_link(ws, f, 3, DASHBOARD)
    r = write_table(ws, f, top, WATCH_COLS, _with_labels(data["watch"]), source="marts.dmf_events")
    history_col = len(WATCH_COLS) - 1
    for i, row in enumerate(data["watch"]):
        if row["dmf_key"] in timeline_rows:
            ws.write_url(
                top + 1 + i,
                history_col,
                f"internal:'{HISTORY}'!A{timeline_rows[row['dmf_key']] + 1}",
                f.link,
                string="이력 보기 →",
            )
    r += 2
    ws.write_string(r, 0, "오늘 데이터에서 찾지 못한 관심 항목", f.section)
    unmatched = []
    for row in data["unmatched"] or []:
        row = dict(row)
        row["term_kind_label"] = label(TERM_KIND_LABEL, row.get("term_kind"))
        row["reason_label"] = label(UNMATCHED_REASON_LABEL, row.get("unmatched_reason"))
        row["candidates_text"] = _json_list_text(row.get("candidates"))
        unmatched.append(row)
    write_table(
        ws,
        f,
        r + 1,
        UNMATCHED_COLS,
        unmatched,
        main=False,
        empty_text=(
            "없음 — 모든 관심 항목(성분·신청인·제조소)이 오늘 목록의 등록과 일치합니다"
            if data["unmatched"] is not None
            else "확인하지 못함 — 이 날짜의 등록 목록과 대조한 결과가 없습니다(가장 최근 적재 날짜만 대조합니다)"
        ),
    )


HISTORY_COLS = (("날짜", 11), ("구분", 10), ("중요도", 10), ("내용", 90))


def _history_sheet(ws: Worksheet, f: Formats, data: dict) -> dict[str, int]:
    """One block per watchlist registration of the day: its timeline (the lines `dmf history`
    prints). Returns dmf_key → the block's first row, for the watchlist sheet's links."""
    top = write_sheet_title(
        ws,
        f,
        "관심목록 등록의 이력 — 처음 확인 이후의 모든 이벤트와 변경",
        "dmf history --permit-no <등록번호> 가 같은 이력을 보여 줍니다. 이 날짜까지의 이력입니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    for c, (_caption, width) in enumerate(HISTORY_COLS):
        ws.set_column(c, c, width)
    rows: dict[str, int] = {}
    r = top
    items: list[Timeline] = data["timelines"]
    if not items:
        ws.write_string(r, 0, "오늘 관심목록 해당 이벤트가 없습니다.", f.empty)
        return rows
    for item in items:
        rows[item.dmf_key] = r
        merged_text(
            ws, r, 0, r, 3, f"{item.title}   ({'현재 목록에 있음' if item.current else '목록에 없음'})", f.section
        )
        ws.set_row(r, 21)
        r += 1
        for c, (caption, _) in enumerate(HISTORY_COLS):
            ws.write_string(r, c, caption, f.header)
        r += 1
        for entry in item.entries:
            for n, line in enumerate(entry.lines):
                if n == 0:
                    write_value(ws, r, 0, entry.day, "date", f)
                    ws.write_string(r, 1, entry.label, f.text)
                    write_value(ws, r, 2, entry.severity, "severity", f)
                write_value(ws, r, 3, line, "wrap", f)
                if text_lines(line, 90) > 1:
                    ws.set_row(r, 15 * text_lines(line, 90))
                r += 1
        r += 1
    return rows


def _json_list_text(value: str | None) -> str | None:
    import json

    if not value:
        return None
    try:
        items = json.loads(value)
    except ValueError:
        return value
    return ", ".join(str(i) for i in items) if isinstance(items, list) else str(items)


SIGNAL_COLS = [
    Col("구분", "kind_label", "text", 8),
    Col("발생", "fired_label", "text", 7),
    Col("신호", "signal_label", "text", 16),
    Col("중요도", "severity", "severity", 11),
    Col("설명과 확인할 것", "description_ko", "wrap", 48),
    Col("관측값", "observed", "float2", 10),
    Col("기준값", "baseline", "float2", 10),
    Col("기준 설명", "baseline_text", "wrap", 28),
    Col("기간", "window_text", "text", 22),
    Col("상위 신청인", "top_applicants", "wrap", 30),
    Col("상위 등록그룹", "top_groups", "wrap", 20),
    Col("등록일자 분포", "date_spread", "wrap", 24),
    Col("AI 가설 (AI 생성·참고용)", "ai_comment", "wrap", 44),
    Col("신호 ID", "signal_id", "text", 14),
]
SAME_CONTEXT = "위와 같음"


def _sentence(text: str) -> str:
    """The text ending with a full stop, so two texts never run together."""
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _signal_rows(rows: list[dict]) -> list[dict]:
    """Korean names and texts; a context equal to the row above is shown once ('위와 같음')."""
    out = []
    previous_context = None
    for row in rows:
        row = dict(row)
        name, text = SIGNAL_LABEL.get(str(row.get("signal_id")), (row.get("signal_id"), None))
        row["signal_label"] = name
        # The catalog's Korean texts (seed signal_catalog) first; this module's only as a fallback.
        # The catalog says what happened when the signal fires: a quiet one shows it as its
        # condition, and what to check only when there is something to check.
        what = row.get("description_ko") or text or row.get("description")
        if row.get("fired"):
            row["description_ko"] = " ".join(_sentence(v) for v in (what, row.get("what_to_check_ko")) if v)
        else:
            row["description_ko"] = f"발생하지 않음. 발생 조건: {_sentence(what)}" if what else None
        for key in ("baseline_text", "threshold_text"):
            if row.get(key):
                row[key] = field_names_in_korean(str(row[key]))
        row["kind_label"] = "게이트" if row.get("is_gate") else "경고"
        row["fired_label"] = "발생" if row.get("fired") else "정상"
        context = row.get("context")
        if context and context == previous_context:
            row["top_applicants"], row["top_groups"], row["date_spread"] = SAME_CONTEXT, None, None
        else:
            row["top_applicants"] = context_text(context, "top_applicants")
            row["top_groups"] = context_text(context, "top_groups")
            row["date_spread"] = context_text(context, "date_spread")
        previous_context = context or previous_context
        out.append(row)
    return out


def _signals_sheet(ws: Worksheet, f: Formats, data: dict) -> None:
    top = write_sheet_title(
        ws,
        f,
        "무결성 신호 — 게이트(적재 거부)와 경고",
        "발생한 신호가 위에 옵니다. 판정은 SQL(dbt)이 하며 AI 가설은 참고용입니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    rows = _signal_rows(data["signals"])
    write_table(ws, f, top, SIGNAL_COLS, rows)
    severity_col = [c.key for c in SIGNAL_COLS].index("severity")
    for i, row in enumerate(rows):
        if not row.get("fired"):  # a quiet signal is not painted in its alarm colour
            write_value(ws, top + 1 + i, severity_col, label(SEVERITY_LABEL, row.get("severity")), "text", f, f.muted)


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


def _load_rows(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        row = dict(row)
        row["verdict_label"] = label({"accepted": "반영", "rejected": "거부"}, row.get("verdict"))
        row["baseline_label"] = "예" if row.get("is_baseline") else None
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
    total_cols = [
        Col("호출 수", "calls", "int"),
        Col("실패", "failed_calls", "int"),
        Col("입력 토큰", "input_tokens", "int"),
        Col("출력 토큰", "output_tokens", "int"),
        Col("캐시 토큰", "cached_tokens", "int"),
        Col("사고 토큰", "thinking_tokens", "int"),
        Col("총 토큰", "total_tokens", "int"),
        Col("소요(초)", "duration_s", "float"),
    ]
    r = write_table(ws, f, r, total_cols, [totals], main=False)
    if not ai_tables:
        ws.write_string(r, 0, "AI 호출 기록 테이블이 없습니다(AI 단계가 한 번도 실행되지 않음).", f.note)
        r += 1
    r += 1
    calls = _labelled(calls, status=AGY_STATUS_LABEL)
    return write_table(ws, f, r, CALL_COLS, calls, main=False, empty_text="답을 쓴 AI 호출 없음")


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


def _delivery_what(row: dict) -> str:
    """An alert's kind in Korean; for a summary, whose items it carried (everyone's or one owner's)."""
    what = str(row.get("what") or "")
    if row.get("message_kind") == "alert":
        return label(ALERT_KIND_LABEL, what) or ""
    _, owned, owner = what.partition(":owner:")
    return f"{owner} 담당 항목" if owned else "전체"


def _labelled(rows: list[dict], **labels: dict[str, str]) -> list[dict]:
    """Rows with their codes replaced by Korean labels (an unknown code shows as itself)."""
    out = []
    for row in rows:
        row = dict(row)
        for key, mapping in labels.items():
            row[key] = label(mapping, row.get(key))
        out.append(row)
    return out


def _operations_sheet(ws: Worksheet, f: Formats, data: dict) -> None:
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


PROPOSAL_COLS = [
    Col("7일 초과", "overdue_label", "text", 9),
    Col("제안일", "as_of_date", "date", 11),
    Col("경과 일수", "age_days", "int", 8),
    Col("제안 ID", "proposal_id", "text", 16),
    Col("종류", "kind", "text", 14),
    Col("관심 항목", "watch_term", "text", 18),
    Col("후보 성분명", "candidate_ingredient_name", "text", 24),
    Col("기본형", "base_form", "text", 16),
    Col("염형", "salt_form", "text", 12),
    Col("신뢰도", "confidence", "float2", 8),
    Col("AI 사유 (AI 생성·참고용)", "reason", "wrap", 44),
]


def write_proposals(ws: Worksheet, f: Formats, rows: list[dict]) -> None:
    top = write_sheet_title(
        ws,
        f,
        "대기 중인 AI 제안 — 사람이 승인하기 전에는 아무것도 적용되지 않습니다",
        "승인/거절: dmf proposals accept|reject <제안 ID>. 승인 후 별칭 시드를 직접 수정하세요.",
    )
    back_link(ws, f, 4, DASHBOARD)
    out = []
    for row in rows:
        row = dict(row)
        row["overdue_label"] = "7일 초과" if row.get("overdue") else None
        out.append(row)
    write_table(ws, f, top, PROPOSAL_COLS, out, empty_text="대기 중인 제안 없음")


def _proposals_sheet(ws: Worksheet, f: Formats, data: dict) -> None:
    write_proposals(ws, f, data["proposals"])


# --- dashboard --------------------------------------------------------------------------------

TREND_SERIES = [
    # (summary column, dashboard label, link target, severity style)
    ("new_count", "신규 (NEW)", NEW, None),
    ("changed_count", "변경 (CHANGED)", CHANGED, None),
    ("withdrawn_count", "취하 (WITHDRAWN)", WITHDRAWN, "HIGH"),
    ("critical_count", "긴급 (CRITICAL)", ACTIONS, "CRITICAL"),
    ("watchlist_hit_count", "관심목록 해당", WATCHLIST, None),
    ("fired_signal_count", "무결성 신호 발생", SIGNALS, None),
]
SEVERITY_COUNTS = [
    ("critical_count", "CRITICAL", "긴급"),
    ("high_count", "HIGH", "높음"),
    ("medium_count", "MEDIUM", "보통"),
    ("info_count", "INFO", "정보"),
    ("cosmetic_count", "COSMETIC", "표기"),
]


def _trend_sheet(ws: Worksheet, f: Formats, trend: list[dict]) -> dict[str, int]:
    """The hidden series: row 0 = dates, one row per metric. Returns metric → row index."""
    ws.write_string(0, 0, "지표", f.header)
    for c, day in enumerate(trend, start=1):
        write_value(ws, 0, c, day["day"], "date", f)
    rows = {}
    for r, (key, caption, _, _) in enumerate(TREND_SERIES, start=1):
        ws.write_string(r, 0, caption, f.text)
        for c, day in enumerate(trend, start=1):
            write_value(ws, r, c, day.get(key), "int", f)
        rows[key] = r
    return rows


def _dashboard(ws: Worksheet, f: Formats, wb: Workbook, as_of: date, data: dict) -> None:
    summary, load = data["summary"], data["load"]
    ws.set_column(0, 0, 24)
    ws.set_column(1, 1, 12)
    ws.set_column(2, 2, 30)
    ws.set_column(3, 3, 14)
    ws.set_column(4, 7, 16)
    ws.write_string(0, 0, f"DMF 일일 리포트  {as_of:%Y-%m-%d}", f.title)
    ws.set_row(0, 26)
    ws.write_string(
        1,
        0,
        "식약처 원료의약품 등록(DMF) 목록의 전일 대비 변동. 모든 숫자는 데이터 웨어하우스의 SQL 집계입니다.",
        f.subtitle,
    )

    r = 3
    ws.write_string(r, 0, "적재 상태", f.section)
    r += 1
    verdict = data["verdict"]
    if load is None:
        verdict_text, verdict_fmt = "적재 기록 없음", f.bad
    elif verdict == "rejected":
        verdict_text, verdict_fmt = "거부 — 반영되지 않음", f.bad
    elif data["is_baseline"]:
        verdict_text, verdict_fmt = "기준선 설정", f.ok
    elif (load or {}).get("decision") == "accept":
        verdict_text, verdict_fmt = "반영 — 게이트 발동 후 사람이 승인", f.ok
    else:
        verdict_text, verdict_fmt = "정상 반영", f.ok
    facts = [
        ("기준일", as_of, "date"),
        ("적재 판정", verdict_text, "verdict"),
        ("등록 현황(건)", (summary or {}).get("registry_count"), "int"),
        ("API 총건수", (load or {}).get("total_count"), "int"),
        ("수집 고유 건수", (load or {}).get("distinct_count"), "int"),
        ("비교 기준 적재일", (load or {}).get("previous_accepted_as_of"), "date"),
        ("적재 ID", (load or {}).get("load_id"), "text"),
    ]
    for caption, value, kind in facts:
        ws.write_string(r, 0, caption, f.key)
        if kind == "verdict":
            merged_text(ws, r, 1, r, 2, value, verdict_fmt)
        elif kind == "date":
            ws.merge_range(r, 1, r, 2, "", f.value_date)
            write_value(ws, r, 1, value, "date", f, f.value_date)
        elif kind == "int":
            ws.merge_range(r, 1, r, 2, "", f.value_int)
            write_value(ws, r, 1, value, "int", f, f.value_int)
        else:
            merged_text(ws, r, 1, r, 2, value, f.value)
        r += 1

    r += 1
    if load is None:
        merged_text(
            ws,
            r,
            0,
            r + 1,
            7,
            f"이 날짜({as_of:%Y-%m-%d})의 적재 기록이 없습니다. 실시간 API 는 오늘 목록만 주므로 "
            "지난 날짜는 그날의 덤프가 있을 때만 dmf backfill 로 가져올 수 있습니다(오늘이면 dmf run).",
            f.bad,
        )
        r += 3
    elif verdict == "rejected":
        r = _rejected_block(ws, f, r, data)
    elif load.get("decision") == "accept":
        r = _accepted_by_person_block(ws, f, r, load)
    if load is not None and verdict != "rejected" and data["is_baseline"]:
        registry = (summary or {}).get("registry_count")
        merged_text(
            ws,
            r,
            0,
            r + 1,
            7,
            "기준선 설정 — 첫 정상 적재의 등록 현황"
            + (f" {registry:,}건" if isinstance(registry, int) else "")
            + "을 비교 기준으로 삼았습니다. 비교할 이전 적재가 없어 오늘은 이벤트가 없고, "
            "다음 정상 적재부터 신규·변경·취하가 보고됩니다.",
            f.info_banner,
        )
        ws.set_row(r, 22)
        ws.set_row(r + 1, 22)
        r += 3

    r = _action_block(ws, f, r, data)

    # Counts with 30-day sparklines.
    trend_rows = _trend_sheet(wb.get_worksheet_by_name(TREND_DATA), f, data["trend"])
    last_col = len(data["trend"])
    ws.write_string(r, 0, "오늘의 변동", f.section)
    r += 1
    for c, caption in enumerate(["구분", "건수", "최근 30일 추세", "바로가기"]):
        ws.write_string(r, c, caption, f.header)
    counts_top = r
    r += 1
    for key, caption, target, sev in TREND_SERIES:
        ws.write_string(r, 0, caption, f.count_label_sev[sev] if sev else f.count_label)
        if data["verdict"] == "rejected" and key != "fired_signal_count":
            ws.write_string(r, 1, "미발행", f.big_int)  # a rejected load publishes no events
        else:
            write_value(ws, r, 1, (summary or {}).get(key), "int", f, f.big_int)
        ws.add_sparkline(
            r,
            2,
            {
                "range": f"'{TREND_DATA}'!{_col(1)}{trend_rows[key] + 1}:{_col(last_col)}{trend_rows[key] + 1}",
                "type": "column",
                "high_point": True,
                "series_color": "#1F3864",
                "high_color": "#C00000",
                "empty_cells": "zero",
            },
        )
        ws.write_url(r, 3, f"internal:'{target}'!A1", f.link, string=f"{target} 시트 →")
        ws.set_row(r, 22)
        r += 1
    ws.write_string(counts_top, 5, "중요도", f.header)
    ws.write_string(counts_top, 6, "건수", f.header)
    for i, (key, sev, caption) in enumerate(SEVERITY_COUNTS, start=1):
        ws.write_string(counts_top + i, 5, f"{caption} ({sev})", f.count_label_sev[sev])
        if data["verdict"] == "rejected":  # not "0": nothing was published to count
            ws.write_string(counts_top + i, 6, "미발행", f.big_int)
        else:
            write_value(ws, counts_top + i, 6, (summary or {}).get(key), "int", f, f.big_int)
    r += 1

    r = _ai_block(ws, f, r, data)
    r = _proposal_badge(ws, f, r, data)
    r = _trend_chart(ws, wb, r, data, trend_rows, last_col)

    ws.write_string(r, 0, "시트 바로가기", f.section)
    r += 1
    for name in SHEETS[1:-1]:
        ws.write_url(r, 0, f"internal:'{name}'!A1", f.link, string=name)
        r += 1


# --- the action list ---------------------------------------------------------------------------

#: How many action lines the dashboard shows before "외 N건" (the rest is on the ACTIONS sheet).
DASHBOARD_ACTIONS = 8
#: First table row (0-based) of every event sheet: write_sheet_title's table row + the header.
FIRST_DATA_ROW = 4
EVENT_SHEET = {"NEW": NEW, "REINSTATED": NEW, "CHANGED": CHANGED, "WITHDRAWN": WITHDRAWN}


def _row_link(data: dict, action: Action) -> str | None:
    """`internal:'변경'!A7` — the event's first row on its sheet (the rows the sheets write, in
    the same order), or None when the event type has no sheet of its own."""
    sheet = EVENT_SHEET.get(action.event_type)
    rows = {NEW: data["new"], CHANGED: data["changes"], WITHDRAWN: data["withdrawn"]}.get(sheet)
    if not rows:
        return None
    for i, row in enumerate(rows):
        if row["dmf_key"] == action.dmf_key:
            return f"internal:'{sheet}'!A{FIRST_DATA_ROW + i + 1}"
    return None


def action_tag(action: Action) -> str:
    return label(SEVERITY_LABEL, action.severity) + (" · 관심" if action.on_watchlist else "")


def action_subject(action: Action) -> str:
    """'암로디핀베실산염 · 20190801-211-J-399 · (주)삼오제약' — who the line is about."""
    return " · ".join(v for v in (action.ingredient_name, action.permit_no or "(등록번호 없음)", action.applicant) if v)


def _action_block(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    """'오늘 조치할 항목': one line per CRITICAL/HIGH/watchlist event, most severe first, each
    linked to its row; the first DASHBOARD_ACTIONS, then '외 N건' linking to the full list."""
    actions: list[Action] = data["actions"]
    ws.write_string(r, 0, f"오늘 조치할 항목 — 긴급·높음·관심목록, 표기 변경 제외 ({len(actions)}건)", f.section)
    r += 1
    if data["verdict"] != "accepted":
        merged_text(ws, r, 0, r, 7, "오늘은 이벤트를 발행하지 않아 조치할 항목이 없습니다(위 적재 상태 참고).", f.badge)
        return r + 2
    if not actions:
        merged_text(ws, r, 0, r, 7, "조치할 항목 없음 — 긴급·높음 이벤트와 관심목록 해당 이벤트가 없습니다.", f.ok)
        return r + 2
    for action in actions[:DASHBOARD_ACTIONS]:
        ws.write_string(r, 0, action_tag(action), f.severity.get(action.severity, f.key))
        text = f"{action_subject(action)} — {action.what} (사유: {action.reason})"
        merged_text(ws, r, 1, r, 6, text, f.action)
        ws.set_row(r, 15 * _lines(text, 100))
        link = _row_link(data, action)
        if link:
            ws.write_url(r, 7, link, f.link, string="행 보기 →")
        r += 1
    more = len(actions) - DASHBOARD_ACTIONS
    if more > 0:
        merged_text(ws, r, 0, r, 6, f"외 {more}건 — 전체 목록은 조치항목 시트에 있습니다", f.note)
        ws.write_url(r, 7, f"internal:'{ACTIONS}'!A1", f.link, string="조치항목 시트 →")
        r += 1
    return r + 1


def _lines(text: str, width: int) -> int:
    return text_lines(text, width)


ACTION_COLS = [
    Col("중요도", "tag", "text", 12),
    Col("성분명", "ingredient_name", "text", 24),
    Col("등록번호", "permit_no", "text", 22),
    Col("신청인", "applicant", "text", 22),
    Col("무엇이 바뀌었나", "what", "wrap", 60),
    Col("사유", "reason", "wrap", 40),
    Col("담당", "owners", "text", 10),
    Col("바로가기", "link_label", "text", 10),
    Col("구분", "event_type", "text", 10),
    Col("dmf_key", "dmf_key", "text", 18),
]


LINK_COL = next(i for i, col in enumerate(ACTION_COLS) if col.key == "link_label")


def _actions_sheet(ws: Worksheet, f: Formats, data: dict) -> None:
    actions: list[Action] = data["actions"]
    top = write_sheet_title(
        ws,
        f,
        "오늘 조치할 항목 — 긴급·높음 이벤트와 관심목록 해당 이벤트 전체(표기만 바뀐 변경은 변경 시트에)",
        _status_note(data) or "중요도 순. '행 보기'는 신규·변경·취하 시트의 해당 행으로 갑니다.",
    )
    back_link(ws, f, 5, DASHBOARD)
    rows = [
        dict(
            tag=action_tag(a),
            ingredient_name=a.ingredient_name,
            permit_no=a.permit_no or "(등록번호 없음)",
            applicant=a.applicant,
            what=a.what,
            reason=a.reason,
            owners=", ".join(a.owners) or None,
            event_type=label(EVENT_LABEL, a.event_type),
            dmf_key=a.dmf_key,
        )
        for a in actions
    ]
    write_table(ws, f, top, ACTION_COLS, rows, empty_text="조치할 항목 없음")
    for i, action in enumerate(actions):
        row = top + 1 + i
        ws.write_string(row, 0, action_tag(action), f.severity.get(action.severity, f.text))
        link = _row_link(data, action)
        if link:
            ws.write_url(row, LINK_COL, link, f.link, string="행 보기 →")
        ws.set_row(row, 15 * max(_lines(action.what, 60), _lines(action.reason, 40)))


def _col(index: int) -> str:
    from xlsxwriter.utility import xl_col_to_name

    return xl_col_to_name(index)


def decision_text(load: dict) -> str:
    """A person's decision on the load, as the report states it (who, why, when)."""
    when = load.get("decided_at")
    stamp = f", {when:%Y-%m-%d %H:%M} UTC" if hasattr(when, "strftime") else ""
    if load.get("decision") == "accept":
        return (
            f"{load.get('decided_by')} 님이 게이트 발동 후 승인함 (사유: {load.get('decision_reason')}{stamp}). "
            f"발동한 게이트: {load.get('rejected_gates') or '-'} — 신호는 무결성신호 시트에 그대로 표시됩니다."
        )
    return (
        f"{load.get('decided_by')} 님이 반영을 취소함 (사유: {load.get('decision_reason')}{stamp}). "
        "다음 적재는 그 이전의 반영 적재와 비교됩니다."
    )


def _accepted_by_person_block(ws: Worksheet, f: Formats, r: int, load: dict) -> int:
    merged_text(ws, r, 0, r + 1, 7, "사람 승인 — " + decision_text(load), f.warn)
    ws.set_row(r, 24)
    ws.set_row(r + 1, 24)
    return r + 3


def _rejected_block(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    load = data["load"] or {}
    previous = load.get("previous_accepted_as_of")
    if load.get("decision") == "reject":
        text = "적재 거부 — " + decision_text(load) + " 이 날의 이벤트는 발행하지 않습니다."
    elif load.get("rejected_gates") or data["gates"]:
        text = (
            "적재 거부 — 무결성 게이트가 오늘 적재를 거부했습니다. 이 날의 데이터는 반영되지 않았고 "
            "이벤트도 발행하지 않았습니다."
        )
    else:  # the fetch failed or came back incomplete: no gate was ever asked
        text = (
            "적재 거부 — 오늘 목록을 끝까지 받지 못해 적재를 반영하지 않았습니다. 이 날의 데이터는 "
            "반영되지 않았고 이벤트도 발행하지 않았습니다."
        )
    if previous:
        text += f" 다음 정상 적재는 마지막 반영 적재({previous:%Y-%m-%d})와 비교됩니다."
    merged_text(ws, r, 0, r + 1, 7, text, f.bad)
    ws.set_row(r, 24)
    ws.set_row(r + 1, 24)
    r += 2
    reason_ko = load_reason_ko(load.get("reason"), load.get("rejected_gates"))
    if reason_ko:
        ws.write_string(r, 0, "사유", f.key)
        merged_text(ws, r, 1, r, 7, reason_ko, f.value)
        r += 1
    if load.get("reason"):
        ws.write_string(r, 0, "사유 원문(영문)", f.key)
        merged_text(ws, r, 1, r, 7, load.get("reason"), f.note_box)
        ws.set_row(r, 15 * _lines(str(load.get("reason")), 110))
        r += 1
    drift = drift_record(load.get("schema_drift"))
    if drift is not None:
        r = drift_rows(ws, f, r, drift, data.get("drift_run"))
    r += 1
    if load.get("decision") == "reject" and not data["gates"]:
        return r  # a person's rejection: no gate to list, the banner above says who and why
    ws.write_string(r, 0, "거부한 게이트", f.section)
    r += 1
    gates = list(data["gates"])
    if not gates and load.get("rejected_gates"):
        gates = [{"signal_id": load["rejected_gates"]}]
    if not gates and drift is not None:
        merged_text(ws, r, 0, r, 7, DRIFT_NO_GATE, f.warn)
        return r + 2
    if not gates:
        merged_text(ws, r, 0, r, 7, "게이트 신호 없음 — 수집 자체가 불완전했습니다. " + DEFAULT_GUIDANCE, f.warn)
        return r + 2
    for gate in gates:
        ws.write_string(r, 0, "게이트", f.key)
        gate_id = str(gate.get("signal_id"))
        merged_text(ws, r, 1, r, 2, f"{SIGNAL_LABEL.get(gate_id, (gate_id,))[0]} ({gate_id})", f.value)
        ws.write_string(r, 3, "관측값", f.key)
        write_value(ws, r, 4, gate.get("observed"), "float2", f, _gate_number_format(f, gate.get("observed")))
        ws.write_string(r, 5, "기준값", f.key)
        write_value(ws, r, 6, gate.get("baseline"), "float2", f, _gate_number_format(f, gate.get("baseline")))
        r += 1
        for caption, value in (
            ("설명", gate.get("description_ko") or (SIGNAL_LABEL.get(gate_id) or (None, gate.get("description")))[1]),
            ("기준", " · ".join(v for v in (gate.get("baseline_text"), gate.get("window_text")) if v)),
            ("확인할 것", gate.get("what_to_check_ko") or DEFAULT_GUIDANCE),
        ):
            ws.write_string(r, 0, caption, f.key)
            merged_text(ws, r, 1, r, 7, value, f.warn if caption == "확인할 것" else f.value)
            ws.set_row(r, 15 * _lines(str(value or ""), 110))
            r += 1
        r += 1
    return r


def _gate_number_format(f: Formats, value: object) -> Format:
    """Counts (total_count_drop: 9,205 against 9,202) stay whole; a ratio keeps its decimals,
    or the rejected day's box would say 'observed 1, threshold 0' for 99.6 % against 30 %."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return f.value_int
    return f.value_ratio if value is not None else f.value_int


def _ai_block(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    run = data["ai_run"]
    merged_text(ws, r, 0, r, 7, "AI 브리핑 — AI 생성 문장(참고용). 사실·숫자·판정은 위 표가 기준입니다.", f.ai_title)
    r += 1
    if run and run.get("status") == "OK" and run.get("headline"):
        merged_text(ws, r, 0, r, 7, run.get("headline"), f.ai_head)
        ws.set_row(r, 36)
        r += 1
        summary = plain_markdown(run.get("summary_md")) or ""
        lines = max(2, min(14, summary.count("\n") + 1 + len(summary) // 110))
        merged_text(ws, r, 0, r + lines - 1, 7, summary, f.ai_body)
        r += lines
        if run.get("risk_note"):
            ws.write_string(r, 0, "위험 메모 (AI)", f.ai_label)
            merged_text(ws, r, 1, r + 1, 7, run.get("risk_note"), f.ai_body)
            r += 2
        ws.write_string(
            r, 0, "모델: " + (run.get("model") or "-") + "  ·  실행: " + (run.get("run_id") or "-"), f.subtitle
        )
        r += 1
    else:
        badge = ai_reader_badge(run.get("skip_reason") if run else None, run.get("status") if run else None)
        merged_text(ws, r, 0, r + 1, 7, badge, f.badge)
        ws.set_row(r, 18)
        ws.set_row(r + 1, 18)
        r += 2
    return r + 1


def _proposal_badge(ws: Worksheet, f: Formats, r: int, data: dict) -> int:
    counts = data["proposal_counts"]
    if not counts.get("pending"):
        return r
    text = f"AI 별칭 제안 {counts['pending']}건이 승인을 기다립니다"
    fmt = f.badge
    if counts.get("overdue"):
        text += f" — 그중 {counts['overdue']}건은 7일 넘게 대기 중"
        fmt = f.warn
    merged_text(ws, r, 0, r, 6, text, fmt)
    ws.write_url(r, 7, f"internal:'{PROPOSALS}'!A1", f.link, string="AI제안 시트 →")
    return r + 2


def _trend_chart(ws: Worksheet, wb: Workbook, r: int, data: dict, trend_rows: dict[str, int], last_col: int) -> int:
    """A stacked column chart of the last 30 days (visible in viewers without sparklines)."""
    chart = wb.add_chart({"type": "column", "subtype": "stacked"})
    colours = {"new_count": "#2E75B6", "changed_count": "#F4B183", "withdrawn_count": "#C00000"}
    for key, caption, _, _ in TREND_SERIES[:3]:
        row = trend_rows[key]
        chart.add_series(
            {
                "name": caption,
                "categories": [TREND_DATA, 0, 1, 0, last_col],
                "values": [TREND_DATA, row, 1, row, last_col],
                "fill": {"color": colours[key]},
                "gap": 40,
            }
        )
    chart.set_title({"name": "최근 30일 이벤트", "name_font": {"size": 11, "name": "맑은 고딕"}})
    chart.set_x_axis({"date_axis": True, "num_format": "mm-dd", "num_font": {"size": 8}})
    chart.set_y_axis({"num_font": {"size": 8}, "major_gridlines": {"visible": True, "line": {"color": "#E0E0E0"}}})
    chart.set_legend({"position": "bottom", "font": {"name": "맑은 고딕", "size": 9}})
    chart.show_hidden_data()
    chart.set_size({"width": 760, "height": 240})
    ws.insert_chart(r, 0, chart)
    return r + 13
