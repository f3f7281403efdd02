"""Why there is no AI text today, in the words the dashboard shows.

The report reads `enrichment.enrichment_run.skip_reason` with a LEFT JOIN and puts the matching
badge where the briefing would be, so a day without AI still gives a complete report.
"""

from __future__ import annotations

#: skip_reason -> dashboard badge.
BADGE_TEXT: dict[str, str] = {
    "diff_empty": "AI 요약: 변경 없음(호출 생략)",
    "disabled": "AI 요약: 사용 안 함(설정)",
    "binary_missing": "AI 요약: agy 미설치 — 복구 도우미를 실행하세요",
    "auth": "AI 요약: agy 재로그인 필요",
    "quota": "AI 요약: AI 쿼터 소진 — 내일 자동 재시도",
    "token_cap": "AI 요약: 일일 토큰 상한 도달",
    "timeout": "AI 요약: 시간 초과(10분)",
    "schema_invalid": "AI 요약: 응답 형식 오류 — 원문은 로그에 보관",
    "circuit_open": "AI 요약: 연속 실패로 일시 중지(24시간)",
    "call_cap": "AI 요약: 일일 호출 상한 도달",
    "prompt_guard": "AI 요약: 프롬프트 사전 검사에서 차단(호출 생략)",
    "model_not_found": "AI 요약: 설정된 모델을 agy 가 모름 — dmf doctor 로 확인하세요",
    "invalid_output": "AI 요약: agy 출력이 JSON 이 아님 — 원문은 로그에 보관",
    "agy_error": "AI 요약: agy 오류 — 원문은 로그에 보관",
    "parse_failed": "AI 요약: 응답에 헤드라인이 없어 폐기",
    "load_rejected": "AI 요약: 오늘 적재가 거부되어 생략(발행된 이벤트 없음)",
    "no_load": "AI 요약: 이 날짜의 적재 기록 없음",
    "marts_missing": "AI 요약: 집계 테이블이 없음 — dmf build 를 먼저 실행하세요",
    "no_signals": "AI 해석: 발생한 이상 신호 없음(호출 생략)",
    "storage_error": "AI 요약: 결과 저장 실패 — 로그를 확인하세요",
    "internal_error": "AI 요약: 내부 오류 — 로그를 확인하세요",
}

#: Reasons that mean "AI was not asked" (SKIPPED) rather than "AI was asked and failed" (FAILED).
SKIPPED_REASONS = frozenset(
    {
        "diff_empty",
        "disabled",
        "quota",
        "token_cap",
        "call_cap",
        "circuit_open",
        "load_rejected",
        "no_load",
        "no_signals",
    }
)


def badge_for(skip_reason: str | None) -> str:
    """The badge for a reason; an unknown reason still gets a readable badge, never a blank."""
    if not skip_reason:
        return ""
    return BADGE_TEXT.get(skip_reason, "AI 요약: 생성되지 않음(" + skip_reason + ")")
