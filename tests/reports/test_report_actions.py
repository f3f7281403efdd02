"""The dashboard's "오늘 조치할 항목" on real dbt marts, read back with openpyxl.

Two days of real MFDS records (the 2026-10-08 sample) go through the real pipeline; the second
day removes one manufacturer of a watched registration (CRITICAL), withdraws a watched and an
unwatched registration, adds a watched one, changes an unwatched manufacturer (MEDIUM, not an
action) and only the case of a watched one (COSMETIC, not an action). The action list must name
exactly the day's CRITICAL/HIGH/watchlist events that SQL publishes, except cosmetic ones, each
with the Korean reason of its severity rule and linking to a cell that is that event's row.
"""

from __future__ import annotations

import re
import shutil
from datetime import date

import duckdb
import openpyxl
import pytest

from dmf_watch.reports import daily_report as daily
from dmf_watch.reports.daily_report import render_daily
from dmf_watch.reports.sheets import action_items
from dmf_watch.reports.weekly_report import render_weekly
from support.model_sql import seed_rows
from support.real_days import (
    DAY_1,
    DAY_2,
    KEPT_MANUFACTURER,
    NEW_WATCHED,
    REMOVED_MANUFACTURER,
    UNWATCHED_CHANGED,
    UNWATCHED_WITHDRAWN,
    WATCHED_COSMETIC,
    WATCHED_TWO_SITES,
    WATCHED_WITHDRAWN,
)
from support.scenarios import query, settings_in
from support.worlds import REAL_TWO_DAYS
from support.xlsx import latin_words, registry_words, resolve

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier
RATIONALE_KO = {int(rule["priority"]): rule["rationale_ko"] for rule in seed_rows("severity_rules")}


@pytest.fixture(scope="module")
def built(shelf, tmp_path_factory):
    with shelf.copied(REAL_TWO_DAYS, tmp_path_factory.mktemp("actions")) as settings:
        yield settings


@pytest.fixture
def warehouse(built, tmp_path):
    shutil.copy(built.duckdb_path, tmp_path / "dmf.duckdb")
    return settings_in(tmp_path)


def action_rows(ws) -> list[tuple[int, str, str]]:
    """(row, tag, text) of each action line under the dashboard's action heading."""
    heading = next(c.row for c in ws["A"] if str(c.value or "").startswith("오늘 조치할 항목"))
    out = []
    for r in range(heading + 1, ws.max_row + 1):
        tag = ws.cell(r, 1).value
        if not tag or str(tag).startswith("외 "):
            break
        out.append((r, str(tag), str(ws.cell(r, 2).value or "")))
    return out


def test_action_list_names_exactly_the_critical_high_and_watchlist_events(warehouse):
    expected = query(
        warehouse,
        """
        select permit_no, severity from marts.dmf_events
        where as_of_date = ? and (severity in ('CRITICAL', 'HIGH') or on_watchlist)
            and severity <> 'COSMETIC'
        order by all""",
        [DAY_2],
    )
    assert {"CRITICAL", "HIGH"} <= {severity for _, severity in expected}
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))

    ws = wb[daily.DASHBOARD]
    lines = action_rows(ws)
    assert len(lines) == len(expected)
    shown = sorted((next(p for p, _ in expected if p in text), tag.split(" · ")[0]) for _, tag, text in lines)
    korean = {"CRITICAL": "긴급", "HIGH": "높음", "MEDIUM": "보통", "INFO": "정보", "COSMETIC": "표기"}
    assert shown == sorted((p, korean[s]) for p, s in expected)
    # Most severe first.
    ranks = [list(korean.values()).index(tag.split(" · ")[0]) for _, tag, _ in lines]
    assert ranks == sorted(ranks)
    # The full list sheet holds the same keys.
    keys = {
        row[0]
        for row in query(
            warehouse,
            """
        select dmf_key from marts.dmf_events
        where as_of_date = ? and (severity in ('CRITICAL', 'HIGH') or on_watchlist)
            and severity <> 'COSMETIC'""",
            [DAY_2],
        )
    }
    sheet = wb[daily.ACTIONS]
    header = [c.value for c in sheet[4]]
    listed = {row[header.index("dmf_key")] for row in sheet.iter_rows(min_row=5, values_only=True) if row[0]}
    assert listed == keys


