"""The AI proposals sheet: alias proposals waiting for a person, never applied without one."""

from __future__ import annotations

from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.layout import Col, Formats, back_link, write_sheet_title, write_table
from dmf_watch.reports.sheets import DASHBOARD

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
