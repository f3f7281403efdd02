"""When the warehouse itself is the fault, someone hears: once a streak, in one line, from the state folder.

Each test is four real mornings against the simulator on loopback, with a webhook receiver on
loopback as the data team's alert destination: an honest morning, two mornings with the fault (the
same fault twice: one alert), and an honest morning again that recovers with exit 0. The three
mornings the test is about are `dmf run` child processes, as cron runs them. The faults are real:
another process holding the DuckDB file, a closed port, a wrong password, a read-only role, a full
tmpfs.

The first, honest morning is only where the fault finds the warehouse: an accepted day, the
state folder's alert ledger saying "ok", nothing sent (it raises no alert, so the webhook hears
nothing of it either way). It is the same daily job without a process of its own: on DuckDB the
session's copy of that morning (support/first_mornings.py), placed where the children look for the
warehouse, the state and the backups; on PostgreSQL run in this process, into the test's schemas.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import psycopg2
import pytest

from dmf_watch.notify.state_ledger import ledger_path
from support.disks import fill, tmpfs
from support.first_mornings import SMALL_300_FIRST_MORNING, placed
from support.loopback import WebhookReceiver, free_port
from support.mfds import SERVICE_KEY, START_DATE, small_registry
from support.postgres import drop_schemas, on_postgres
from support.scenarios import dmf_process_env, query, run_days, settings_in
from support.secrets import file_bytes, key_leaks
from support.worlds import Shelf

pytestmark = pytest.mark.e2e  # whole mornings with dbt: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAYS = [START_DATE + timedelta(days=n) for n in range(4)]  # honest, fault, fault, honest
HOOK_USER, HOOK_PASSWORD = "hookuser", "hookpw-3e8a61c2"
FAILED_TITLE = "[DMF Watch] 경고: 일일 작업 실패"
RECOVERED_TITLE = "[DMF Watch] 복구: 적재 정상 반영"


@dataclass
class World:
    """A small registry served on loopback, a warehouse, a state folder and an alert webhook."""

    tmp_path: Path
    env: dict[str, str]
    hook: WebhookReceiver
    server: object
    shelf: Shelf
    stack: ExitStack
    runs: list[subprocess.CompletedProcess] = field(default_factory=list)

    def first_morning(self) -> None:
        """DAYS[0], accepted, where this world's `dmf` looks (DMF_DUCKDB_PATH, DMF_BACKUP_DIR as set now)."""
        backups = self.env.get("DMF_BACKUP_DIR")
        self.stack.enter_context(
            placed(
                self.shelf,
                SMALL_300_FIRST_MORNING,
                duckdb_path=Path(self.env["DMF_DUCKDB_PATH"]),
                state_dir=Path(self.env["DMF_STATE_DIR"]),
                reports_dir=Path(self.env["DMF_REPORTS_DIR"]),
                backup_dir=Path(backups) if backups else None,
            )
        )
        warehouse = dataclasses.replace(settings_in(self.tmp_path), duckdb_path=Path(self.env["DMF_DUCKDB_PATH"]))
        verdicts = query(warehouse, "select as_of_date, verdict from marts.dmf_day_decisions")
        assert verdicts == [(DAYS[0], "accepted")], verdicts
        assert ledger(self)["conditions"]["pipeline"]["state"] == "ok"

    def first_morning_in_this_process(self) -> None:
        """DAYS[0], accepted, through the daily job in this process into the schemas of `self.settings`
        (PostgreSQL: nothing to copy), its state folder the children's."""
        outcomes = run_days(self.settings, small_registry(300), [(DAYS[0], None)], SERVICE_KEY)
        assert [(o.verdict, o.exit_code) for o in outcomes] == [("accepted", 0)], outcomes
        assert ledger(self)["conditions"]["pipeline"]["state"] == "ok"

    def run(self, day: date, **env: str) -> subprocess.CompletedProcess:
        self.server.set_day(day)
        done = subprocess.run(
            [sys.executable, "-m", "dmf_watch.commands.cli", "run", "--as-of", day.isoformat()],
            cwd=PROJECT,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        self.runs.append(done)
        return done

    def titles(self) -> list[str]:
        return [request["json"]["title"] for request in self.hook.requests]

    def leaks(self, *secrets: str) -> list[str]:
        """Where the service key or a given secret shows: outputs, files of the state folder, alerts."""
        found = [f"output of run {i}" for i, r in enumerate(self.runs) if key_leaks((r.stdout + r.stderr).encode())]
        found += [
            f"output of run {i} holds a secret"
            for i, r in enumerate(self.runs)
            for s in secrets
            if s and s in r.stdout + r.stderr
        ]
        for path in (self.tmp_path / "state").rglob("*"):
            if path.is_file():
                data = file_bytes(path)
                if key_leaks(data) or any(s and s.encode() in data for s in secrets):
                    found.append(str(path))
        sent = json.dumps(self.hook.requests, ensure_ascii=False)
        if key_leaks(sent.encode()) or any(s and s in sent for s in secrets):
            found.append("an alert")
        return found


@pytest.fixture
def world(tmp_path: Path, start_simulator, shelf) -> Iterator[World]:
    server = start_simulator(small_registry(300), day=DAYS[0])
    state = tmp_path / "state"
    state.mkdir(parents=True)
    (state / "notify.toml").write_text("[notify]\nattempts = 1\nretry_wait_seconds = 0\n", encoding="utf-8")
    with WebhookReceiver() as hook, ExitStack() as stack:
        env = dmf_process_env(
            tmp_path, server.base_url, DMF_NOTIFY_URL_DATA_TEAM=hook.url(HOOK_USER, HOOK_PASSWORD), DMF_LOCK_WAIT_S="2"
        )
        yield World(tmp_path, env, hook, server, shelf, stack)


def one_line(done: subprocess.CompletedProcess) -> str:
    """The run's stderr, which must be exactly one line, without "dmf: " and never "unexpected"."""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("dmf: "), done.stderr[-3000:]
    line = done.stderr[len("dmf: ") :].strip()
    assert "unexpected" not in line and "Traceback" not in line, line
    print(f"exit {done.returncode}: dmf: {line}")  # shown by `pytest -rP`: the line users see
    return line


def ledger(world: World) -> dict:
    return json.loads(ledger_path(world.tmp_path / "state").read_text(encoding="utf-8"))


def assert_streak(world: World, failing: list[subprocess.CompletedProcess], fault_day: date) -> None:
    """The two failing mornings raised one alert between them, about the first, with its line."""
    assert world.titles() == [f"{FAILED_TITLE} ({fault_day.isoformat()})"], world.titles()
    first_line = one_line(failing[0])
    assert first_line in world.hook.requests[0]["json"]["message"]


def assert_recovered(world: World, done: subprocess.CompletedProcess, day: date) -> None:
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert world.titles()[-1] == f"{RECOVERED_TITLE} ({day.isoformat()})", world.titles()
    assert len(world.titles()) == 2


@pytest.mark.fault("a BI tool holds the DuckDB file")
def test_a_program_holding_the_duckdb_file_is_named_by_pid_and_alerted_once(world):
    """A program holding the DuckDB file: exit 1, one line naming its pid and name, one alert for two mornings, the next morning recovers."""
    world.first_morning()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('open', flush=True); time.sleep(600)",
            world.env["DMF_DUCKDB_PATH"],
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        name = Path(f"/proc/{holder.pid}/comm").read_text().strip()
        failing = [world.run(DAYS[1]), world.run(DAYS[2])]
    finally:
        holder.kill()
        holder.wait()

    assert [done.returncode for done in failing] == [1, 1]
    line = one_line(failing[0])
    assert line.startswith(f"the warehouse file {world.env['DMF_DUCKDB_PATH']} is held by another program, ")
    assert f"pid {holder.pid} {name}" in line and "close that program" in line, line
    assert_streak(world, failing, DAYS[1])
    assert ledger(world)["conditions"]["pipeline"]["state"] == "broken:warehouse_held"

    assert_recovered(world, world.run(DAYS[3]), DAYS[3])
    assert world.leaks(HOOK_PASSWORD) == []


@pytest.mark.fault("the warehouse disk is full (not the state disk)")
def test_a_full_warehouse_disk_is_named_with_its_file_system_and_alerted_once(tmp_path, world):
    """The warehouse's disk full, the state disk not: exit 1, one line naming the warehouse's disk and file system, one alert, the next morning recovers."""
    with ExitStack() as stack:
        disk = stack.enter_context(tmpfs(tmp_path / "warehouse_disk", "64m"))
        world.env["DMF_DUCKDB_PATH"] = str(disk / "dmf.duckdb")
        world.first_morning()
        filler = fill(disk)
        failing = [world.run(DAYS[1]), world.run(DAYS[2])]

        assert [done.returncode for done in failing] == [1, 1]
        line = one_line(failing[0])
        assert line.startswith(f"could not write to {disk} (DMF_DUCKDB_PATH): "), line
        assert f"the file system mounted at {disk}" in line and "DMF_STATE_DIR" not in line, line
        assert_streak(world, failing, DAYS[1])

        filler.unlink()
        assert_recovered(world, world.run(DAYS[3]), DAYS[3])
    assert world.leaks(HOOK_PASSWORD) == []


@pytest.mark.fault("the backup fails after an accepted day")
def test_a_failed_backup_after_a_published_day_alerts_once_and_status_shows_it(tmp_path, world):
    """A backup that fails after a published day: exit 0 (the day stands), one line naming the backup disk, one alert for two mornings, `dmf status` shows it, a written backup recovers."""
    with ExitStack() as stack:
        disk = stack.enter_context(tmpfs(tmp_path / "backup_disk", "8m"))
        world.env["DMF_BACKUP_DIR"] = str(disk / "backups")
        world.first_morning()
        filler = fill(disk, "filler.bin")
        failing = [world.run(DAYS[1]), world.run(DAYS[2])]

        assert [done.returncode for done in failing] == [0, 0], [d.stderr for d in failing]
        line = one_line(failing[0])
        assert line.startswith(
            f"{DAYS[1]} was published, but its backup to {disk / 'backups'} (DMF_BACKUP_DIR) failed: "
            "no space left on device, 0 bytes free there"
        ), line
        assert f"the file system mounted at {disk}" in line, line
        backup_titles = [t for t in world.titles() if "백업" in t]
        assert backup_titles == [f"[DMF Watch] 경고: 백업 실패 (발행은 정상) ({DAYS[1].isoformat()})"], world.titles()
        assert FAILED_TITLE not in " ".join(world.titles())

        status = subprocess.run(
            [sys.executable, "-m", "dmf_watch.commands.cli", "status", "--as-of", DAYS[2].isoformat()],
            cwd=PROJECT,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert f"backup failing since {DAYS[1].isoformat()}" in status.stdout, status.stdout

        filler.unlink()
        again = world.run(DAYS[3])
        assert again.returncode == 0 and again.stderr == "", again.stderr[-3000:]
        assert [t for t in world.titles() if "백업" in t][-1] == f"[DMF Watch] 복구: 백업 정상 ({DAYS[3].isoformat()})"
        assert len([t for t in world.titles() if "백업" in t]) == 2
    assert world.leaks(HOOK_PASSWORD) == []


# --- PostgreSQL --------------------------------------------------------------------------------


@pytest.fixture
def pg_world(postgres, world, tmp_path, monkeypatch) -> Iterator[World]:
    settings = on_postgres(settings_in(tmp_path), "faults")
    monkeypatch.setenv("DMF_AI_DISABLED", "1")  # the first morning in this process, as the children run
    monkeypatch.delenv("DMF_NOTIFY_URLS", raising=False)
    world.env.update(DMF_WAREHOUSE="postgres", DMF_SCHEMA_PREFIX=settings.schema_prefix)
    world.env.update({name: postgres[name] for name in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSFILE")})
    world.settings = settings
    try:
        yield world
    finally:
        drop_schemas(settings)


def _password(variables: dict[str, str]) -> str:
    for line in Path(variables["PGPASSFILE"]).read_text(encoding="utf-8").splitlines():
        *where, password = line.split(":")
        if where[3] == variables["PGUSER"]:
            return password
    raise AssertionError("no pgpass line for the role")


@pytest.mark.postgres
@pytest.mark.fault("PostgreSQL is down")
def test_a_server_that_is_down_is_named_in_one_line_and_alerted_once(pg_world, postgres):
    """PostgreSQL down (nothing listens on its port): exit 1, one line naming host:port/db and what to do, one alert for two mornings, the next morning recovers."""
    pg_world.first_morning_in_this_process()
    closed = str(free_port())
    failing = [pg_world.run(DAYS[1], PGPORT=closed), pg_world.run(DAYS[2], PGPORT=closed)]

    assert [done.returncode for done in failing] == [1, 1]
    line = one_line(failing[0])
    server = f"PostgreSQL {postgres['PGHOST']}:{closed}/{postgres['PGDATABASE']}"
    assert line.startswith(f"cannot reach {server} (the server is down or does not answer): start it"), line
    assert_streak(pg_world, failing, DAYS[1])

    assert_recovered(pg_world, pg_world.run(DAYS[3]), DAYS[3])
    assert pg_world.leaks(HOOK_PASSWORD, _password(postgres)) == []


@pytest.mark.postgres
@pytest.mark.fault("a wrong PostgreSQL password")
def test_a_wrong_password_is_one_line_without_it_and_alerted_once(pg_world, postgres):
    """A wrong PostgreSQL password: exit 1, one line naming the server and role (never the password), one alert for two mornings, the next morning recovers."""
    pg_world.first_morning_in_this_process()
    wrong = _password(postgres) + "-wrong"
    bad = {"PGPASSWORD": wrong, "PGPASSFILE": str(pg_world.tmp_path / "no-pgpass")}
    failing = [pg_world.run(DAYS[1], **bad), pg_world.run(DAYS[2], **bad)]

    assert [done.returncode for done in failing] == [1, 1]
    line = one_line(failing[0])
    server = f"PostgreSQL {postgres['PGHOST']}:{postgres['PGPORT']}/{postgres['PGDATABASE']}"
    assert line.startswith(f"{server} refused the login of role {postgres['PGUSER']} (wrong or missing password)"), line
    assert_streak(pg_world, failing, DAYS[1])

    assert_recovered(pg_world, pg_world.run(DAYS[3]), DAYS[3])
    assert pg_world.leaks(HOOK_PASSWORD, wrong, _password(postgres)) == []


@pytest.mark.postgres
@pytest.mark.fault("a read-only PostgreSQL role")
def test_a_read_only_role_is_one_sentence_without_a_traceback_and_alerted_once(pg_world, postgres):
    """A role that may read but not write: exit 1, one sentence naming the role and the privilege (no dlt traceback), one alert for two mornings, the next morning recovers."""
    pg_world.first_morning_in_this_process()
    role, secret = f"{pg_world.settings.schema_prefix}_ro"[:60], "ro-Pw-51c9e0d7a2"
    with psycopg2.connect("", user="postgres") as con, con.cursor() as cur:  # .ci/postgres's pgpass has its line
        cur.execute(f"create role {role} login password %s", (secret,))
    with psycopg2.connect("") as con, con.cursor() as cur:  # the schemas' owner grants reading them
        cur.execute(
            "select schema_name from information_schema.schemata where schema_name like %s",
            (pg_world.settings.schema_prefix + "\\_%",),
        )
        for (schema,) in cur.fetchall():
            cur.execute(f'grant usage on schema "{schema}" to {role}')
            cur.execute(f'grant select on all tables in schema "{schema}" to {role}')
    read_only = {"PGUSER": role, "PGPASSWORD": secret, "PGPASSFILE": str(pg_world.tmp_path / "no-pgpass")}
    try:
        failing = [pg_world.run(DAYS[1], **read_only), pg_world.run(DAYS[2], **read_only)]
    finally:
        with psycopg2.connect("", user="postgres") as con, con.cursor() as cur:
            cur.execute(f"drop owned by {role}")
            cur.execute(f"drop role {role}")

    assert [done.returncode for done in failing] == [1, 1]
    line = one_line(failing[0])
    assert line.startswith(f"role {role} may not write to PostgreSQL "), line
    assert "permission denied for " in line and "file" not in line, line
    assert_streak(pg_world, failing, DAYS[1])

    assert_recovered(pg_world, pg_world.run(DAYS[3]), DAYS[3])
    assert pg_world.leaks(HOOK_PASSWORD, secret, _password(postgres)) == []
