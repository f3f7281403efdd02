"""A real DuckDB warehouse holding the contract marts, for the report tests.

Until the dbt marts are built in tests, `build_warehouse` creates the tables of the marts
contract (`marts.dmf_loads`, `dmf_events`, …) with realistic rows, and the optional
`enrichment.*` tables. The weekly `rpt_*` models are then built from their real dbt SQL files
(`build_reporting_models`), so the report reads exactly what dbt will give it. To switch the
report tests to dbt-built marts, replace `build_warehouse` with a dbt run over simulator loads
and keep the `Scenario` dates.

The rows include the hostile values the report must neutralise: a manufacturer that is an
Excel formula, an ingredient starting with "@", a site starting with "+", AI text starting
with "=", plus Korean text, several weeks of days for the trends, a rejected day and a
baseline day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb

from support.mart_contracts import create_mart_tables, mart_contracts
from support.model_sql import REF, build_day_decisions, plain_sql, seed_rows

PROJECT_DIR = Path(__file__).resolve().parents[2]
REPORTING_MODELS = PROJECT_DIR / "models" / "marts" / "reporting"

BASELINE_DAY = date(2026, 10, 20)
REJECTED_DAY = date(2026, 11, 14)
QUIET_DAY = date(2026, 11, 19)  # accepted, no events, AI skipped (diff_empty)
RICH_DAY = date(2026, 11, 20)  # the hostile, Korean, AI-enriched day
LAST_DAY = date(2026, 11, 21)  # accepted, a few events, AI failed (auth)
WEEKLY_DAY = date(2026, 11, 23)  # Monday: weekly report covering 11-16 .. 11-22
NO_LOAD_DAY = date(2026, 11, 22)  # Sunday without a load

FORMULA_MANUFACTURER = '=HYPERLINK("http://example.com","x")'
AT_INGREDIENT = "@아토르바스타틴칼슘삼수화물"
PLUS_PLACE = "+82 충청북도 청주시 흥덕구 오송읍 오송생명2로 187"
AI_HEADLINE = "=긴급 1건: 관심 성분 클로피도그렐 등록 취하"
MINUS_COMMENT = "-제조소 교체로 변경 허가가 필요할 수 있습니다"
UTC = UTC
RULES = {int(rule["priority"]): rule for rule in seed_rows("severity_rules")}


@dataclass(frozen=True)
class Scenario:
    baseline_day: date = BASELINE_DAY
    rejected_day: date = REJECTED_DAY
    quiet_day: date = QUIET_DAY
    rich_day: date = RICH_DAY
    last_day: date = LAST_DAY
    weekly_day: date = WEEKLY_DAY
    no_load_day: date = NO_LOAD_DAY


# The marts the fixture fills, created from their dbt contracts (tests/mart_contracts.py);
# dmf_daily_summary is then derived from the others, as dbt does.
FIXTURE_MARTS = [
    "dmf_loads",
    "dmf_events",
    "dmf_event_field_changes",
    "dmf_signals",
    "dmf_registrations",
    "dmf_registration_history",
    "dmf_watchlist_unmatched",
    "dmf_daily_summary",
]
LOAD_COLUMNS = (
    "load_id, as_of_date, verdict, reason, is_baseline, previous_accepted_load_id, "
    "previous_accepted_as_of, total_count, fetched_count, distinct_count, "
    "duplicate_count, pages, requests, retries, duration_s, started_at, finished_at, "
    "rejected_gates, load_status"
)
SIGNAL_COLUMNS = (
    "as_of_date, load_id, signal_id, is_gate, fired, severity, observed, baseline, "
    "baseline_text, window_text, context, description"
)
REGISTRATION_COLUMNS = (
    "dmf_key, permit_no, ingredient_name, applicant, applicant_bizrno, "
    "manufacturer, manufacture_place, countries, permit_date, notice_code, "
    "on_watchlist"
)


def _values(columns: str) -> str:
    return f"({columns}) values ({', '.join('?' for _ in columns.split(', '))})"


ENRICHMENT_DDL = """
create schema if not exists enrichment;
create table enrichment.enrichment_run (
    run_id varchar, as_of_date date, kind varchar, status varchar, skip_reason varchar,
    headline varchar, summary_md varchar, risk_note varchar, commentary varchar, model varchar,
    prompt_sha256 varchar, created_at timestamptz
);
create table enrichment.enrichment (
    run_id varchar, as_of_date date, kind varchar, item_key varchar, importance varchar,
    content varchar, detail_json varchar, applied integer, created_at timestamptz
);
create table enrichment.agy_calls (
    call_id varchar, run_id varchar, as_of_date date, started_at timestamptz,
    duration_s double, exit_code integer, status varchar, error_kind varchar,
    transport varchar, turns integer, input_tokens integer, output_tokens integer,
    cached_tokens integer, thinking_tokens integer, total_tokens integer,
    prompt_chars integer, prompt_sha256 varchar, model varchar, effort varchar,
    schema_valid integer, error varchar, purpose varchar, attempt integer, stdout_path varchar
);
create table enrichment.proposals (
    proposal_id varchar, as_of_date date, kind varchar, watch_term varchar,
    candidate_ingredient_name varchar, base_form varchar, salt_form varchar,
    confidence double, reason varchar, status varchar, created_at timestamptz,
    decided_at timestamptz, decided_by varchar, decision_note varchar
);
"""

SEVERITY_RANK = {"CRITICAL": 1, "HIGH": 2, "MEDIUM": 3, "INFO": 4, "COSMETIC": 5}

INGREDIENTS = [
    ("에날라프릴말레산염", "Inke, S.A(Grupo vita)", "스페인"),
    ("트리메부틴말레산염", "ZACH SYSTEM", "프랑스"),
    ("메실산독사조신", "Excella GmbH & Co. KG", "독일"),
    ("암로디핀베실산염", "Zhejiang Huahai Pharmaceutical co., ltd", "중국"),
    ("로수바스타틴칼슘", "MSN Laboratories Private Limited", "인도"),
    ("클로피도그렐황산수소염", "Dr. Reddy's Laboratories Ltd.", "인도"),
    ("메트포르민염산염", "Wanbury Limited", "인도,인도"),
    ("세파클러수화물", "(주)종근당바이오", "대한민국"),
    ("아세클로페낙", "Amoli Organics Pvt. Ltd.", "인도"),
    ("레보세티리진염산염", "Hetero Labs Limited", "인도"),
]
APPLICANTS = [
    ("(주)삼오제약", "1208128636"),
    ("성우화학(주)", "1248191048"),
    ("삼일제약(주)", "1348500765"),
    ("(주)한국유나이티드제약", "2108117520"),
    ("대웅바이오(주)", "1298609183"),
]


def _ts(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)


class _Builder:
    def __init__(self) -> None:
        self.loads: list[tuple] = []
        self.events: list[dict] = []
        self.changes: list[tuple] = []
        self.signals: list[tuple] = []
        self.seq = 0

    def event(
        self,
        day: date,
        load_id: str,
        event_type: str,
        severity: str,
        *,
        ingredient: str,
        applicant: tuple[str, str],
        manufacturer: str,
        place: str,
        countries: str,
        permit_no: str | None,
        watch: str | None = None,
        changed_fields: str | None = None,
        change_kind: str | None = None,
        rule_priority: int = 50,
        notice_code: str = "별표1",
    ) -> str:
        self.seq += 1
        key = f"k{self.seq:05d}"
        self.events.append(
            dict(
                event_id=f"{day:%Y%m%d}-{key}",
                as_of_date=day,
                load_id=load_id,
                dmf_key=key,
                permit_no=permit_no,
                event_type=event_type,
                severity=severity,
                severity_rank=SEVERITY_RANK[severity],
                rule_priority=rule_priority,
                rationale=RULES.get(rule_priority, {}).get("rationale"),
                rationale_ko=RULES.get(rule_priority, {}).get("rationale_ko", "시험용 규칙의 사유입니다."),
                on_watchlist=watch is not None,
                watch_terms=watch,
                watch_matches=f"{watch} (exact)" if watch else None,
                watch_owners="김지현" if watch else None,
                ingredient_name=ingredient,
                applicant=applicant[0],
                applicant_bizrno=applicant[1],
                manufacturer=manufacturer,
                manufacture_place=place,
                countries=countries,
                permit_date=day - timedelta(days=3),
                notice_code=notice_code,
                changed_fields=changed_fields,
                change_kind=change_kind,
            )
        )
        return key

    def change(
        self,
        day: date,
        key: str,
        permit_no: str | None,
        field: str,
        before: str | None,
        after: str | None,
        kind: str,
        severity: str,
        watch: bool,
        detail: str | None = None,
    ):
        self.changes.append(
            (day, key, permit_no, field, before, after, kind, detail, severity, SEVERITY_RANK[severity], watch)
        )


def _signal_rows(day: date, load_id: str, *, rejected: bool, burst: bool) -> list[tuple]:
    ctx = json.dumps(
        {
            "top_applicants": [["(주)한국유나이티드제약", 21], ["대웅바이오(주)", 9]],
            "top_groups": [["209-J", 33]],
            "date_spread": {"2026-11": 30},
        },
        ensure_ascii=False,
    )
    window = f"{day - timedelta(days=30):%Y-%m-%d} ~ {day - timedelta(days=1):%Y-%m-%d}"
    rows = [
        (
            day,
            load_id,
            "total_count_drop",
            True,
            rejected,
            "CRITICAL",
            8012.0 if rejected else 9170.0,
            9168.0,
            "마지막 반영 적재의 97%",
            window,
            ctx if rejected else None,
            "전체 건수가 마지막 반영 적재보다 3% 넘게 줄었습니다",
        ),
        (
            day,
            load_id,
            "zero_records",
            True,
            False,
            "CRITICAL",
            9170.0,
            0.0,
            "0건",
            window,
            None,
            "수집 건수가 0건입니다",
        ),
        (
            day,
            load_id,
            "all_changed",
            True,
            False,
            "CRITICAL",
            0.01,
            0.30,
            "전체의 30%",
            window,
            None,
            "CHANGED 비율이 30%를 넘었습니다",
        ),
        (
            day,
            load_id,
            "withdrawn_burst",
            False,
            burst,
            "HIGH",
            2.0 if burst else 0.0,
            1.0,
            "최근 30일 최댓값 1, 중앙값 0",
            window,
            ctx if burst else None,
            "취하 건수가 최근 30일 최댓값을 넘었습니다",
        ),
        (
            day,
            load_id,
            "slow_fetch",
            False,
            False,
            "INFO",
            31.5,
            30.2,
            "30일 중앙값 × 3",
            window,
            None,
            "수집 시간이 평소보다 깁니다",
        ),
    ]
    return rows


def _populate(b: _Builder, bulk_day_events: int) -> None:
    day = BASELINE_DAY
    previous: tuple[str, date] | None = None
    i = 0
    total = 9150
    while day <= LAST_DAY:
        if day == NO_LOAD_DAY:
            day += timedelta(days=1)
            continue
        load_id = f"{day:%Y%m%d}T003000Z-{i:04x}"
        rejected = day == REJECTED_DAY
        baseline = day == BASELINE_DAY
        verdict = "rejected" if rejected else "accepted"
        distinct = 8012 if rejected else total
        b.loads.append(
            (
                load_id,
                day,
                verdict,
                "전체 건수가 마지막 반영 적재보다 12.6% 적어 게이트가 거부했습니다" if rejected else None,
                baseline,
                previous[0] if previous else None,
                previous[1] if previous else None,
                distinct,
                distinct + (2 if i % 7 == 0 else 0),
                distinct,
                2 if i % 7 == 0 else 0,
                19,
                19 + (i % 3),
                i % 3,
                24.0 + (i % 5) * 1.5,
                _ts(day, 0, 30),
                _ts(day, 0, 31),
                "total_count_drop" if rejected else None,
                "rejected_by_gate" if rejected else "baseline" if baseline else "accepted",
            )
        )
        b.signals.extend(_signal_rows(day, load_id, rejected=rejected, burst=day == RICH_DAY))
        if not rejected and not baseline and day != QUIET_DAY:
            if day == RICH_DAY:
                _rich_day(b, day, load_id)
            else:
                _ordinary_day(b, day, load_id, i)
            if day == RICH_DAY and bulk_day_events:
                _bulk(b, day, load_id, bulk_day_events)
        if not rejected:
            previous = (load_id, day)
            total += 1
        i += 1
        day += timedelta(days=1)


def _ordinary_day(b: _Builder, day: date, load_id: str, i: int) -> None:
    for n in range(i % 4 + 1):
        ingr, mfr, country = INGREDIENTS[(i + n) % len(INGREDIENTS)]
        b.event(
            day,
            load_id,
            "NEW",
            "INFO",
            ingredient=ingr,
            applicant=APPLICANTS[(i + n) % 5],
            manufacturer=mfr,
            place=f"{country} 공장 {n + 1}",
            countries=country,
            permit_no=f"{day:%Y%m%d}-{200 + n}-J-{i * 10 + n}",
        )
    for n in range(i % 3):
        ingr, mfr, country = INGREDIENTS[(i * 3 + n) % len(INGREDIENTS)]
        key = b.event(
            day,
            load_id,
            "CHANGED",
            "MEDIUM",
            ingredient=ingr,
            applicant=APPLICANTS[n % 5],
            manufacturer=mfr + " (신규)",
            place="변경된 주소",
            countries=country,
            permit_no=f"2019080{n + 1}-209-J-{i}",
            changed_fields="manufacturer",
            change_kind="substantive",
        )
        b.change(
            day,
            key,
            f"2019080{n + 1}-209-J-{i}",
            "manufacturer",
            mfr,
            mfr + " (신규)",
            "substantive",
            "MEDIUM",
            False,
            "제조소명 교체",
        )
    if i % 5 == 0:
        ingr, mfr, country = INGREDIENTS[i % len(INGREDIENTS)]
        b.event(
            day,
            load_id,
            "WITHDRAWN",
            "HIGH",
            ingredient=ingr,
            applicant=APPLICANTS[2],
            manufacturer=mfr,
            place="소재지",
            countries=country,
            permit_no=f"20121228-168-I-{i}-04",
        )


def _rich_day(b: _Builder, day: date, load_id: str) -> None:
    watch = "아토르바스타틴"
    b.event(
        day,
        load_id,
        "NEW",
        "MEDIUM",
        ingredient=AT_INGREDIENT,
        applicant=APPLICANTS[0],
        manufacturer=FORMULA_MANUFACTURER,
        place=PLUS_PLACE,
        countries="대한민국",
        permit_no=None,
        watch=watch,
        rule_priority=40,
        notice_code="",
    )
    b.event(
        day,
        load_id,
        "NEW",
        "INFO",
        ingredient="암로디핀베실산염",
        applicant=APPLICANTS[1],
        manufacturer="Zhejiang Huahai Pharmaceutical co., ltd",
        place="Lizhuang, Xunqiao, Linhai, 317024, Zhejiang, China",
        countries="중국,중국",
        permit_no="20261120-209-J-501",
    )
    key = b.event(
        day,
        load_id,
        "CHANGED",
        "CRITICAL",
        ingredient="에날라프릴말레산염",
        applicant=APPLICANTS[0],
        manufacturer="Zhejiang Huahai Pharmaceutical co., ltd",
        place="Lizhuang, Xunqiao, Linhai, Zhejiang, China",
        countries="중국",
        permit_no="20050831-12-B-49-06",
        watch="에날라프릴",
        changed_fields="manufacturer,manufacture_place,countries",
        change_kind="substantive",
        rule_priority=10,
    )
    b.change(
        day,
        key,
        "20050831-12-B-49-06",
        "manufacturer",
        "Inke, S.A(Grupo vita)",
        "Zhejiang Huahai Pharmaceutical co., ltd",
        "substantive",
        "CRITICAL",
        True,
        "제조소 교체",
    )
    b.change(
        day,
        key,
        "20050831-12-B-49-06",
        "manufacture_place",
        "Area Industrial del Llobregat, C/Argent 1, 08755 Castellbisbal Barcelona",
        "Lizhuang, Xunqiao, Linhai, Zhejiang, China",
        "substantive",
        "CRITICAL",
        True,
        None,
    )
    b.change(day, key, "20050831-12-B-49-06", "countries", "스페인", "중국", "substantive", "CRITICAL", True, None)
    key = b.event(
        day,
        load_id,
        "CHANGED",
        "COSMETIC",
        ingredient="트리메부틴말레산염",
        applicant=APPLICANTS[2],
        manufacturer="ZACH SYSTEM S.A.",
        place="Avrille, France",
        countries="프랑스",
        permit_no="20050831-13-B-55-02",
        changed_fields="manufacturer",
        change_kind="cosmetic",
    )
    b.change(
        day,
        key,
        "20050831-13-B-55-02",
        "manufacturer",
        "ZACH SYSTEM",
        "ZACH SYSTEM S.A.",
        "cosmetic",
        "COSMETIC",
        False,
        "문장부호만 다름",
    )
    key = b.event(
        day,
        load_id,
        "CHANGED",
        "INFO",
        ingredient="메실산독사조신",
        applicant=APPLICANTS[3],
        manufacturer="Excella GmbH & Co. KG",
        place="Feucht, Germany",
        countries="독일",
        permit_no="20260922-190-I-769-04",
        changed_fields="permit_no",
        change_kind="substantive",
    )
    b.change(
        day,
        key,
        "20260922-190-I-769-04",
        "permit_no",
        None,
        "20260922-190-I-769-04",
        "substantive",
        "INFO",
        False,
        "permit_no_assigned",
    )
    b.event(
        day,
        load_id,
        "WITHDRAWN",
        "CRITICAL",
        ingredient="클로피도그렐황산수소염",
        applicant=APPLICANTS[3],
        manufacturer="Dr. Reddy's Laboratories Ltd.",
        place="Hyderabad, India",
        countries="인도",
        permit_no="20190801-209-J-399",
        watch="클로피도그렐",
        rule_priority=5,
    )
    b.event(
        day,
        load_id,
        "WITHDRAWN",
        "HIGH",
        ingredient="아세클로페낙",
        applicant=APPLICANTS[4],
        manufacturer="Amoli Organics Pvt. Ltd.",
        place="Vapi, Gujarat",
        countries="인도",
        permit_no="20190801-209-J-400",
    )


def _bulk(b: _Builder, day: date, load_id: str, n: int) -> None:
    kinds = ["NEW", "CHANGED", "WITHDRAWN"]
    sevs = ["CRITICAL", "HIGH", "MEDIUM", "INFO", "COSMETIC"]
    for j in range(n):
        ingr, mfr, country = INGREDIENTS[j % len(INGREDIENTS)]
        et = kinds[j % 3]
        sev = sevs[j % 5]
        key = b.event(
            day,
            load_id,
            et,
            sev,
            ingredient=f"{ingr}-{j}",
            applicant=APPLICANTS[j % 5],
            manufacturer=mfr,
            place=f"{country} 산업단지 {j}로",
            countries=country,
            permit_no=f"2020{j % 12 + 1:02d}01-{j % 400}-K-{j}",
            watch="대량" if j % 50 == 0 else None,
            changed_fields="manufacturer" if et == "CHANGED" else None,
            change_kind="substantive" if et == "CHANGED" else None,
        )
        if et == "CHANGED":
            b.change(day, key, None, "manufacturer", mfr, mfr + " 2공장", "substantive", sev, j % 50 == 0, None)


SUMMARY_SQL = """
insert into marts.dmf_daily_summary by name
with latest_loads as (
    select loads.* from marts.dmf_day_decisions as day_decisions
    inner join marts.dmf_loads as loads on loads.load_id = day_decisions.load_id
),
event_counts as (
    select as_of_date,
        count(*) filter (where event_type = 'NEW') as new_count,
        count(*) filter (where event_type = 'CHANGED') as changed_count,
        count(*) filter (where event_type = 'WITHDRAWN') as withdrawn_count,
        count(*) as event_count,
        count(*) filter (where severity = 'CRITICAL') as critical_count,
        count(*) filter (where severity = 'HIGH') as high_count,
        count(*) filter (where severity = 'MEDIUM') as medium_count,
        count(*) filter (where severity = 'INFO') as info_count,
        count(*) filter (where severity = 'COSMETIC') as cosmetic_count,
        count(*) filter (where on_watchlist) as watchlist_hit_count
    from marts.dmf_events group by 1
),
signal_counts as (
    select load_id, count(*) filter (where fired) as fired_signal_count,
        count(*) filter (where fired and is_gate) as fired_gate_count
    from marts.dmf_signals group by 1
)
select l.as_of_date, l.load_id, l.verdict, l.reason, l.is_baseline,
    case when l.verdict = 'accepted' then l.distinct_count end as registry_count,
    coalesce(e.new_count, 0) as new_count, coalesce(e.changed_count, 0) as changed_count,
    coalesce(e.withdrawn_count, 0) as withdrawn_count, coalesce(e.event_count, 0) as event_count,
    coalesce(e.critical_count, 0) as critical_count, coalesce(e.high_count, 0) as high_count,
    coalesce(e.medium_count, 0) as medium_count, coalesce(e.info_count, 0) as info_count,
    coalesce(e.cosmetic_count, 0) as cosmetic_count,
    coalesce(e.watchlist_hit_count, 0) as watchlist_hit_count,
    coalesce(s.fired_signal_count, 0) as fired_signal_count,
    coalesce(s.fired_gate_count, 0) as fired_gate_count