def test_each_action_line_says_what_happened_in_korean(warehouse):
    ws = openpyxl.load_workbook(render_daily(warehouse, DAY_2))[daily.DASHBOARD]
    text = {t for _, _, t in action_rows(ws)}
    withdrawn = next(t for t in text if WATCHED_WITHDRAWN in t)
    assert withdrawn.endswith(f"등록 취하(목록에서 사라짐) (사유: {RATIONALE_KO[10]})")
    removal = next(t for t in text if WATCHED_TWO_SITES in t)
    assert "암로디핀베실산염" in removal
    assert f"제조소명 삭제: {REMOVED_MANUFACTURER}" in removal
    assert "제조국 삭제: 인도" in removal and "제조소 소재지 삭제: Plot 12, Hyderabad, India" in removal
    assert not any(UNWATCHED_CHANGED in t for t in text)  # MEDIUM, not on the watchlist


def sheet_rows(ws) -> list[dict]:
    """The rows of a sheet's table (header on row 4) as dicts, the empty text left out."""
    header = [c.value for c in ws[4]]
    return [dict(zip(header, row)) for row in ws.iter_rows(min_row=5, values_only=True) if row[1]]


def test_every_action_row_states_the_korean_reason_of_its_rule_and_its_owner(warehouse):
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    ws = wb[daily.ACTIONS]
    rows = sheet_rows(ws)
    assert rows and all(row["사유"] for row in rows)
    by_number = {row["등록번호"]: row for row in rows}
    # 암로디핀베실산염 lost a manufacturer (rule 20); 클로피도그렐 is gone (rule 10); the
    # unwatched withdrawal is HIGH by rule 40. The seed, not the mart, says what the text must be.
    assert by_number[WATCHED_TWO_SITES]["사유"] == RATIONALE_KO[20]
    assert by_number[WATCHED_WITHDRAWN]["사유"] == RATIONALE_KO[10]
    assert by_number[UNWATCHED_WITHDRAWN]["사유"] == RATIONALE_KO[40]
    assert by_number[WATCHED_TWO_SITES]["담당"] == "김지현" and by_number[UNWATCHED_WITHDRAWN]["담당"] is None
    assert by_number[WATCHED_TWO_SITES]["구분"] == "변경" and by_number[WATCHED_WITHDRAWN]["구분"] == "취하"
    assert ws.auto_filter.ref and ws.auto_filter.ref.startswith("A4:")
    # The dashboard's lines carry the same reason.
    lines = action_rows(wb[daily.DASHBOARD])
    assert all("(사유: " in text for _, _, text in lines)


def test_a_cosmetic_change_of_a_watched_registration_is_counted_and_listed_but_not_an_action(warehouse):
    assert query(
        warehouse,
        "select event_type, severity, on_watchlist, watch_owners from marts.dmf_events "
        "where as_of_date = ? and permit_no = ?",
        [DAY_2, WATCHED_COSMETIC],
    ) == [("CHANGED", "COSMETIC", True, "박민수")]
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    assert WATCHED_COSMETIC not in {row["등록번호"] for row in sheet_rows(wb[daily.ACTIONS])}
    assert not any(WATCHED_COSMETIC in text for _, _, text in action_rows(wb[daily.DASHBOARD]))
    assert WATCHED_COSMETIC in {row["등록번호"] for row in sheet_rows(wb[daily.CHANGED])}
    watch = {row["등록번호"]: row for row in sheet_rows(wb[daily.WATCHLIST])}
    assert watch[WATCHED_COSMETIC]["담당"] == "박민수"
    assert watch[WATCHED_COSMETIC]["일치 방식"] == "메트포르민염산염 (정확히 일치)"
    assert wb[daily.WATCHLIST].auto_filter.ref.startswith("A4:")


