"""How report cells look and how they are written: formats, Korean labels, the output quarantine.

Everything that reaches a cell goes through `write_value`, which picks the XlsxWriter call from
the column's declared kind (text → `write_string`, date → `write_datetime`, number →
`write_number`), so a registry value can never become a formula or a URL, and a number or a
date stays a real number or date that RA staff can sort and filter.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import xlsxwriter
from xlsxwriter.workbook import Workbook
from xlsxwriter.worksheet import Worksheet

from dmf_watch.enrich.badges import badge_for  # the enrich package owns the wording
from dmf_watch.enrich.sanitize import escape_formula_lead

# --- output quarantine ------------------------------------------------------------------------


def quarantine(value: object) -> str:
    """Make any value safe to show as text: registry fields are companies' free text and AI
    text is untrusted, so a formula-leading value gets a leading apostrophe. Idempotent."""
    if value is None:
        return ""
    return escape_formula_lead(str(value))


# --- Excel's cell limit ------------------------------------------------------------------------

EXCEL_CELL_MAX = 32_767  # characters (UTF-16 code units) a cell holds; XlsxWriter cuts silently
# Cells cut in the workbook being written, by warehouse column; set by `workbook()`.
_TRUNCATED: ContextVar[Counter[str] | None] = ContextVar("truncated_cells", default=None)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def fit_cell(text: str, source: str | None = None) -> str:
    """The one place that decides what a too-long value looks like in a cell: cut visibly,
    with its full length and where the whole value is, never silently (the warehouse keeps it
    whole). Counted for the operations sheet of the workbook being written."""
    if _utf16_len(text) <= EXCEL_CELL_MAX:
        return text
    where = f"warehouse의 {source}" if source else "warehouse에 그대로 있음"
    marker = f" … (전체 {len(text):,}자, 원문은 {where})"
    room = EXCEL_CELL_MAX - _utf16_len(marker)
    head = text[:room]
    while _utf16_len(head) > room:  # characters outside the BMP take two units
        head = head[:-1]
    counter = _TRUNCATED.get()
    if counter is not None:
        counter[source or "?"] += 1
    return head + marker


def truncated_cells() -> int:
    """How many cells of the workbook being written were cut so far."""
    counter = _TRUNCATED.get()
    return sum(counter.values()) if counter else 0


def write_truncation_note(ws: Worksheet, f: Formats, row: int = 2) -> None:
    """'잘린 셀 N' on the operations sheet; written after every other sheet so N is final."""
    n = truncated_cells()
    text = f"잘린 셀 {n:,}"
    if n:
        text += f" — 엑셀 셀 한도({EXCEL_CELL_MAX:,}자)를 넘는 값은 끝에 표시를 달아 잘랐습니다. 원문은 warehouse에 그대로 있습니다."
    ws.write_string(row, 0, text, f.warn if n else f.note)


# --- AI skip-reason badges --------------------------------------------------------------------

NO_RUN_BADGE = "AI 요약: AI 실행 기록 없음 — 이 날짜에 AI 단계(`dmf enrich`)가 돌지 않았습니다"
NO_WEEKLY_RUN_BADGE = "AI 코멘터리: 이 주의 AI 코멘터리 없음(주간 AI는 기본적으로 꺼져 있음)"


#: What a missing AI text means to an RA reader and who should do what (the technical badge
#: from enrich.badges follows it). Facts never depend on the AI, so most say "정상".
FACTS_OK = "리포트의 사실·숫자는 모두 정상입니다"
READER_NOTE = {
    None: f"AI 요약 없음 — {FACTS_OK}. 담당자: 이 날짜에 `dmf enrich` 실행",
    "diff_empty": f"AI 요약 없음 — 오늘은 변동이 없어 요약할 것이 없습니다. {FACTS_OK}. 조치 불필요",
    "disabled": f"AI 요약 없음 — AI 를 쓰지 않도록 설정되어 있습니다. {FACTS_OK}. 조치 불필요",
    "binary_missing": f"AI 요약 없음 — {FACTS_OK}. 담당자: `dmf doctor` 실행(agy 설치·경로 확인)",
    "auth": f"AI 요약 없음 — {FACTS_OK}. 담당자: 배치 계정으로 agy 재로그인 후 `dmf enrich`",
    "quota": f"AI 요약 없음 — {FACTS_OK}. 조치 불필요: AI 사용량 소진, 내일 자동 재시도",
    "token_cap": f"AI 요약 없음 — {FACTS_OK}. 조치 불필요: 오늘의 AI 사용 상한 도달",
    "call_cap": f"AI 요약 없음 — {FACTS_OK}. 조치 불필요: 오늘의 AI 호출 상한 도달",
    "timeout": f"AI 요약 없음 — {FACTS_OK}. 담당자: `dmf enrich` 재실행, 반복되면 `dmf doctor`",
    "circuit_open": f"AI 요약 없음 — {FACTS_OK}. 연속 실패로 AI 를 하루 쉬는 중. 담당자: `dmf doctor`",
    "load_rejected": "AI 요약 없음 — 오늘 적재가 거부되어 요약할 이벤트가 없습니다. 위 '적재 거부' 안내를 따르세요",
    "no_load": "AI 요약 없음 — 이 날짜의 적재가 없습니다. 담당자: 오늘이면 `dmf run`, 지난 날짜는 그날의 덤프로 `dmf backfill`",
    "marts_missing": "AI 요약 없음 — 집계 테이블이 없습니다. 담당자: `dmf build` 실행",
    "no_signals": f"AI 해석 없음 — 발생한 이상 신호가 없습니다. {FACTS_OK}. 조치 불필요",
}
#: Reasons where the AI answered badly: the same note, the raw answer is in state/agy_runs.
for _reason in (
    "schema_invalid",
    "invalid_output",
    "parse_failed",
    "agy_error",
    "prompt_guard",
    "model_not_found",
    "storage_error",
    "internal_error",
):
    READER_NOTE[_reason] = f"AI 요약 없음 — {FACTS_OK}. 담당자: `dmf doctor` 실행, 로그(state/logs/dmf.log) 확인"


def ai_reader_badge(skip_reason: str | None, status: str | None) -> str:
    """Two lines: what the missing AI text means and who does what; then the technical reason."""
    key = skip_reason if (status is not None or skip_reason is not None) else None
    note = READER_NOTE.get(key, f"AI 요약 없음 — {FACTS_OK}. 담당자: `dmf doctor` 실행")
    return f"{note}\n(기술 정보: {ai_badge(skip_reason, status)})"


def ai_badge(skip_reason: str | None, status: str | None) -> str:
    """The dashboard badge that says why there is no AI text; never blank."""
    if status is None and skip_reason is None:
        return NO_RUN_BADGE
    text = badge_for(skip_reason)
    if text:
        return text
    if status == "FAILED":
        return "AI 요약: 생성 실패 — 로그를 확인하세요"
    return "AI 요약: 생성되지 않음"


# --- Korean labels ----------------------------------------------------------------------------

EVENT_LABEL = {"NEW": "신규", "REINSTATED": "재등장", "CHANGED": "변경", "WITHDRAWN": "취하"}
SEVERITY_LABEL = {
    "CRITICAL": "긴급",
    "HIGH": "높음",
    "MEDIUM": "보통",
    "INFO": "정보",
    "COSMETIC": "표기",
}
FIELD_LABEL = {
    "permit_no": "등록번호",
    "ingredient_name": "성분명",
    "applicant": "신청인",
    "applicant_bizrno": "사업자등록번호",
    "manufacturer": "제조소명",
    "manufacture_place": "제조소 소재지",
    "countries": "제조국",
    "permit_date": "등록일자",
    "notice_code": "고시구분",
}
CHANGE_KIND_LABEL = {"substantive": "실질 변경", "cosmetic": "표기 변경"}
TERM_KIND_LABEL = {"ingredient": "성분", "applicant": "신청인", "manufacturer": "제조소"}
#: How a watch term matched (the stage in marts' `watch_matches`, "term (stage)").
MATCH_STAGE_LABEL = {
    "exact": "정확히 일치",
    "alias": "승인된 별칭",
    "base_name": "염·수화물 제외 이름",
    "prefix": "이름 앞부분",
    "transliteration": "영문 음역",
    "applicant": "신청인",
    "manufacturer": "제조소",
}
#: Why a watch term matches no registration today (dmf_watchlist_unmatched.unmatched_reason).
UNMATCHED_REASON_LABEL = {
    "never_matched": "일치하는 등록 없음(오타 확인)",
    "all_withdrawn": "모든 등록 취하됨",
    "no_longer_matching": "등록 내용이 바뀌어 더는 일치하지 않음",
}
#: Integrity signals in Korean: a short name and what it means / what to check. Thresholds are
#: not repeated here (they are dbt vars); the sheet shows them from SQL (기준값, 기준 설명).
SIGNAL_LABEL = {
    "total_count_drop": (
        "총건수 급감",
        "API 총건수가 마지막 반영 적재보다 게이트 비율 아래로 줄었습니다. "
        "API 장애나 일부 목록만 온 경우입니다: 식약처 사이트의 건수와 비교하세요.",
    ),
    "zero_records": ("0건 적재", "적재한 건수가 0건입니다. 서비스 키와 API 상태를 확인하세요."),
    "all_changed": (
        "대량 변경",
        "등록의 너무 많은 비율이 한꺼번에 바뀌었습니다. 원천 형식 변경이나 "
        "정규화 오류를 의심하고 몇 건을 직접 비교하세요.",
    ),
    "total_count_spike": (
        "총건수 급증",
        "API 총건수가 마지막 반영 적재보다 크게 늘었습니다. 식약처의 일괄 등록이나 중복 여부를 확인하세요.",
    ),
    "event_burst": (
        "이벤트 폭증",
        "이벤트 수가 최근 30일 중앙값보다 훨씬 많습니다. 상위 신청인·등록그룹을 보고 일괄 변경인지 확인하세요.",
    ),
    "withdrawn_burst": (
        "취하 폭증",
        "취하 건수가 최근 30일 어느 날보다 많습니다. 한 신청인·그룹의 일괄 취하인지 식약처 사이트에서 확인하세요.",
    ),
    "field_change_surge": (
        "항목 변경 급증",
        "한 항목이 실제 하루보다 훨씬 많은 등록에서 바뀌었습니다. 그 항목의 변경 몇 건을 원시 적재와 비교하세요.",
    ),
    "duplicate_surge": ("중복 급증", "중복된 등록번호가 크게 늘었습니다. 원시 적재에서 중복 번호를 확인하세요."),
    "field_null_surge": (
        "빈 값 급증",
        "어떤 항목의 빈 값 비율이 크게 늘었습니다. API 가 그 항목을 보내지 않는지 확인하세요.",
    ),
    "permit_parse_fail_surge": (
        "등록번호 해석 실패",
        "알려진 형식에 맞지 않는 등록번호가 늘었습니다. 새 번호 체계면 해석 규칙이 필요합니다.",
    ),
    "date_format_drift": (
        "날짜 형식 변화",
        "YYYY-MM-DD 가 아닌 등록일자가 있습니다. API 의 날짜 형식 변경을 확인하세요.",
    ),
    "undecodable_text": (
        "UTF-8 아닌 글자",
        "UTF-8 이 아닌 바이트가 온 값이 있습니다. 바꾸지 않고 ␛ 표시와 함께 보관했습니다. 원시 적재를 확인하세요.",
    ),
    "slow_fetch": ("수집 지연", "수집 시간이 최근 30일 중앙값보다 훨씬 깁니다. 데이터 자체의 문제는 아닙니다."),
    "http_retry_surge": ("재시도 급증", "HTTP 재시도가 많았습니다. API 안정성과 일일 요청 한도를 확인하세요."),
    "identity_ambiguous": (
        "식별 모호",
        "어제 기록과 하나로 맞출 수 없는 기록이 있어 추측하지 않고 새 등록으로 "
        "처리했습니다. 목록의 대체 키를 확인하세요.",
    ),
    "withdrawn_share": (
        "취하 비율 과다",
        "취하 건수가 마지막 반영 적재 등록의 일정 비율을 넘었습니다. 목록 일부 "
        "누락이나 식별자 변경을 의심하고 취하된 번호 몇 개를 식약처 사이트에서 조회하세요.",
    ),
    "identity_churn": (
        "식별 단절",
        "같은 성분·신청인의 등록이 취하와 신규로 동시에 잡혔습니다. 등록번호 형식 "
        "변경이나 사업자등록번호 누락을 의심하세요.",
    ),
    "field_fill_collapse": (
        "항목 채움률 급락",
        "어떤 항목의 값이 있는 비율이 크게 떨어졌습니다. API 가 그 항목을 보내지 않거나 이름을 바꿨는지 확인하세요.",
    ),
    "records_quarantined": (
        "기록 격리",
        "읽을 수 없는 기록(다른 인코딩, 짝 없는 서로게이트, 빈 레코드, 두 행의 같은 등록번호, 두 번 나열)을 "
        "비교에서 뺐습니다. 그 등록은 마지막 정상 내용을 유지하고 이 날은 반영되었습니다. 기준 설명의 목록을 확인하세요.",
    ),
    "quarantine_share": (
        "격리 과다",
        "격리된 기록이 한도를 넘어 적재를 거부했습니다. 원천 문제(인코딩 변경, 반복된 기록)를 의심하고 "
        "몇 건을 식약처 사이트와 비교하세요.",
    ),
    "identity_loose_key": (
        "느슨한 키 연결",
        "일부 기록을 성분·사업자등록번호·등록일자만으로 전일 기록과 이었습니다. 해당 변경 이벤트를 확인하세요.",
    ),
}
ALERT_LEVEL_LABEL = {"INFO": "정보", "WARN": "경고", "CRITICAL": "긴급"}
ALERT_KIND_LABEL = {
    "load_rejected": "적재 거부",
    "run_failed": "실행 실패",
    "recovered": "정상 복구",
    "ai_binary_missing": "AI: agy 미설치",
    "ai_auth": "AI: 재로그인 필요",
    "ai_quota": "AI: 쿼터 소진",
    "ai_token_cap": "AI: 토큰 상한",
    "ai_invalid_streak": "AI: 잘못된 응답 반복",
    "ai_action_required": "AI: 조치 필요 판단",
}
MESSAGE_KIND_LABEL = {"daily": "일일 요약", "weekly": "주간 리포트", "alert": "알림", "test": "시험 메시지"}
#: The status of one agy call (its envelope's, or the client's when agy never answered).
AGY_STATUS_LABEL = {
    "SUCCESS": "성공",
    "ERROR": "오류",
    "TIMEOUT": "시간 초과",
    "LAUNCH_FAILED": "실행 실패",
    "INVALID": "응답 형식 오류",
}
OUTCOME_LABEL = {"sent": "전송됨", "failed": "실패", "written": "파일로 저장(데모)"}
#: The channel of a destination's URL scheme (a service not listed is shown by its own name).
SERVICE_LABEL = {"mailto": "메일", "mailtos": "메일", "json": "웹훅", "form": "웹훅", "xml": "웹훅", "file": "파일"}
#: The demo's stand-in destination (dmf_watch/notify/day.py OUTBOX); real ones show their names.
DESTINATION_LABEL = {"outbox": "데모 보관함"}


def load_reason_ko(reason: str | None, rejected_gates: str | None) -> str | None:
    """A rejected load's reason in Korean: the kind of failure in our words, gate names in
    Korean; the loader's own sentence (English, it may quote the API) is shown beside it."""
    if not reason and not rejected_gates:
        return None
    if rejected_gates:
        names = [
            SIGNAL_LABEL.get(g.strip(), (g.strip(), ""))[0] + f"({g.strip()})"
            for g in rejected_gates.split(",")
            if g.strip()
        ]
        return "무결성 게이트가 거부: " + ", ".join(names)
    kind, _, _ = (reason or "").partition(":")
    return {
        "incomplete": "수집 불완전 — 받은 건수가 API 총건수와 다르거나, 적재 중에 목록이 바뀌었습니다",
        "failed": "수집 실패 — API 가 오류로 응답했거나 연결할 수 없었습니다",
    }.get(kind.strip(), "적재 실패")


