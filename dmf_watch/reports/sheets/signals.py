"""The integrity signals sheet: every gate and warning of the day's load, the fired ones first,
in the catalog's Korean words; the verdict is SQL's, the AI hypothesis only a note beside it."""

from __future__ import annotations

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import (
    SEVERITY_LABEL,
    SIGNAL_LABEL,
    Col,
    Formats,
    back_link,
    context_text,
    field_names_in_korean,
    label,
    write_sheet_title,
    write_table,
    write_value,
)
from dmf_watch.reports.sheets import DASHBOARD

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


def write_signals_sheet(ws: Worksheet, f: Formats, signals: list[dict]) -> None:
    top = write_sheet_title(
        ws,
        f,
        "무결성 신호 — 게이트(적재 거부)와 경고",
        "발생한 신호가 위에 옵니다. 판정은 SQL(dbt)이 하며 AI 가설은 참고용입니다.",
    )
    back_link(ws, f, 3, DASHBOARD)
    rows = _signal_rows(signals)
    write_table(ws, f, top, SIGNAL_COLS, rows)
    severity_col = [c.key for c in SIGNAL_COLS].index("severity")
    for i, row in enumerate(rows):
        if not row.get("fired"):  # a quiet signal is not painted in its alarm colour
            write_value(ws, top + 1 + i, severity_col, label(SEVERITY_LABEL, row.get("severity")), "text", f, f.muted)