def test_every_action_link_lands_on_that_events_row(warehouse):
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    ws = wb[daily.DASHBOARD]
    for r, _, text in action_rows(ws):
        link = ws.cell(r, 8).hyperlink
        assert link is not None, text
        cell = resolve(wb, link.location)
        row_values = [c.value for c in cell.parent[cell.row]]
        permit = next(v for v in row_values if isinstance(v, str) and v in text and "-" in v)
        assert permit, (text, row_values)


def test_every_internal_link_of_the_report_resolves(warehouse):
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    links = [
        cell.hyperlink for ws in wb.worksheets for row in ws.iter_rows() for cell in row if cell.hyperlink is not None
    ]
    assert links
    for link in links:
        assert link.location, link.target
        resolve(wb, link.location)


def test_a_long_action_list_shows_the_first_lines_and_says_how_many_more(warehouse, monkeypatch):
    monkeypatch.setattr(action_items, "DASHBOARD_ACTIONS", 2)
    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    ws = wb[daily.DASHBOARD]
    total = query(
        warehouse,
        """
        select count(*) from marts.dmf_events
        where as_of_date = ? and (severity in ('CRITICAL', 'HIGH') or on_watchlist)
            and severity <> 'COSMETIC'""",
        [DAY_2],
    )[0][0]
    lines = action_rows(ws)
    assert len(lines) == 2
    more = ws.cell(lines[-1][0] + 1, 1)
    assert more.value == f"외 {total - 2}건 — 전체 목록은 조치항목 시트에 있습니다"
    assert ws.cell(more.row, 8).hyperlink.location == f"'{daily.ACTIONS}'!A1"


def test_a_quiet_day_says_there_is_nothing_to_act_on(warehouse):
    ws = openpyxl.load_workbook(render_daily(warehouse, DAY_1))[daily.DASHBOARD]
    heading = next(c.row for c in ws["A"] if str(c.value or "").startswith("오늘 조치할 항목"))
    assert "조치할 항목이 없습니다" in ws.cell(heading + 1, 1).value or ws.cell(heading + 1, 1).value.startswith(
        "조치할 항목 없음"
    )


def test_a_watched_manufacturer_removal_is_one_removed_entry_and_critical(warehouse):
    rows = query(
        warehouse,
        """
        select field_name, change_detail, removed_entries, added_entries, severity
        from marts.dmf_event_field_changes where as_of_date = ? and permit_no = ?
        order by field_name""",
        [DAY_2, WATCHED_TWO_SITES],
    )
    assert rows == [
        ("countries", "removed", ["인도"], None, "INFO"),
        ("manufacture_place", "removed", ["Plot 12, Hyderabad, India"], None, "HIGH"),
        ("manufacturer", "removed", [REMOVED_MANUFACTURER], None, "CRITICAL"),
    ]
    assert query(
        warehouse,
        "select severity from marts.dmf_events where as_of_date = ? and permit_no = ?",
        [DAY_2, WATCHED_TWO_SITES],
    ) == [("CRITICAL",)]


def test_the_changed_sheet_names_the_removed_manufacturer_in_full(warehouse):
    sheet = openpyxl.load_workbook(render_daily(warehouse, DAY_2))[daily.CHANGED]
    header = [c.value for c in sheet[4]]
    texts = [
        row[header.index("무엇이 바뀌었나")]
        for row in sheet.iter_rows(min_row=5, values_only=True)
        if row[header.index("등록번호")] == WATCHED_TWO_SITES
    ]
    assert f"제조소명 삭제: {REMOVED_MANUFACTURER}" in texts


# --- the history view -------------------------------------------------------------------------


def dmf_cli(settings, *args: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        DMF_STATE_DIR=str(settings.state_dir),
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        env=env,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        timeout=120,
    )