VERDICT_LABEL = {"accepted": "반영", "rejected": "거부"}
YES_NO = {True: "예", False: "아니오"}
#: The AI comment column of the event, change and watchlist sheets (its header marks it as AI).
AI_COMMENT_HEADER = "AI 코멘트 (AI 생성·참고용)"


def label(mapping: Mapping[str, str], code: object) -> str | None:
    """A Korean label for a code; an unknown code is shown as itself rather than hidden."""
    if code is None:
        return None
    return mapping.get(str(code), str(code))


def watch_matches_label(watch_matches: str | None) -> str | None:
    """'Formoterol Fumarate (transliteration)' → 'Formoterol Fumarate (영문 음역)'."""
    if not watch_matches:
        return watch_matches
    return re.sub(r"\((\w+)\)(?=, |$)", lambda m: f"({MATCH_STAGE_LABEL.get(m.group(1), m.group(1))})", watch_matches)


def field_names_in_korean(text: str) -> str:
    """'항목별 빈 값: permit_no 0.2%, applicant 0.0%' → '항목별 빈 값: 등록번호 0.2%, 신청인 0.0%'."""
    return re.sub(r"\b[a-z_]+\b", lambda m: FIELD_LABEL.get(m.group(0), m.group(0)), text)


def field_list_label(comma_joined: str | None) -> str | None:
    """'manufacturer,countries' → '제조소명, 제조국'."""
    if not comma_joined:
        return None
    names = [n.strip() for n in comma_joined.split(",") if n.strip()]
    return ", ".join(FIELD_LABEL.get(n, n) for n in names)