from latest_loads l
left join event_counts e on e.as_of_date = l.as_of_date
left join signal_counts s on s.load_id = l.load_id
"""


def _registrations(con: duckdb.DuckDBPyConnection) -> None:
    rows = []
    for n, (ingr, mfr, country) in enumerate(INGREDIENTS):
        copies = 1 if ingr in ("트리메부틴말레산염", "메실산독사조신") else 3
        for c in range(copies):
            rows.append(
                (
                    f"r{n:03d}{c}",
                    f"20190801-{209 + c}-J-{n}",
                    ingr,
                    APPLICANTS[c][0],
                    APPLICANTS[c][1],
                    mfr if copies == 1 else f"{mfr} {c + 1}공장",
                    "소재지",
                    country,
                    date(2019, 8, 1),
                    "별표1",
                    False,
                )
            )
    rows.append(
        (
            "r999",
            None,
            AT_INGREDIENT,
            APPLICANTS[0][0],
            APPLICANTS[0][1],
            FORMULA_MANUFACTURER,
            PLUS_PLACE,
            "대한민국",
            RICH_DAY,
            "",
            True,
        )
    )
    con.executemany(f"insert into marts.dmf_registrations {_values(REGISTRATION_COLUMNS)}", rows)


def _enrichment_runs() -> list[tuple]:
    """The AI runs: a failed then a successful rich day, a skipped quiet day, a failed last day, a weekly."""
    return [
        (
            "run-rich-1",
            RICH_DAY,
            "daily",
            "FAILED",
            "timeout",
            None,
            None,
            None,
            None,
            None,
            "aa",
            _ts(RICH_DAY, 0, 40),
        ),
        (
            "run-rich-2",
            RICH_DAY,
            "daily",
            "OK",
            None,
            AI_HEADLINE,
            "관심 성분 **클로피도그렐황산수소염**의 등록 1건이 목록에서 사라졌습니다.\n"
            "에날라프릴말레산염은 제조소가 스페인에서 중국으로 바뀌었습니다.\n"
            "+신규 등록 2건 중 1건은 아토르바스타틴 계열입니다.",
            "@취하된 등록을 쓰는 완제품은 공급처 확인이 필요합니다.",
            None,
            "gemini-3-flash",
            "bb",
            _ts(RICH_DAY, 0, 50),
        ),
        (
            "run-quiet",
            QUIET_DAY,
            "daily",
            "SKIPPED",
            "diff_empty",
            None,
            None,
            None,
            None,
            None,
            None,
            _ts(QUIET_DAY, 0, 40),
        ),
        ("run-last", LAST_DAY, "daily", "FAILED", "auth", None, None, None, None, None, None, _ts(LAST_DAY, 0, 40)),
        (
            "run-week",
            WEEKLY_DAY,
            "weekly",
            "OK",
            None,
            "=이번 주 요약",
            None,
            None,
            "이번 주 취하 3건 가운데 2건이 관심목록입니다.\n-다음 주에는 제조소 변경 신고 일정을 확인하세요.",
            "gemini-3.1-pro-high",
            "cc",
            _ts(WEEKLY_DAY, 1, 10),
        ),
    ]


def _enrichment_items(keys: list[str]) -> list[tuple]:
    """Event comments (one superseded by a later run) and a signal hypothesis of the rich day."""
    return [
        ("run-rich-2", RICH_DAY, "event_comment", keys[0], "HIGH", MINUS_COMMENT, None, 1, _ts(RICH_DAY, 0, 50)),
        (
            "run-rich-1",
            RICH_DAY,
            "event_comment",
            keys[2],
            "HIGH",
            "이전 실행의 코멘트",
            None,
            1,
            _ts(RICH_DAY, 0, 40),
        ),
        (
            "run-rich-2",
            RICH_DAY,
            "event_comment",
            keys[2],
            "HIGH",
            "제조소와 제조국이 함께 바뀌었습니다: 변경 허가 대상인지 확인하세요.",
            None,
            1,
            _ts(RICH_DAY, 0, 50),
        ),
        (
            "run-rich-2",
            RICH_DAY,
            "anomaly_hypothesis",
            "withdrawn_burst",
            "MEDIUM",
            "같은 등록그룹 209-J 의 일괄 정리일 수 있습니다.",
            None,
            1,
            _ts(RICH_DAY, 0, 50),
        ),
    ]


def _agy_calls() -> list[tuple]:
    """The audit rows of the agy calls: a timeout, a success, a login error."""
    return [
        (
            "call-1",
            "run-rich-1",
            RICH_DAY,
            _ts(RICH_DAY, 0, 35),
            600.0,
            124,
            "TIMEOUT",
            "timeout",
            "stdin",
            1,
            0,
            0,
            0,
            0,
            0,
            20000,
            "aa",
            "gemini-3-flash",
            "low",
            0,
            "timed out",
        ),
        (
            "call-2",
            "run-rich-2",
            RICH_DAY,
            _ts(RICH_DAY, 0, 45),
            42.5,
            0,
            "SUCCESS",
            None,
            "stdin",
            1,
            28300,
            910,
            12000,
            1500,
            30710,
            21000,
            "bb",
            "gemini-3-flash",
            "low",
            1,
            None,
        ),
        (
            "call-3",
            "run-last",
            LAST_DAY,
            _ts(LAST_DAY, 0, 35),
            1.2,
            1,
            "ERROR",
            "auth",
            "stdin",
            0,
            0,
            0,
            0,
            0,
            0,
            21000,
            "dd",
            "gemini-3-flash",
            "low",
            0,
            "login required",
        ),
    ]


def _alias_proposals() -> list[tuple]:
    """Alias proposals: two pending (one older), one accepted."""
    return [
        (
            "p-old",
            RICH_DAY - timedelta(days=10),
            "ingredient_alias",
            "아토르바스타틴",
            "아토르바스타틴칼슘삼수화물",
            "아토르바스타틴",
            "칼슘",
            0.82,
            "=염과 수화물 표기만 다릅니다",
            "PENDING",
            _ts(RICH_DAY - timedelta(days=10), 1),
            None,
            None,
            None,
        ),
        (
            "p-new",
            RICH_DAY - timedelta(days=1),
            "ingredient_alias",
            "클로피도그렐",
            "클로피도그렐황산수소염",
            "클로피도그렐",
            "황산수소염",
            0.9,
            "염 표기",
            "PENDING",
            _ts(RICH_DAY - timedelta(days=1), 1),
            None,
            None,
            None,
        ),
        (
            "p-done",
            RICH_DAY - timedelta(days=20),
            "ingredient_alias",
            "메트포르민",
            "메트포르민염산염",
            "메트포르민",
            "염산염",
            0.95,
            "염산염",
            "ACCEPTED",
            _ts(RICH_DAY - timedelta(days=20), 1),
            _ts(RICH_DAY - timedelta(days=15), 1),
            "kim",
            "ok",
        ),
    ]


def _enrichment(con: duckdb.DuckDBPyConnection, b: _Builder) -> None:
    con.execute(ENRICHMENT_DDL)
    rich_keys = [e["dmf_key"] for e in b.events if e["as_of_date"] == RICH_DAY][:7]
    con.executemany("insert into enrichment.enrichment_run values (?,?,?,?,?,?,?,?,?,?,?,?)", _enrichment_runs())
    con.executemany("insert into enrichment.enrichment values (?,?,?,?,?,?,?,?,?)", _enrichment_items(rich_keys))
    columns = (
        "call_id, run_id, as_of_date, started_at, duration_s, exit_code, status, error_kind, transport, turns, "
        "input_tokens, output_tokens, cached_tokens, thinking_tokens, total_tokens, prompt_chars, prompt_sha256, "
        "model, effort, schema_valid, error"
    )
    con.executemany(f"insert into enrichment.agy_calls ({columns}) values ({', '.join('?' * 21)})", _agy_calls())
    con.executemany("insert into enrichment.proposals values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", _alias_proposals())


def build_reporting_models(con: duckdb.DuckDBPyConnection, schema: str = "marts") -> list[str]:
    """Build the rpt_ models from their dbt SQL (ref() → schema.table), in dependency order."""
    files = sorted(REPORTING_MODELS.glob("rpt_*.sql"))
    pending = {p.stem: p.read_text(encoding="utf-8") for p in files}
    built: list[str] = []
    ref = REF  # from model_sql
    while pending:
        progressed = False
        for name, sql in sorted(pending.items()):
            deps = {d for d in ref.findall(sql) if d.startswith("rpt_")}
            if deps - set(built):
                continue
            con.execute(f"create or replace table {schema}.{name} as {plain_sql(sql, schema)}")
            built.append(name)
            del pending[name]
            progressed = True
        if not progressed:
            raise RuntimeError(f"unresolvable rpt_ dependencies: {sorted(pending)}")
    return built


def rendered_catalog(overrides: dict | None = None) -> list[dict[str, str]]:
    """seeds/signal_catalog.csv with its {var} placeholders filled from dbt_project.yml's vars
    (and `overrides`, like `--vars`), the way macro render_thresholds fills them in dbt:
    a *_ratio as a percent, anything else as its value."""
    import csv

    import yaml

    values = {
        **yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text(encoding="utf-8"))["vars"],
        **(overrides or {}),
    }
    texts = {
        name: f"{value * 100:g}%" if name.endswith("_ratio") else f"{value:g}"
        for name, value in values.items()
        if isinstance(value, (int, float))
    }
    with (PROJECT_DIR / "seeds" / "signal_catalog.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for column in ("description", "what_to_check", "description_ko", "what_to_check_ko"):
            row[column] = re.sub(r"\{([a-z_]+)\}", lambda m: texts.get(m.group(1), m.group(0)), row[column])
    return rows


def _bulk_insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict], db: Path) -> None:
    """executemany is slow for the 10,000-event benchmark; a JSON file read by DuckDB is not."""
    if not rows:
        return
    staging = db.with_name(db.name + "." + table + ".jsonl")
    with staging.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")
    columns = ", ".join(rows[0])
    con.execute(
        f"insert into {table} ({columns}) select {columns} "
        f"from read_json_auto('{staging}', format = 'newline_delimited')"
    )
    staging.unlink()


def build_warehouse(path: Path, *, enrichment: bool = True, bulk_day_events: int = 0) -> Scenario:
    """Create the contract marts (and, optionally, the enrichment tables) in a DuckDB file."""
    b = _Builder()
    _populate(b, bulk_day_events)
    with duckdb.connect(str(path)) as con:
        create_mart_tables(con, FIXTURE_MARTS)
        con.executemany(f"insert into marts.dmf_loads {_values(LOAD_COLUMNS)}", b.loads)
        con.execute("update marts.dmf_loads set fetch_status = 'complete'")  # every fixture load was fetched whole
        build_day_decisions(con)  # which load decides each day: the mart's own SQL
        _bulk_insert(con, "marts.dmf_events", b.events, path)
        change_cols = [
            "as_of_date",
            "dmf_key",
            "permit_no",
            "field_name",
            "before_value",
            "after_value",
            "change_kind",
            "change_detail",
            "severity",
            "severity_rank",
            "on_watchlist",
        ]
        _bulk_insert(con, "marts.dmf_event_field_changes", [dict(zip(change_cols, row)) for row in b.changes], path)
        con.executemany(f"insert into marts.dmf_signals {_values(SIGNAL_COLUMNS)}", b.signals)
        # the Korean texts come from the seed, rendered as in the dbt-built mart
        con.executemany(
            "update marts.dmf_signals set description_ko = ?, what_to_check_ko = ? where signal_id = ?",
            [(row["description_ko"], row["what_to_check_ko"], row["signal_id"]) for row in rendered_catalog()],
        )
        con.execute(
            "insert into marts.dmf_watchlist_unmatched "
            "(as_of_date, watch_term, term_kind, unmatched_reason, candidates) values (?, ?, ?, ?, ?)",
            [RICH_DAY, "=SUM(1)", "ingredient", "never_matched", json.dumps(["스말", "+섬"], ensure_ascii=False)],
        )
        _registrations(con)
        con.execute(SUMMARY_SQL)
        build_reporting_models(con)
        if enrichment:
            _enrichment(con, b)
    return Scenario()


# --- the fixture's own checks: it must keep matching the contract -----------------------------


def contract_gaps(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """Contract columns (name and type) a mart of the warehouse lacks (works on dbt-built marts too)."""
    gaps = {}
    for table, columns in mart_contracts().items():
        present = {
            (name, data_type.lower())
            for name, data_type in con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = 'marts' and table_name = ?",
                [table],
            ).fetchall()
        }
        missing = {f"{name} {data_type}" for name, data_type in columns} - {f"{n} {d}" for n, d in present}
        if missing:
            gaps[table] = missing
    return gaps
