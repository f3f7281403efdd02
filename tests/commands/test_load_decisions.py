"""A person overrules the gates: `dmf accept-load` publishes a complete load a gate rejected,
`dmf reject-load` withdraws a published day; both are recorded (append-only), rebuild and say
which published days changed. Real runs: simulator, dlt, dbt, the `dmf` command, the xlsx."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import openpyxl
import pytest

from dmf_watch.commands.ground_truth import compare_day
from dmf_watch.simulator.registry import SyntheticRegistry
from support.mfds import SERVICE_KEY
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
START = date(2026, 11, 16)
DAYS = [START + timedelta(days=n) for n in range(5)]
BULK = 24  # 2% of 1,200: a real bulk withdrawal the withdrawn_share gate (1%) stops


class BulkWithdrawal:
    """The registry, with BULK registrations that no later day touches gone from day 2 on."""

    def __init__(self, registry: SyntheticRegistry, days: int) -> None:
        self.registry = registry
        touched = {
            entry.get(key)
            for day in range(2, days + 1)
            for entry in registry.truth_for(day)
            for key in ("permit_no", "permit_no_before")
        }
        candidates = [
            item["DMF_PERMIT_NO"]
            for item in registry.items_for(1)
            if item["DMF_PERMIT_NO"] and item["DMF_PERMIT_NO"] not in touched
        ]
        self.removed = set(candidates[100 : 100 + BULK])

    def items_for(self, day: int) -> list[dict]:
        items = self.registry.items_for(day)
        return items if day == 1 else [i for i in items if i["DMF_PERMIT_NO"] not in self.removed]

    def day_of(self, as_of: date) -> int:
        return self.registry.day_of(as_of)

    def truth_for(self, day: int) -> list[dict]:
        return self.registry.truth_for(day)


def dmf(settings, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        DMF_AI_DISABLED="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def counts(settings, as_of: date) -> dict[str, int]:
    return dict(
        query(settings, "select event_type, count(*) from marts.dmf_events where as_of_date = ? group by 1", [as_of])
    )


@pytest.fixture(scope="module")
def decided(tmp_path_factory):
    from dmf_watch.core.config import load_settings

    root = tmp_path_factory.mktemp("decisions")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    source = BulkWithdrawal(SyntheticRegistry(seed=21, size=1200, start_date=START), len(DAYS))
    steps: dict[str, object] = {}
    steps["days_1_2"] = run_days(settings, source, [(DAYS[0], None), (DAYS[1], None)], SERVICE_KEY)
    steps["accept"] = dmf(
        settings,
        "accept-load",
        "--as-of",
        str(DAYS[1]),
        "--by",
        "김검토",
        "--reason",
        "식약처 사이트에서 일괄 취하 확인",
    )
    steps["report_2"] = dmf(settings, "report", "--as-of", str(DAYS[1]))
    steps["days_3_4"] = run_days(settings, source, [(DAYS[2], None), (DAYS[3], None)], SERVICE_KEY)
    steps["before_reject"] = {day: counts(settings, day) for day in DAYS[2:4]}
    steps["reject"] = dmf(
        settings, "reject-load", "--as-of", str(DAYS[2]), "--by", "박확인", "--reason", "원천 데이터 오류 공지"
    )
    steps["day_5"] = run_days(settings, source, [(DAYS[4], "truncate_last_page")], SERVICE_KEY)
    steps["accept_partial"] = dmf(settings, "accept-load", "--as-of", str(DAYS[4]), "--by", "김검토", "--reason", "x")
    steps["reject_unpublished"] = dmf(
        settings, "reject-load", "--as-of", str(DAYS[4]), "--by", "김검토", "--reason", "x"
    )
    return settings, source, steps


def test_a_bulk_withdrawal_is_rejected_then_published_when_a_person_accepts_it(decided):
    settings, source, steps = decided
    assert [o.exit_code for o in steps["days_1_2"]] == [0, 2]
    accept = steps["accept"]
    print(accept.stdout)
    assert accept.returncode == 0, accept.stderr
    assert (
        f"{DAYS[1]}  load " in accept.stdout and "accepted by 김검토: 식약처 사이트에서 일괄 취하 확인" in accept.stdout
    )
    published = counts(settings, DAYS[1])
    truth_withdrawn = sum(1 for t in source.truth_for(2) if t["event_type"] == "WITHDRAWN")
    assert published["WITHDRAWN"] == BULK + truth_withdrawn
    line = next(printed for printed in accept.stdout.splitlines() if printed.startswith(f"published  {DAYS[1]}"))
    assert line == (
        f"published  {DAYS[1]}  nothing → {published.get('NEW', 0)} NEW, "
        f"{published.get('CHANGED', 0)} CHANGED, {published['WITHDRAWN']} WITHDRAWN"
    )
    verdict, decision, by, reason, gates = query(
        settings,
        "select verdict, decision, decided_by, decision_reason, rejected_gates from marts.dmf_loads where as_of_date = ?",
        [DAYS[1]],
    )[0]
    assert (verdict, decision, by, reason) == ("accepted", "accept", "김검토", "식약처 사이트에서 일괄 취하 확인")
    assert "withdrawn_share" in gates
    # the signals are still shown, once each
    catalog = query(settings, "select count(*) from seeds.signal_catalog")[0][0]
    assert query(
        settings,
        "select count(*), count(distinct signal_id), bool_or(fired and signal_id = 'withdrawn_share') "
        "from marts.dmf_signals where as_of_date = ?",
        [DAYS[1]],
    ) == [(catalog, catalog, True)]


def test_the_accepted_days_report_says_who_accepted_it_after_a_gate_fired(decided):
    settings, _, steps = decided
    assert steps["report_2"].returncode == 0, steps["report_2"].stderr
    sheet = openpyxl.load_workbook(settings.reports_dir / f"dmf_daily_{DAYS[1]:%Y%m%d}.xlsx")["요약"]
    texts = [c.value for row in sheet.iter_rows() for c in row if isinstance(c.value, str)]
    assert any("김검토 님이 게이트 발동 후 승인함 (사유: 식약처 사이트에서 일괄 취하 확인" in t for t in texts)
    assert "반영 — 게이트 발동 후 사람이 승인" in texts


def test_the_day_after_an_accepted_day_is_compared_with_it(decided):
    settings, source, steps = decided
    assert [o.exit_code for o in steps["days_3_4"]] == [0, 0]
    assert query(settings, "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[2]]) == [
        (DAYS[1],)
    ]


def test_rejecting_a_published_day_unpublishes_it_and_the_next_day_compares_with_the_one_before(decided):
    settings, source, steps = decided
    reject = steps["reject"]
    print(reject.stdout)
    assert reject.returncode == 0, reject.stderr
    assert "rejected by 박확인: 원천 데이터 오류 공지" in reject.stdout
    before = steps["before_reject"]
    changed = [printed for printed in reject.stdout.splitlines() if printed.startswith("published  ")]
    assert changed[0].startswith(f"published  {DAYS[2]}  ") and changed[0].endswith("→ nothing")
    assert changed[1].startswith(f"published  {DAYS[3]}  {before[DAYS[3]].get('NEW', 0)} NEW")
    assert len(changed) == 2
    verdict, reason = query(settings, "select verdict, reason from marts.dmf_loads where as_of_date = ?", [DAYS[2]])[0]
    assert (verdict, reason) == ("rejected", "rejected by 박확인: 원천 데이터 오류 공지")
    assert query(settings, "select previous_accepted_as_of from marts.dmf_loads where as_of_date = ?", [DAYS[3]]) == [
        (DAYS[1],)
    ]
    day = compare_day(settings, source, DAYS[3])
    assert day.matches, (day.missing, day.extra, day.wrong_fields)
    # append-only: both decisions are kept
    assert query(settings, "select decision, decided_by from mfds_raw.load_decisions order by decided_at") == [
        ("accept", "김검토"),
        ("reject", "박확인"),
    ]


def test_an_incomplete_load_cannot_be_accepted_and_an_unpublished_day_cannot_be_rejected(decided):
    settings, _, steps = decided
    assert [o.exit_code for o in steps["day_5"]] == [2]
    partial = steps["accept_partial"]
    assert partial.returncode == 1
    assert partial.stderr.strip().count("\n") == 0
    assert "an incomplete load cannot be accepted, it is partial" in partial.stderr
    unpublished = steps["reject_unpublished"]
    assert unpublished.returncode == 1 and "nothing to reject" in unpublished.stderr
    assert query(settings, "select count(*) from mfds_raw.load_decisions") == [(2,)]