def context_text(context_json: str | None, key: str) -> str | None:
    """One readable line from a signal's JSON context: [[name, n], …] → 'name 21, other 9'."""
    if not context_json:
        return None
    try:
        context = json.loads(context_json)
    except (TypeError, ValueError):
        return context_json if key == "top_applicants" else None
    value = context.get(key) if isinstance(context, dict) else None
    if value is None:
        return None
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                parts.append(f"{item[0]} {item[1]}")
            else:
                parts.append(str(item))
        return ", ".join(parts)
    if isinstance(value, dict):
        return ", ".join(f"{CONTEXT_KEY_LABEL.get(k, k)} {v}" for k, v in value.items())
    return str(value)


#: The keys of a signal context's date spread (model int_load_event_context), in Korean.
CONTEXT_KEY_LABEL = {
    "earliest": "가장 이른 등록일",
    "latest": "가장 늦은 등록일",
    "distinct_dates": "서로 다른 등록일 수",
    "undated": "등록일 없음",
}


# --- formats ----------------------------------------------------------------------------------

FONT = "맑은 고딕"  # Malgun Gothic: what Korean Windows/Excel users have; LibreOffice falls back
SEVERITY_COLOURS = {
    "CRITICAL": ("#9C0006", "#FFC7CE"),
    "HIGH": ("#9C5700", "#FFEB9C"),
    "MEDIUM": ("#1F4E79", "#DDEBF7"),
    "INFO": ("#375623", "#E2EFDA"),
    "COSMETIC": ("#595959", "#EDEDED"),
}