def test_dmf_history_prints_first_seen_and_every_change_with_dates(warehouse):
    result = dmf_cli(warehouse, "history", "--permit-no", WATCHED_TWO_SITES)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.splitlines()[0].startswith(f"암로디핀베실산염 · {WATCHED_TWO_SITES}")
    assert "2026-10-08  처음 확인" in out
    assert "2026-10-09  변경 [긴급]" in out and f"제조소명 삭제: {REMOVED_MANUFACTURER}" in out
    assert "제조국 삭제: 인도" in out
    assert f"현재: 제조소 {KEPT_MANUFACTURER}" in out


def test_dmf_history_of_a_withdrawn_registration_says_it_left_the_list(warehouse):
    out = dmf_cli(warehouse, "history", "--permit-no", WATCHED_WITHDRAWN).stdout
    assert "현재: 목록에 없음" in out and "2026-10-09  취하 [긴급]  등록 취하(목록에서 사라짐)" in out


def test_dmf_history_by_applicant_and_an_unknown_name(warehouse):
    by_name = dmf_cli(warehouse, "history", "--applicant", "(주)새신청인")
    assert by_name.returncode == 0 and NEW_WATCHED in by_name.stdout and "신규" in by_name.stdout
    missing = dmf_cli(warehouse, "history", "--ingredient", "없는성분이름")
    assert missing.returncode == 1 and missing.stderr.startswith("dmf: no registration matches")
    assert missing.stderr.strip().count("\n") == 0
    both = dmf_cli(warehouse, "history", "--ingredient", "a", "--applicant", "b")
    assert both.returncode == 1 and "not allowed with" in both.stderr


def test_each_watchlist_row_links_to_its_timeline_on_the_history_sheet(warehouse):
    from dmf_watch.core.warehouse import connect
    from dmf_watch.reports.history import find_keys, format_timeline, timeline

    wb = openpyxl.load_workbook(render_daily(warehouse, DAY_2))
    ws = wb[daily.WATCHLIST]
    header = [c.value for c in ws[4]]
    rows = []
    for r in ws.iter_rows(min_row=5):
        if not r[0].value:
            break  # the main table ends; the unmatched-terms section follows
        rows.append(r)
    assert rows
    with connect(warehouse, read_only=True) as con:
        for row in rows:
            link = row[header.index("이력")].hyperlink
            assert link is not None
            block = resolve(wb, link.location)
            permit = row[header.index("등록번호")].value
            assert permit in block.value  # the block is this registration's
            key = find_keys(con, permit_no=permit)[0]
            expected = format_timeline(timeline(con, key, DAY_2)).splitlines()
            sheet = block.parent
            shown = [sheet.cell(r, 4).value for r in range(block.row + 2, block.row + 2 + len(expected) - 2)]
            # The sheet lists the same change lines as the command (after its two header lines).
            assert all(any(s and s in line for line in expected) for s in shown), (shown, expected)


# --- lineage: each exposure depends on exactly what its renderer queries -----------------------


