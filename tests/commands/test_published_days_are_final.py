"""A published day stays published, and the clock cannot lock the warehouse.

Real runs end to end (the simulator on loopback, dlt, dbt, the xlsx read back) over the real
MFDS sample. The history: day 1 and day 2 accepted; day 3 first failed (the API refused the key),
then a retry was accepted. Each test works on a copy of it, drives `dmf` through its command
line (`dmf.cli.main`) as an operator would, and sets the clock where a test needs another day.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import shutil
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
from openpyxl import load_workbook

from dmf_watch.commands import cli as cli_module
from dmf_watch.commands import command as command_module
from dmf_watch.commands import decisions as decisions_module
from dmf_watch.commands import status as status_module
from dmf_watch.commands.cli import main
from dmf_watch.commands.status import day_statuses
from dmf_watch.core import config
from dmf_watch.core.config import Settings, load_settings
from dmf_watch.simulator.server import SimulatorServer
from dmf_watch.transform.build import build, loads_since_last_good_build
from fake_agy.support import FAKE_AGY
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, point_dmf_at, run_days

pytestmark = pytest.mark.e2e  # runs dbt and whole days: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 10, 8), date(2026, 10, 9), date(2026, 10, 10)


class DatedSource:
    """Given raw items on given dates and `default` on every other date (a day is its ordinal)."""

    def __init__(self, days: dict[date, list[dict]], default: list[dict]) -> None:
        self._days, self._default = dict(days), default

    def serve(self, day: date, items: list[dict]) -> None:
        self._days[day] = items

    def items_for(self, day: int) -> list[dict]:
        return [dict(item) for item in self._days.get(date.fromordinal(day), self._default)]

    def day_of(self, as_of: date) -> int:
        return as_of.toordinal()

    def truth_for(self, day: int) -> list[dict]:
        return []


def settings_in(root: Path) -> Settings:
    return load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )


@pytest.fixture(scope="module")
def records(real_data_dir) -> list[dict]:
    return read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")


@pytest.fixture(scope="module")
def history(records, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("published")
    # Numbered as DaysSource numbers its days, so the two accepted days are the same replay as
    # tests/commands/test_backup_restore.py's (and the first as other modules' real sample as
    # DAY_1): built once for the session and copied (support/replays.py).
    source = DaysSource({DAY_1: records, DAY_2: records[:-1], DAY_3: records[:-2]})
    mp = pytest.MonkeyPatch()
    mp.setenv("DMF_AI_DISABLED", "1")
    try:
        outcomes = run_days(settings_in(root), source, [(DAY_1, None), (DAY_2, None)], SERVICE_KEY)
        outcomes += run_days(settings_in(root), source, [(DAY_3, "xml_code:30"), (DAY_3, None)], SERVICE_KEY)
    finally:
        mp.undo()
    assert [o.exit_code for o in outcomes] == [0, 0, 1, 0]
    return root


@pytest.fixture
def source(records) -> DatedSource:
    return DatedSource({DAY_1: records, DAY_2: records[:-1]}, records[:-2])


@pytest.fixture
def server(source) -> Iterator[SimulatorServer]:
    with SimulatorServer(source, service_key=SERVICE_KEY) as simulator:
        yield simulator


@pytest.fixture
def warehouse(history, tmp_path, monkeypatch, server) -> Settings:
    """A copy of the history, with `dmf` pointed at it and at the simulator, as cron would run it."""
    root = tmp_path / "copy"
    shutil.copytree(history, root)
    point_dmf_at(monkeypatch, root, MFDS_API_BASE_URL=server.base_url)
    return dataclasses.replace(settings_in(root), api_base_url=server.base_url)


@pytest.fixture
def clock(monkeypatch):
    """Sets today in Seoul for every module that asks (a wrong or corrected system clock)."""

    def set_today(day: date) -> None:
        for module in (cli_module, command_module, status_module, decisions_module, config):
            monkeypatch.setattr(module, "today_in_seoul", lambda day=day: day)

    return set_today


def dmf_command(capsys, line: str) -> tuple[int, str, str]:
    """`dmf` with the arguments of a command line, as typed; its exit code, stdout and stderr."""
    capsys.readouterr()
    words = shlex.split(line)
    assert words[0] == "dmf"
    code = main(words[1:])
    out, err = capsys.readouterr()
    return code, out, err


def scalar(settings: Settings, sql: str, params: list | None = None):
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def events_by_day(settings: Settings) -> dict[date, int]:
    rows = scalar(settings, "select as_of_date, count(*) from marts.dmf_events group by 1")
    return {day: n for day, n in rows}


def day_decision(settings: Settings, day: date) -> tuple[str, str]:
    ((load_id, verdict),) = scalar(
        settings, "select load_id, verdict from marts.dmf_day_decisions where as_of_date = ?", [day]
    )
    return load_id, verdict


def report_cells(path: Path) -> list[str]:
    book = load_workbook(path, read_only=True)
    return [str(cell) for sheet in book.worksheets for row in sheet.iter_rows(values_only=True) for cell in row if cell]


def status_of(settings: Settings, day: date, today: date | None = None):
    return {s.day: s for s in day_statuses(settings, 10, today or day)}[day]


@pytest.mark.fault("a forced reload with a refused key on a published day")
def test_a_forced_reload_of_a_published_day_is_refused_and_the_day_stays_as_published(warehouse, capsys, monkeypatch):
    """`dmf load --force` of a published day: one line naming reject-load; events, report and status unchanged"""
    published = day_decision(warehouse, DAY_3)
    events = events_by_day(warehouse)
    attempts = scalar(warehouse, "select count(*) from mfds_raw.load_runs")
    monkeypatch.setenv("MFDS_SERVICE_KEY", "wrong-key-123456")

    code, out, err = dmf_command(capsys, f"dmf load --as-of {DAY_3} --force")

    assert code == 1 and out == ""
    assert err.count("\n") == 1 and f"dmf reject-load --as-of {DAY_3}" in err and "is published" in err
    assert scalar(warehouse, "select count(*) from mfds_raw.load_runs") == attempts
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
    code, out, err = dmf_command(capsys, f"dmf run --as-of {DAY_3}")
    assert code == 0, err
    assert day_decision(warehouse, DAY_3) == published and published[1] == "accepted"
    assert events_by_day(warehouse) == events
    assert "거부 — 반영되지 않음" not in report_cells(warehouse.reports_dir / "dmf_daily_20261010.xlsx")
    status = status_of(warehouse, DAY_3)
    assert status.verdict == "accepted" and status.next_command is None


@pytest.mark.fault("a failed attempt after a published day (a forced reload with a wrong key)")
def test_a_failed_attempt_after_the_published_one_never_flips_the_day(warehouse, capsys, monkeypatch):
    """a later failed attempt of a published day: the day keeps its decider, events and report; exit 0"""
    published = day_decision(warehouse, DAY_3)
    events = events_by_day(warehouse)
    # the refusal above is bypassed: a warehouse written before it may hold such an attempt
    monkeypatch.setattr("dmf_watch.pipelines.mfds.load.published_load", lambda settings, as_of: None)
    monkeypatch.setenv("MFDS_SERVICE_KEY", "wrong-key-123456")
    code, out, _ = dmf_command(capsys, f"dmf load --as-of {DAY_3} --force")
    assert code == 1 and "code 30" in out
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)

    code, out, err = dmf_command(capsys, f"dmf run --as-of {DAY_3}")

    assert code == 0, out + err
    assert "REJECTED" not in out
    assert day_decision(warehouse, DAY_3) == published
    assert scalar(warehouse, "select attempt_count from marts.dmf_day_decisions where as_of_date = ?", [DAY_3]) == [
        (3,)
    ]
    assert events_by_day(warehouse) == events
    assert "거부 — 반영되지 않음" not in report_cells(warehouse.reports_dir / "dmf_daily_20261010.xlsx")
    assert status_of(warehouse, DAY_3).next_command is None


@pytest.mark.fault("a retry after the clock was set back (NTP correction)")
def test_the_order_of_attempts_is_the_warehouses_not_the_clocks(warehouse):
    """a failed attempt, then a retry that finished 2 h 'earlier' by the clock: the retry decides the day"""
    ((failed, failed_at), (retry, _)) = scalar(
        warehouse,
        "select load_id, finished_at from mfds_raw.load_runs where as_of_date = ? order by attempt_seq",
        [DAY_3],
    )
    with duckdb.connect(str(warehouse.duckdb_path)) as con:  # what a clock set back 2 hours writes
        con.execute(
            "update mfds_raw.load_runs set started_at = ? - interval 2 hour - interval 1 second, "
            "finished_at = ? - interval 2 hour where load_id = ?",
            [failed_at, failed_at, retry],
        )

    assert build(warehouse).success

    assert day_decision(warehouse, DAY_3) == (retry, "accepted")
    assert events_by_day(warehouse)[DAY_3] == 1  # the one WITHDRAWN the retry published
    order = scalar(
        warehouse, "select load_id from marts.dmf_loads where as_of_date = ? order by attempt_order", [DAY_3]
    )
    assert [row[0] for row in order] == [failed, retry]


@pytest.mark.fault("a run with the clock a year ahead")
def test_a_clock_a_year_ahead_cannot_lock_the_warehouse(warehouse, capsys, clock):
    """a year-ahead clock is refused without --as-of; a future-dated load is withdrawn as status says; then exit 0"""
    ahead, day_4 = DAY_3 + timedelta(days=365), DAY_3 + timedelta(days=1)
    clock(ahead)
    code, _, err = dmf_command(capsys, "dmf run")
    assert code == 1 and "DMF_MAX_LOAD_GAP_DAYS (7)" in err and f"--as-of {ahead}" in err
    assert scalar(warehouse, "select max(as_of_date) from mfds_raw.load_runs") == [(DAY_3,)]
    # the operator believed the clock and gave the date: the future-dated day is stored
    code, _, err = dmf_command(capsys, f"dmf run --as-of {ahead}")
    assert code == 0, err

    clock(day_4)  # the clock is corrected
    code, _, err = dmf_command(capsys, "dmf run")
    assert code == 1 and f"dmf reject-load --as-of {ahead}" in err
    code, out, _ = dmf_command(capsys, "dmf status")
    advised = [line.strip() for line in out.splitlines() if line.strip().startswith(f"{ahead}  dmf reject-load")]
    assert advised, out
    command = advised[0].split("  ", 1)[1].replace("NAME", "ops")
    code, out, err = dmf_command(capsys, command)
    assert code == 0, err

    code, out, err = dmf_command(capsys, "dmf run")
    assert code == 0, out + err
    assert scalar(
        warehouse, "select previous_accepted_as_of from marts.dmf_day_decisions where as_of_date = ?", [day_4]
    ) == [(DAY_3,)]
    code, out, _ = dmf_command(capsys, "dmf status")
    assert str(ahead) not in out and "Nothing to do" in out


def advised_command(next_command: str, **placeholders: str) -> str:
    """The command of a `Next:` suggestion, with its placeholders filled as an operator would."""
    command = next_command.split("  (", 1)[0]
    command = command[command.rindex("dmf ") :]
    for name, value in placeholders.items():
        command = command.replace(name, shlex.quote(value))
    return command


@pytest.mark.fault("`dmf status` advising a command that does not help")
def test_every_kind_of_next_suggestion_changes_the_days_state_when_run(
    warehouse, capsys, clock, source, server, records, tmp_path, monkeypatch
):
    """each kind of `Next:` (backfill, run, accept-load, build, report, enrich, run --as-of) run as advised changes its day"""
    day_4, day_5, day_6, day_7 = (DAY_3 + timedelta(days=n) for n in (1, 2, 3, 4))
    followed = []

    def follow(day: date, today: date, **placeholders: str) -> None:
        """Runs what status advises for the day until it advises nothing; each step must change the day."""
        status = status_of(warehouse, day, today)
        assert status.next_command, status
        for _ in range(3):
            if status.next_command is None:
                break
            command = advised_command(status.next_command, NAME="ops", TEXT="checked on the MFDS site", **placeholders)
            code, out, err = dmf_command(capsys, command)
            after = status_of(warehouse, day, today)
            assert after != status, (command, code, out, err)
            followed.append(command.split()[1])
            status = after
        assert status.verdict == "accepted" and status.next_command is None, status

    clock(day_5)
    # a past day without a load: only a dump of that day can fill it
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / f"{day_4}.jsonl").write_text(
        "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in records[:-2]), encoding="utf-8"
    )
    follow(day_4, day_5, PATH=str(dumps))
    # today's fetch was incomplete: load it again
    server.set_day(day_5)
    server.set_faults("truncate_last_page")
    assert dmf_command(capsys, "dmf run")[0] == 2
    server.set_faults(None)
    follow(day_5, day_5)
    # a gate fired: a person who checked the list accepts it
    clock(day_6)
    server.set_day(day_6)
    source.serve(day_6, records[:-40])  # 38 of 365 records gone at once: the count and withdrawn gates fire
    assert dmf_command(capsys, "dmf run")[0] == 2
    follow(day_6, day_6)
    assert "거부 — 반영되지 않음" not in report_cells(warehouse.reports_dir / f"dmf_daily_{day_6:%Y%m%d}.xlsx")
    # the run stopped between its load and its build
    clock(day_7)
    server.set_day(day_7)
    assert dmf_command(capsys, "dmf load")[0] == 0
    assert status_of(warehouse, day_7).verdict == "not built"
    follow(day_7, day_7)
    # a report went missing
    (warehouse.reports_dir / "dmf_daily_20261009.xlsx").unlink()
    follow(DAY_2, day_7)
    # the AI step failed (agy answered an error); once agy works again, the day is enriched
    day_8 = day_7 + timedelta(days=1)
    clock(day_8)
    server.set_day(day_8)
    source.serve(day_8, records[:-3])  # one WITHDRAWN: something for agy to brief
    (warehouse.state_dir / "agy.toml").write_text("[enrich]\nretry_backoff_seconds = 0\n", encoding="utf-8")
    monkeypatch.delenv("DMF_AI_DISABLED")
    monkeypatch.setenv("DMF_AGY_BINARY", str(FAKE_AGY))
    monkeypatch.setenv("FAKE_AGY_MODE", "error")
    assert dmf_command(capsys, "dmf run")[0] == 0
    assert status_of(warehouse, day_8).ai == "agy_error"
    monkeypatch.setenv("FAKE_AGY_MODE", "ok")
    follow(day_8, day_8)
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    # the last load is long ago: today's load needs its date said explicitly
    far = day_8 + timedelta(days=10)
    clock(far)
    assert status_of(warehouse, far).next_command.startswith(f"dmf run --as-of {far}")
    follow(far, far)

    # a backfill and a build render no report: the day's next step is its report
    assert followed == ["backfill", "report", "run", "accept-load", "build", "report", "report", "enrich", "run"]


def test_a_load_written_after_the_clock_was_set_back_is_still_new_to_the_next_build(warehouse, capsys, clock, server):
    """the morning build's data tests cover a load by its place in the order of attempts, not by its clock"""
    day_4 = DAY_3 + timedelta(days=1)
    clock(day_4)
    server.set_day(day_4)
    assert dmf_command(capsys, "dmf load")[0] == 0
    ((new_load,),) = scalar(warehouse, "select load_id from mfds_raw.load_runs where as_of_date = ?", [day_4])
    with duckdb.connect(str(warehouse.duckdb_path)) as con:  # the clock went back a day before it was written
        con.execute(
            "update mfds_raw.load_runs set started_at = started_at - interval 1 day, "
            "finished_at = finished_at - interval 1 day where load_id = ?",
            [new_load],
        )

    assert loads_since_last_good_build(warehouse) == [new_load]