class Formats:
    """All cell formats of one workbook, created once (XlsxWriter formats belong to a workbook)."""

    def __init__(self, wb: Workbook) -> None:
        base = {"font_name": FONT, "font_size": 10, "valign": "top"}

        def fmt(**props: Any):
            return wb.add_format({**base, **props})

        self.text = fmt()
        self.wrap = fmt(text_wrap=True)
        self.header = fmt(
            bold=True, bg_color="#1F3864", font_color="#FFFFFF", border=1, text_wrap=True, valign="vcenter"
        )
        self.date = fmt(num_format="yyyy-mm-dd", align="left")
        self.datetime = fmt(num_format="yyyy-mm-dd hh:mm", align="left")
        self.int = fmt(num_format="#,##0")
        self.float = fmt(num_format="#,##0.0")
        self.float2 = fmt(num_format="#,##0.00")
        self.signed = fmt(num_format="+#,##0;-#,##0;0")
        self.percent = fmt(num_format="0.0%")
        self.severity = {
            name: fmt(bold=True, font_color=fg, bg_color=bg, align="center")
            for name, (fg, bg) in SEVERITY_COLOURS.items()
        }
        self.title = fmt(bold=True, font_size=16, font_color="#1F3864", valign="vcenter")
        self.subtitle = fmt(font_size=10, font_color="#595959", italic=True)
        self.section = fmt(bold=True, font_size=12, font_color="#1F3864", bottom=2, bottom_color="#1F3864")
        self.key = fmt(bold=True, bg_color="#F2F2F2", border=1)
        self.value = fmt(border=1)
        self.value_date = fmt(border=1, num_format="yyyy-mm-dd", align="left")
        self.value_int = fmt(border=1, num_format="#,##0", align="right")
        # A gate's observed value and threshold may be a ratio (0.9964 against 0.3): whole
        # numbers would show them as 1 and 0, so up to four decimals are kept.
        self.value_ratio = fmt(border=1, num_format="#,##0.0###", align="right")
        self.big_int = fmt(bold=True, font_size=14, border=1, num_format="#,##0", align="center", valign="vcenter")
        self.count_label = fmt(bold=True, border=1, valign="vcenter")
        self.count_label_sev = {
            name: fmt(bold=True, border=1, valign="vcenter", font_color=fg, bg_color=bg)
            for name, (fg, bg) in SEVERITY_COLOURS.items()
        }
        self.ok = fmt(bold=True, font_color="#375623", bg_color="#E2EFDA", border=1)
        self.bad = fmt(
            bold=True,
            font_color="#FFFFFF",
            bg_color="#C00000",
            border=1,
            text_wrap=True,
            valign="vcenter",
            font_size=12,
        )
        self.warn = fmt(bold=True, font_color="#9C5700", bg_color="#FFEB9C", border=1, text_wrap=True)
        self.info_banner = fmt(
            bold=True,
            font_color="#1F4E79",
            bg_color="#DDEBF7",
            border=1,
            text_wrap=True,
            valign="vcenter",
            font_size=12,
        )
        self.ai_title = fmt(bold=True, font_color="#FFFFFF", bg_color="#7030A0", border=1)
        self.ai_head = fmt(bold=True, font_size=12, text_wrap=True, bg_color="#F3EAF9", border=1, valign="top")
        self.ai_body = fmt(text_wrap=True, bg_color="#F3EAF9", border=1, valign="top")
        self.ai_label = fmt(bold=True, font_color="#7030A0", bg_color="#F3EAF9", border=1)
        self.badge = fmt(
            italic=True, font_color="#595959", bg_color="#EDEDED", border=1, text_wrap=True, valign="vcenter"
        )
        self.link = fmt(font_color="#0563C1", underline=1, border=1)
        self.action = fmt(border=1, text_wrap=True)
        self.muted = fmt(font_color="#595959", align="center")
        self.note_box = fmt(border=1, text_wrap=True, italic=True, font_color="#595959")
        self.note = fmt(italic=True, font_color="#595959", text_wrap=True)
        self.empty = fmt(italic=True, font_color="#808080")


