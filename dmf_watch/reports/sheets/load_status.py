"""The dashboard's '적재 상태': the day's verdict and the load's facts, then the box the verdict
calls for — no load, a rejected load with its reason and gates (and the API schema drift,
dmf_watch.reports.drift_block), a load a person accepted after a gate, or the baseline."""

from __future__ import annotations

from datetime import date

from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from dmf_watch.reports.drift_block import DRIFT_NO_GATE, drift_record, drift_rows
from dmf_watch.reports.layout import SIGNAL_LABEL, Formats, load_reason_ko, merged_text, text_lines, write_value

#: What to check when a gate gives no guidance of its own (the catalog's what_to_check_ko).
DEFAULT_GUIDANCE = (
    "운영 시트의 적재 지표(요청·재시도·페이지)를 확인하세요. 오늘이면 원인 해소 후 dmf run 으로 "
    "다시 적재하고, 지난 날짜는 다음 정상 적재가 마지막 반영 적재와 비교됩니다."
)


def write_load_status(ws: Worksheet, f: Formats, r: int, as_of: date, data: dict) -> int:
    """Writes from row `r`; returns the next free row."""
    ws.write_string(r, 0, "적재 상태", f.section)
    r = _write_facts(ws, f, r + 1, as_of, data) + 1
    load = data["load"]
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
    elif data["verdict"] == "rejected":
        r = _rejected_block(ws, f, r, data)
    elif load.get("decision") == "accept":
        r = _accepted_by_person_block(ws, f, r, load)
    if load is not None and data["verdict"] != "rejected" and data["is_baseline"]:
        r = _baseline_block(ws, f, r, (data["summary"] or {}).get("registry_count"))
    return r


def _verdict(f: Formats, data: dict) -> tuple[str, Format]:
    load = data["load"]
    if load is None:
        return "적재 기록 없음", f.bad
    if data["verdict"] == "rejected":
        return "거부 — 반영되지 않음", f.bad
    if data["is_baseline"]:
        return "기준선 설정", f.ok
    if load.get("decision") == "accept":
        return "반영 — 게이트 발동 후 사람이 승인", f.ok
    return "정상 반영", f.ok


def _write_facts(ws: Worksheet, f: Formats, r: int, as_of: date, data: dict) -> int:
    """One row per fact of the day's load, the verdict in its colour; returns the next free row."""
    summary, load = data["summary"] or {}, data["load"] or {}
    verdict_text, verdict_fmt = _verdict(f, data)
    facts = [
        ("기준일", as_of, "date"),
        ("적재 판정", verdict_text, "verdict"),
        ("등록 현황(건)", summary.get("registry_count"), "int"),
        ("API 총건수", load.get("total_count"), "int"),
        ("수집 고유 건수", load.get("distinct_count"), "int"),
        ("비교 기준 적재일", load.get("previous_accepted_as_of"), "date"),
        ("적재 ID", load.get("load_id"), "text"),
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
    return r


def _baseline_block(ws: Worksheet, f: Formats, r: int, registry: object) -> int:
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
    return r + 3


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
        ws.set_row(r, 15 * text_lines(str(load.get("reason")), 110))
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
        r = _gate_rows(ws, f, r, gate)
    return r


def _gate_rows(ws: Worksheet, f: Formats, r: int, gate: dict) -> int:
    """One gate that rejected the load: its values, what it means and what to check."""
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
        ws.set_row(r, 15 * text_lines(str(value or ""), 110))
        r += 1
    return r + 1


def _gate_number_format(f: Formats, value: object) -> Format:
    """Counts (total_count_drop: 9,205 against 9,202) stay whole; a ratio keeps its decimals,
    or the rejected day's box would say 'observed 1, threshold 0' for 99.6 % against 30 %."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer():
        return f.value_int
    return f.value_ratio if value is not None else f.value_int