class RecordingConnection:
    """A real DuckDB connection that remembers every SQL text it executed."""

    def __init__(self, con, log: list[str]) -> None:
        self._con, self._log = con, log

    def execute(self, sql, *args, **kwargs):
        self._log.append(sql)
        return self._con.execute(sql, *args, **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._con.close()

    def __getattr__(self, name):
        return getattr(self._con, name)


def queried_marts(monkeypatch, render, settings, day) -> set[str]:
    import duckdb

    from dmf_watch.core import warehouse as boundary

    log: list[str] = []

    class RecordingDuckdb:
        Error = duckdb.Error

        @staticmethod
        def connect(*args, **kwargs):
            return RecordingConnection(duckdb.connect(*args, **kwargs), log)

    monkeypatch.setattr(boundary, "duckdb", RecordingDuckdb)
    render(settings, day)
    return {m for sql in log for m in re.findall(r"\bmarts\.([a-z_]+)", sql)}


def exposure_models(built, name: str) -> set[str]:
    """The models the exposure depends on, from the project as dbt parses it (the morning build
    writes no manifest.json)."""
    from dmf_watch.transform.build import invoke_dbt

    parsed = invoke_dbt(built, "parse")
    assert parsed.returncode == 0, parsed.output[-2000:]
    nodes = parsed.result.exposures[f"exposure.dmf_watch.{name}"].depends_on.nodes
    return {node.split(".")[-1] for node in nodes}


def test_daily_report_exposure_depends_on_exactly_the_marts_the_renderer_queries(built, warehouse, monkeypatch):
    from dmf_watch.reports import daily_report as daily_module

    queried = queried_marts(monkeypatch, daily_module.render_daily, warehouse, DAY_2)
    assert "dmf_watchlist_unmatched" in queried and "dmf_registration_history" in queried
    assert exposure_models(built, "daily_report") == queried


def test_weekly_report_exposure_depends_on_exactly_the_relations_the_renderer_queries(built, warehouse, monkeypatch):
    from dmf_watch.reports import weekly_report as weekly_module

    queried = queried_marts(monkeypatch, weekly_module.render_weekly, warehouse, date(2026, 10, 12))
    assert {m for m in queried if m.startswith("rpt_weekly_")} == {
        "rpt_weekly_totals",
        "rpt_weekly_new_applicants",
        "rpt_weekly_new_countries",
        "rpt_weekly_registration_groups",
        "rpt_weekly_single_source_changes",
    }
    assert exposure_models(built, "weekly_report") == queried


def test_the_real_daily_and_weekly_reports_are_korean_except_names_codes_and_commands(warehouse):
    weekly_day = date(2026, 10, 12)  # the Monday after DAY_2: its week holds both days
    with duckdb.connect(str(warehouse.duckdb_path), read_only=True) as con:
        names = registry_words(
            con,
            [
                "select permit_no, ingredient_name, applicant, manufacturer, manufacture_place, watch_terms, "
                "notice_code from marts.dmf_registrations",
                "select permit_no, ingredient_name, applicant, manufacturer, manufacture_place from marts.dmf_events",
                "select watch_term from marts.dmf_watchlist_unmatched",
                "select before_value, after_value from marts.dmf_event_field_changes",
            ],
        )
    for path in (render_daily(warehouse, DAY_2), render_weekly(warehouse, weekly_day)):
        found = latin_words(openpyxl.load_workbook(path), names)
        assert found == [], "\n".join(f"{path.name} {where}: {word!r} in {text!r}" for where, word, text in found)


def test_the_weekly_first_sheet_names_the_weeks_items_to_act_on_with_their_reasons(warehouse):
    from dmf_watch.reports import weekly_report as weekly

    ws = openpyxl.load_workbook(render_weekly(warehouse, date(2026, 10, 12)))[weekly.DASHBOARD]
    heading = next(c.row for c in ws["A"] if str(c.value or "").startswith("이번 주 조치할 항목"))
    expected = query(
        warehouse,
        """
        select permit_no, severity from marts.dmf_events
        where as_of_date between date '2026-10-05' and date '2026-10-11'
            and (severity in ('CRITICAL', 'HIGH') or on_watchlist) and severity <> 'COSMETIC'
        order by severity_rank""",
    )
    assert ws.cell(heading, 1).value.endswith(f"({len(expected)}건)")
    rows = [(ws.cell(r, 2).value, str(ws.cell(r, 3).value)) for r in range(heading + 1, heading + 1 + len(expected))]
    listed = sorted(next(p for p, _ in expected if p in text) for _, text in rows)
    assert listed == sorted(p for p, _ in expected)
    assert all("(사유: " in text for _, text in rows)
    assert rows[0][0].startswith("긴급") and WATCHED_COSMETIC not in "".join(t for _, t in rows)