# --- tables -----------------------------------------------------------------------------------

ROW_HEIGHT = 15  # points per line of 10-point text
#: The narrowest column that shows a value of a kind without "###" (Excel's too-narrow mark).
MIN_WIDTH = {"date": 11, "datetime": 17, "int": 9, "float": 9, "float2": 10, "signed": 8, "percent": 8}


def _widen(ws: Worksheet, col: int, width: float, *, force: bool = False) -> None:
    """Set a column's width; unless `force`, only ever wider. Several tables share a sheet's
    columns (the operations sheet), and a later table must not squeeze an earlier one's dates."""
    widths = ws.__dict__.setdefault("_dmf_widths", {})
    if not force and widths.get(col, 8.43) >= width:
        return
    widths[col] = width
    ws.set_column(col, col, width)


MAX_LINES = 20


def text_lines(text: str, width: float) -> int:
    """How many lines `text` takes in a wrapped cell `width` characters wide (Hangul and other
    wide characters count double), capped so one huge value cannot make a page-high row."""
    lines = 0
    for paragraph in text.split("\n"):
        units = sum(2 if ord(ch) > 0x2E80 else 1 for ch in paragraph)
        lines += max(1, -(-units // max(1, int(width) - 1)))
    return max(1, min(MAX_LINES, lines))


@dataclass(frozen=True)
class Col:
    """One report column: Korean header, the SQL column it shows, how it is written, width."""

    header: str
    key: str
    kind: str = "text"  # text | wrap | date | datetime | int | float | float2 | signed | severity
    width: float = 14


SEOUL = ZoneInfo("Asia/Seoul")


def _as_datetime(value: date | datetime) -> datetime:
    """Excel has no time zones: instants are shown in Korean time (KST), whatever the
    machine's zone, so the same warehouse gives the same cells everywhere."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(SEOUL)
        return value.replace(tzinfo=None)
    return datetime.combine(value, time())


def write_value(
    ws: Worksheet, row: int, col: int, value: Any, kind: str, f: Formats, cell_format=None, source: str | None = None
) -> None:
    """Write one cell with the call its kind demands; text always via write_string.
    `int_or_text`/`signed_or_text`: a number, or a note such as "데이터 없음" where SQL has none."""
    if kind.endswith("_or_text"):
        if isinstance(value, str):
            ws.write_string(row, col, fit_cell(quarantine(value), source), f.empty)
            return
        kind = kind.removesuffix("_or_text")
    if kind in ("date", "datetime"):
        fmt = cell_format or (f.date if kind == "date" else f.datetime)
        if isinstance(value, (date, datetime)):
            ws.write_datetime(row, col, _as_datetime(value), fmt)
        elif value is None:
            ws.write_blank(row, col, None, fmt)
        else:  # an unparsed date from the source stays visible as text
            ws.write_string(row, col, fit_cell(quarantine(value), source), f.text)
        return
    if kind in ("int", "float", "float2", "signed", "percent"):
        fmt = cell_format or getattr(f, kind)
        if isinstance(value, bool):
            ws.write_number(row, col, int(value), fmt)
        elif isinstance(value, (int, float)):
            ws.write_number(row, col, value, fmt)
        elif value is None:
            ws.write_blank(row, col, None, fmt)
        else:
            ws.write_number(row, col, float(value), fmt)  # Decimal from SQL
        return
    if kind == "severity":
        fmt = cell_format or f.severity.get(str(value), f.text)
        value = SEVERITY_LABEL.get(str(value), value) if value is not None else None
    elif kind == "wrap":
        fmt = cell_format or f.wrap
    else:
        fmt = cell_format or f.text
    if value is None or value == "":
        ws.write_blank(row, col, None, fmt)
    else:
        ws.write_string(row, col, fit_cell(quarantine(value), source), fmt)


def write_table(
    ws: Worksheet,
    f: Formats,
    top: int,
    cols: Sequence[Col],
    rows: Iterable[Mapping[str, Any]],
    *,
    main: bool = True,
    empty_text: str = "해당 없음",
    source: str | None = None,
) -> int:
    """A header row and one row per record; `main` tables get frozen headers and an autofilter.
    `source` is the warehouse table the rows come from, named in the marker of a cut cell.
    Returns the next free row."""
    for c, col in enumerate(cols):
        ws.write_string(top, c, col.header, f.header)
        if main:
            _widen(ws, c, col.width, force=True)
        _widen(ws, c, MIN_WIDTH.get(col.kind, 0))
    r = top + 1
    for record in rows:
        lines = 1
        for c, col in enumerate(cols):
            value = record.get(col.key)
            write_value(ws, r, c, value, col.kind, f, source=f"{source}.{col.key}" if source else None)
            if col.kind == "wrap" and value:
                lines = max(lines, text_lines(str(value), col.width))
        if lines > 1:  # XlsxWriter cannot autofit: give wrapped text the rows it needs
            ws.set_row(r, ROW_HEIGHT * lines)
        r += 1
    if main:
        ws.freeze_panes(top + 1, 0)
        ws.autofilter(top, 0, max(top, r - 1), len(cols) - 1)
        ws.set_row(top, 30)
    if r == top + 1:
        ws.write_string(r, 0, empty_text, f.empty)
        r += 1
    return r


def write_sheet_title(ws: Worksheet, f: Formats, title: str, subtitle: str | None = None) -> int:
    """Title (and a one-line note) above a sheet's table; returns the table's first row."""
    ws.write_string(0, 0, title, f.title)
    ws.set_row(0, 24)
    if subtitle:
        ws.write_string(1, 0, subtitle, f.subtitle)
    return 3


def print_setup(ws: Worksheet) -> None:
    """Landscape A4, all columns on one page width, header rows repeated (for PDF/print)."""
    ws.set_landscape()
    ws.set_paper(9)
    ws.fit_to_pages(1, 0)
    ws.set_margins(left=0.4, right=0.4, top=0.5, bottom=0.5)


def one_page(ws: Worksheet) -> None:
    """The dashboard prints on one landscape page, whatever its length."""
    print_setup(ws)
    ws.fit_to_pages(1, 1)


def plain_markdown(text: str | None) -> str | None:
    """AI briefings are markdown; a cell shows plain text (bold marks and heading hashes go)."""
    if not text:
        return text
    lines = [
        line.lstrip("#").strip() if line.lstrip().startswith("#") else line
        for line in text.replace("**", "").replace("__", "").splitlines()
    ]
    return "\n".join(lines)


BACK_LINK_ROW = 2  # the blank row between a sheet's note and its table: it hides no title


def back_link(ws: Worksheet, f: Formats, col: int, dashboard: str) -> None:
    """A link back to the workbook's dashboard (`dashboard` must be a sheet of this workbook).
    `col` is kept for callers; the link sits in column A of the blank row above the table."""
    ws.write_url(BACK_LINK_ROW, 0, f"internal:'{dashboard}'!A1", f.link, string=f"← {dashboard}으로")


def merged_text(ws: Worksheet, first_row: int, first_col: int, last_row: int, last_col: int, text: object, fmt) -> None:
    """A merged box holding text. merge_range() would pass its data through write(), which
    turns '=…' into a formula, so the range is merged empty and the text written as a string."""
    ws.merge_range(first_row, first_col, last_row, last_col, "", fmt)
    value = quarantine(text)
    if value:
        ws.write_string(first_row, first_col, fit_cell(value), fmt)


# --- workbook lifecycle -----------------------------------------------------------------------


@contextmanager
def workbook(path: Path, as_of: date, title: str) -> Iterator[Workbook]:
    """A workbook whose bytes depend only on its content: fixed document properties (created
    = the report date) and XlsxWriter's fixed zip timestamps. It is written to a temporary
    file and renamed into place, so a failure never leaves a half-written report and never
    touches another day's file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # Built in memory, then written by us: XlsxWriter's own file handles, left open when a
    # write fails (disk full), would print a traceback when collected at exit.
    buffer = io.BytesIO()
    wb = xlsxwriter.Workbook(
        buffer,
        {
            "in_memory": True,
            "strings_to_formulas": False,
            "strings_to_urls": False,
            "strings_to_numbers": False,
        },
    )
    wb.set_properties(
        {
            "title": title,
            "subject": "MFDS DMF 원료의약품 등록 변동",
            "author": "DMF Watch",
            "company": "",
            "comments": "DMF Watch 가 데이터 웨어하우스의 SQL 결과만으로 생성한 파일입니다.",
            "created": _as_datetime(as_of),
        }
    )
    token = _TRUNCATED.set(Counter())
    try:
        yield wb
        wb.close()
        with tmp.open("wb") as handle:
            handle.write(buffer.getbuffer())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        _TRUNCATED.reset(token)
        if tmp.exists():
            tmp.unlink()
