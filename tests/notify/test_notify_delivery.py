"""Delivery on real parts: days produced by the real pipeline (simulator over HTTP, dlt, dbt,
the enrich step with the fake agy, the xlsx report), a real SMTP server and a real webhook
receiver on 127.0.0.1, apprise in between. The mail and the JSON are parsed back, faults leave
`dmf run` at exit 0 with the failure recorded, and no credential reaches any output.

The tests start from one baseline day, the real sample as DAY_1, replayed through the daily job
with the AI off and nothing to send (`baseline`): such a replay is shared by every test of the
session (support/replays.py), where a replay with agy or a destination is built again by each
test. A baseline has no events, so agy has nothing to brief on it; the day after it runs with
agy on, and a test that counts the baseline's message sends it with that day's notify step.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import re
import shutil
import zipfile
from datetime import date, timedelta

import duckdb
import openpyxl
import pytest

from dmf_watch.commands import cli
from dmf_watch.commands.run import run_day
from dmf_watch.core.config import load_settings
from dmf_watch.notify.day import notify_day
from dmf_watch.reports.daily_report import render_daily
from dmf_watch.simulator.server import SimulatorServer
from fake_agy.support import FAKE_AGY
from support.loopback import SmtpServer, WebhookReceiver
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, query, run_days

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2 = date(2026, 11, 24), date(2026, 11, 25)  # a Tuesday and a Wednesday
WITHDRAWN_NO = "20050831-12-B-49-06"  # applicant 1208128636 is on the watchlist
CHANGED_NO = "20050831-14-B-58-02"  # same applicant: its manufacturer is replaced
OLD_MAKER, NEW_MAKER = "Excella GmbH & Co. KG", "Feucht Active Ingredients GmbH"
PASSWORD = "Pw-7c1e9QxZ-notify"  # distinctive: grepped for everywhere at the end
HOOK_TOKEN = "hooktoken-5d2f8a0b"


def critical_days(real_data_dir) -> dict[date, list[dict]]:
    sample = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    day_2 = [
        dict(r, MNFCTR_NAME=NEW_MAKER) if r["DMF_PERMIT_NO"] == CHANGED_NO else r
        for r in sample
        if r["DMF_PERMIT_NO"] != WITHDRAWN_NO
    ]
    return {DAY_1: sample, DAY_2: day_2}


def settings_in(root, *, routes: bool = True):
    state = root / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "agy.toml").write_text("[enrich]\nretry_backoff_seconds = 0\n", encoding="utf-8")
    if routes:  # a notify.toml marks a replay as one with something to send: never shared
        # Fast, bounded retries for the tests (the committed default waits 2 s between 3 tries).
        (state / "notify.toml").write_text("[notify]\nattempts = 2\nretry_wait_seconds = 0\n", encoding="utf-8")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=state
    )
    return dataclasses.replace(settings, agy_binary=str(FAKE_AGY))


def baseline(sample: list[dict], root):
    """The real sample accepted as DAY_1 through the daily job, the AI off and no destination (a
    copy of the replay the session shares); then the settings of the tests, notify.toml written."""
    with pytest.MonkeyPatch.context() as mp:
        for name in [name for name in os.environ if name.startswith(("DMF_NOTIFY_URL", "FAKE_AGY"))]:
            mp.delenv(name)
        mp.setenv("DMF_AI_DISABLED", "1")
        (first,) = run_days(settings_in(root, routes=False), DaysSource({DAY_1: sample}), [(DAY_1, None)], SERVICE_KEY)
    assert first.exit_code == 0
    return settings_in(root)


@pytest.fixture(scope="module")
def built(real_data_dir, tmp_path_factory):
    """Two real days (baseline, then a day with CRITICAL events), nothing configured to send."""
    root = tmp_path_factory.mktemp("notify_built")
    days = critical_days(real_data_dir)
    settings = baseline(days[DAY_1], root)
    source = DaysSource(days)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DMF_NOTIFY_URLS", raising=False)
        mp.setenv("FAKE_AGY_MODE", "ok")
        mp.setenv("FAKE_AGY_LOG", str(root / "fake_agy.jsonl"))
        mp.delenv("DMF_AI_DISABLED", raising=False)
        outcomes = run_days(settings, source, [(DAY_2, None)], SERVICE_KEY)
    assert [o.exit_code for o in outcomes] == [0]
    return settings, source


def copy_of(built, tmp_path):
    """The built warehouse and reports in the test's own directory (each test sends afresh)."""
    settings, source = built
    shutil.copy(settings.duckdb_path, tmp_path / "dmf.duckdb")
    shutil.copytree(settings.reports_dir, tmp_path / "reports")
    mine = settings_in(tmp_path)
    return mine, source


def cli_env(monkeypatch, settings, urls: list[str]) -> None:
    monkeypatch.setenv("DMF_DUCKDB_PATH", str(settings.duckdb_path))
    monkeypatch.setenv("DMF_REPORTS_DIR", str(settings.reports_dir))
    monkeypatch.setenv("DMF_STATE_DIR", str(settings.state_dir))
    monkeypatch.setenv("DMF_NOTIFY_URLS", " ".join(urls))
    monkeypatch.setenv("DMF_AGY_BINARY", str(FAKE_AGY))
    monkeypatch.setenv("FAKE_AGY_MODE", "ok")


def deliveries(settings):
    return query(
        settings,
        "select message_kind, message_key, destination, service, outcome, attempts, error "
        "from notify.deliveries order by delivered_at, delivery_id",
    )


def test_the_critical_day_reaches_mail_with_the_xlsx_and_the_webhook_as_json(built, tmp_path, monkeypatch, capsys):
    settings, _ = copy_of(built, tmp_path)
    with SmtpServer("dmf", PASSWORD) as smtp, WebhookReceiver() as hook:
        cli_env(monkeypatch, settings, [smtp.url(), hook.url(HOOK_TOKEN, PASSWORD)])
        assert cli.main(["notify", "--as-of", DAY_2.isoformat()]) == 0
        printed = capsys.readouterr().out
        assert "2 delivered" in printed

        assert len(smtp.inbox.messages) == 1
        mail = smtp.inbox.messages[0]
        subject = str(mail["Subject"])
        assert subject.startswith(f"[DMF Watch][긴급] {DAY_2} 일일 요약 — 적재 반영")
        body = mail.get_body(preferencelist=("plain",)).get_content()
        html_body = mail.get_body(preferencelist=("html",)).get_content()
        assert f"{WITHDRAWN_NO} — 등록 취하(목록에서 사라짐)" in body
        assert f"제조소명 변경: {OLD_MAKER} → {NEW_MAKER}" in body
        assert "[긴급·관심]" in body and "AI 요약 (AI 생성·참고용)" in body
        assert "Excella GmbH &amp; Co. KG" in html_body  # values are escaped in HTML
        attachments = list(mail.iter_attachments())
        assert [a.get_filename() for a in attachments] == [f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"]
        xlsx = attachments[0].get_content()
        sheet = openpyxl.load_workbook(io.BytesIO(xlsx), read_only=True)["취하"]
        assert WITHDRAWN_NO in {c for row in sheet.iter_rows(values_only=True) for c in row}

        assert len(hook.requests) == 1
        request = hook.requests[0]
        payload = request["json"]
        assert request["path"] == "/hook" and request["headers"]["Authorization"].startswith("Basic ")
        assert payload["title"] == subject and payload["type"] == "failure"
        assert f"{WITHDRAWN_NO} — 등록 취하(목록에서 사라짐)" in payload["message"]
        assert f"제조소명 변경: {OLD_MAKER} → {NEW_MAKER}" in payload["message"]

        print("\n--- mail received by the loopback SMTP server ---")
        for header in ("From", "To", "Subject", "Date", "Content-Type"):
            print(f"{header}: {mail[header]}")
        print(body[:1200])
        print(f"attachment: {attachments[0].get_filename()} ({len(xlsx)} bytes)")
        print("--- webhook JSON ---")
        import json

        print(json.dumps(payload, ensure_ascii=False, indent=1)[:1500])

        assert cli.main(["notify", "--as-of", DAY_2.isoformat()]) == 0  # a rerun sends nothing
        assert (len(smtp.inbox.messages), len(hook.requests)) == (1, 1)
        assert cli.main(["notify", "--as-of", DAY_2.isoformat(), "--resend"]) == 0
        assert (len(smtp.inbox.messages), len(hook.requests)) == (2, 2)
    assert [(kind, outcome) for kind, _, _, _, outcome, _, _ in deliveries(settings)] == [("daily", "sent")] * 4


def test_the_baseline_day_and_a_day_without_events_send_one_line(built, tmp_path, monkeypatch):
    settings, _ = copy_of(built, tmp_path)
    with WebhookReceiver() as hook:
        monkeypatch.setenv("DMF_NOTIFY_URLS", hook.url(HOOK_TOKEN, PASSWORD))
        notify_day(settings, DAY_1)
        assert "기준선을 설정한 날" in hook.requests[0]["json"]["message"]
        # a third day identical to the second: no event, one line
        with SimulatorServer(
            DaysSource({**critical_days_of(built), date(2026, 11, 26): critical_days_of(built)[DAY_2]}),
            service_key=SERVICE_KEY,
        ) as simulator:
            simulator.set_day(date(2026, 11, 26))
            run_day(
                dataclasses.replace(settings, api_base_url=simulator.base_url),
                date(2026, 11, 26),
                service_key=SERVICE_KEY,
                echo=lambda line: None,
            )
        line = hook.requests[-1]["json"]["message"]
        assert line.startswith("DMF Watch 2026-11-26: 변경 없음") and "\n" not in line


def critical_days_of(built):
    _, source = built
    return {DAY_1: source.items_for(1), DAY_2: source.items_for(2)}


@pytest.mark.fault("notification delivery fails: SMTP refused, webhook 500, webhook timeout")
def test_delivery_faults_leave_dmf_run_at_exit_0_recorded_on_the_operations_sheet_without_credentials(
    built, tmp_path, monkeypatch, capsys, caplog
):
    caplog.set_level(logging.INFO)
    settings, source = copy_of(built, tmp_path)
    refusing = SmtpServer("dmf", PASSWORD)  # never started: the port refuses
    with (
        WebhookReceiver(status=500) as broken,
        WebhookReceiver(delay=3) as slow,
        SimulatorServer(source, service_key=SERVICE_KEY) as simulator,
    ):
        cli_env(
            monkeypatch,
            settings,
            [
                refusing.url(cto="1"),
                broken.url(HOOK_TOKEN, PASSWORD, "broken"),
                slow.url(HOOK_TOKEN, PASSWORD, "slow", rto="1"),
            ],
        )
        monkeypatch.setenv("MFDS_API_BASE_URL", simulator.base_url)
        monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
        simulator.set_day(DAY_2)
        assert cli.main(["run", "--as-of", DAY_2.isoformat()]) == 0
        assert len(broken.requests) == 2 and len(slow.requests) == 2  # bounded: 2 tries each
    out = capsys.readouterr()
    assert "3 failed after retries" in out.out

    rows = deliveries(settings)
    assert [(d, o, a) for _, _, d, _, o, a, _ in rows] == [
        ("DMF_NOTIFY_URLS#1", "failed", 2),
        ("DMF_NOTIFY_URLS#2", "failed", 2),
        ("DMF_NOTIFY_URLS#3", "failed", 2),
    ]
    assert all(error for *_, error in rows)

    report = settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"
    ops = openpyxl.load_workbook(report, read_only=True)["운영"]
    cells = [[c for c in row] for row in ops.iter_rows(values_only=True)]
    failed = [row for row in cells if "실패" in row and str(row[5]).startswith("DMF_NOTIFY_URLS")]  # Korean outcomes
    assert {row[5] for row in failed} == {"DMF_NOTIFY_URLS#1", "DMF_NOTIFY_URLS#2", "DMF_NOTIFY_URLS#3"}

    secrets = [PASSWORD, HOOK_TOKEN]
    texts = [out.out, out.err, caplog.text]
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns where data_type = 'VARCHAR'"
        ).fetchall()
        for schema, table, column in columns:
            texts += [str(v) for (v,) in con.execute(f'select "{column}" from "{schema}"."{table}"').fetchall()]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in settings.state_dir.rglob("*") if p.is_file()]
    for path in settings.reports_dir.glob("*.xlsx"):
        with zipfile.ZipFile(path) as archive:
            texts += [archive.read(name).decode("utf-8", errors="replace") for name in archive.namelist()]
    blob = "\n".join(texts)
    assert "DMF_NOTIFY_URLS#2" in blob  # the sweep really reads these outputs
    for secret in secrets:
        assert secret not in blob
        assert secret.encode() not in settings.duckdb_path.read_bytes()


def test_a_failed_run_raises_one_warn_alert_and_the_successful_rerun_one_recovery(built, tmp_path, monkeypatch):
    settings, _ = copy_of(built, tmp_path)
    error = f"dbt build failed for {DAY_2}, nothing was published"
    with WebhookReceiver() as hook:
        monkeypatch.setenv("DMF_NOTIFY_URLS", hook.url(HOOK_TOKEN, PASSWORD))
        assert notify_day(settings, DAY_2, run_error=error).alerts == ["run_failed"]
        assert notify_day(settings, DAY_2, run_error=error).alerts == []  # still broken: quiet
        assert notify_day(settings, DAY_2).alerts == ["recovered"]  # the rerun succeeded
        assert notify_day(settings, DAY_1).alerts == []  # history is not re-judged
    titles = [r["json"]["title"] for r in hook.requests]
    assert titles[0] == f"[DMF Watch] 경고: 일일 작업 실패 ({DAY_2})"
    assert error in hook.requests[0]["json"]["message"]
    assert sum("일일 작업 실패" in t for t in titles) == 1
    assert sum("복구" in t for t in titles) == 1
    assert query(settings, "select level, kind from notify.alerts order by raised_at") == [
        ("WARN", "run_failed"),
        ("WARN", "recovered"),
    ]


def test_notify_test_prints_one_line_per_destination_with_its_name_only(tmp_path, monkeypatch, capsys):
    settings = settings_in(tmp_path)
    with SmtpServer("dmf", PASSWORD) as smtp, WebhookReceiver(status=500) as broken:
        cli_env(monkeypatch, settings, [smtp.url(), broken.url(HOOK_TOKEN, PASSWORD)])
        assert cli.main(["notify", "test"]) == 1
        assert len(smtp.inbox.messages) == 1
        assert "시험 메시지" in str(smtp.inbox.messages[0]["Subject"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "DMF_NOTIFY_URLS#1 (everything): ok"
    assert lines[1].startswith("DMF_NOTIFY_URLS#2 (everything): failed") and "500" in lines[1]
    assert len(lines) == 2
    assert PASSWORD not in "\n".join(lines) and HOOK_TOKEN not in "\n".join(lines)


def test_no_destination_sends_nothing_and_says_so_once(built, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.INFO, logger="dmf.notify")
    settings, _ = copy_of(built, tmp_path)
    monkeypatch.delenv("DMF_NOTIFY_URLS", raising=False)
    outcome = notify_day(settings, DAY_2)
    assert outcome.note == "no notification destination configured: nothing sent"
    assert len([r for r in caplog.records if "nothing sent" in r.getMessage()]) == 1
    assert query(settings, "select count(*) from notify.deliveries") == [(0,)]


# Tuesday to Friday, from DAY_1: the first day is the module's shared baseline.
SEQUENCE = [DAY_1 + timedelta(days=n) for n in range(4)]


def test_accepted_rejected_rejected_accepted_gives_one_warn_alert_and_one_recovery_and_reruns_send_nothing(
    real_data_dir, tmp_path, monkeypatch
):
    sample = read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")
    settings = baseline(sample, tmp_path)  # the accepted first day, its message not sent yet
    source = DaysSource({day: sample for day in SEQUENCE})
    faults = {SEQUENCE[1]: "truncate_last_page", SEQUENCE[2]: "truncate_last_page"}
    monkeypatch.setenv("DMF_AI_DISABLED", "1")
    with (settings.state_dir / "notify.toml").open("a", encoding="utf-8") as routes:
        routes.write('\n[destinations.kim]\nowner = "김지현"\ndaily = "INFO"\n')
    with WebhookReceiver() as hook, WebhookReceiver() as kim:
        monkeypatch.setenv("DMF_NOTIFY_URLS", hook.url(HOOK_TOKEN, PASSWORD))
        monkeypatch.setenv("DMF_NOTIFY_URL_KIM", kim.url(HOOK_TOKEN, PASSWORD))
        # the first morning's notify step, as run_day ends it (the day was replayed with nothing to send)
        assert notify_day(settings, SEQUENCE[0]).recorded
        render_daily(settings, SEQUENCE[0])
        outcomes = run_days(settings, source, [(day, faults.get(day)) for day in SEQUENCE[1:]], SERVICE_KEY)
        assert [o.exit_code for o in outcomes] == [2, 2, 0]
        sent = len(hook.requests)
        for day in SEQUENCE:  # the notify step again, each day
            assert notify_day(settings, day).summary() == "nothing new to send"
        again = run_days(settings, source, [(SEQUENCE[-1], None)], SERVICE_KEY)  # and a whole rerun
        assert again[0].exit_code == 0
        assert len(hook.requests) == sent
    alerts = query(settings, "select as_of_date, level, kind from notify.alerts order by raised_at")
    assert alerts == [(SEQUENCE[1], "WARN", "load_rejected"), (SEQUENCE[3], "WARN", "recovered")]
    titles = [r["json"]["title"] for r in hook.requests]
    assert sum(t.startswith("[DMF Watch] 경고: 적재 거부") for t in titles) == 1
    assert sum(t.startswith("[DMF Watch] 복구") for t in titles) == 1
    assert len(titles) == 6  # four daily messages + the alert + the recovery
    # A load cut short is not a gate's verdict: the report and the message say what happened.
    banner = [
        str(c.value)
        for row in openpyxl.load_workbook(settings.reports_dir / f"dmf_daily_{SEQUENCE[1]:%Y%m%d}.xlsx")[
            "요약"
        ].iter_rows()
        for c in row
        if str(c.value or "").startswith("적재 거부")
    ]
    assert banner and "목록을 끝까지 받지 못해" in banner[0] and "게이트" not in banner[0]
    assert "수집 불완전" in next(r["json"]["message"] for r in kim.requests)
    # An owner hears of the rejection once, with the streak's alert; no day had items of theirs.
    assert [r["json"]["title"] for r in kim.requests] == [f"[DMF Watch][경고] {SEQUENCE[1]} 김지현 담당 — 적재 거부"]
    print("\n" + "\n".join(titles))


def test_a_run_that_fails_before_loading_still_raises_its_alert_and_keeps_exit_1(built, tmp_path, monkeypatch, capsys):
    settings, _ = copy_of(built, tmp_path)
    with WebhookReceiver() as hook:
        cli_env(monkeypatch, settings, [hook.url(HOOK_TOKEN, PASSWORD)])
        monkeypatch.setenv("MFDS_API_BASE_URL", "http://127.0.0.1:9")  # never reached: no key
        monkeypatch.delenv("MFDS_SERVICE_KEY", raising=False)
        monkeypatch.chdir(tmp_path)  # no .dlt/secrets.toml here
        assert cli.main(["run", "--as-of", "2026-11-26"]) == 1
        assert cli.main(["run", "--as-of", "2026-11-26"]) == 1  # still broken: no second alert
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "MFDS_SERVICE_KEY" in err[0]
    assert [r["json"]["title"] for r in hook.requests] == ["[DMF Watch] 경고: 일일 작업 실패 (2026-11-26)"]
    assert "MFDS_SERVICE_KEY" in hook.requests[0]["json"]["message"]


def project_with_rule(tmp_path, old: str, new: str):
    """A copy of the dbt project whose severity_rules.csv has one rule edited (an analyst's re-scoring)."""
    root = tmp_path / "project"
    project = load_settings({}).project_dir
    for name in ("models", "macros", "seeds", "snapshots", "dbt_project.yml", "profiles.yml"):
        source = project / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    shutil.copytree(project / "tests" / "dbt", root / "tests" / "dbt")
    rules = root / "seeds" / "severity_rules.csv"
    text = rules.read_text(encoding="utf-8")
    assert text.count(old) == 1
    rules.write_text(text.replace(old, new), encoding="utf-8")
    return root


def action_tags(xlsx: bytes) -> list[str]:
    """The 중요도 cell of each row of the attached report's 조치항목 sheet."""
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx), read_only=True)["조치항목"]
    rows = list(sheet.iter_rows(min_row=4, values_only=True))
    assert rows[0][0] == "중요도"
    return [str(row[0]) for row in rows[1:] if row and row[0] and row[0] != "조치할 항목 없음"]


def test_after_a_rescoring_the_mail_attaches_a_report_with_the_counts_of_its_text(built, tmp_path, monkeypatch, capsys):
    from dmf_watch.transform.build import build

    settings, _ = copy_of(built, tmp_path)
    report = settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"
    before = action_tags(report.read_bytes())
    assert before.count("긴급 · 관심") == 2  # the watched withdrawal and the replaced manufacturer

    # The analyst re-scores a watched withdrawal as HIGH and rebuilds; nobody runs `dmf report`.
    rescored = project_with_rule(
        tmp_path,
        "10,WITHDRAWN,,true,,,CRITICAL,",
        "10,WITHDRAWN,,true,,,HIGH,",
    )
    assert build(dataclasses.replace(settings, project_dir=rescored)).success
    assert action_tags(report.read_bytes()) == before  # the file on disk is the old scoring

    with SmtpServer("dmf", PASSWORD) as smtp:
        cli_env(monkeypatch, settings, [smtp.url()])
        assert cli.main(["notify", "--as-of", DAY_2.isoformat()]) == 0
        assert "1 delivered" in capsys.readouterr().out
    mail = smtp.inbox.messages[0]
    body = mail.get_body(preferencelist=("plain",)).get_content()
    (attachment,) = list(mail.iter_attachments())
    attached = action_tags(attachment.get_content())

    text_critical = int(re.search(r"긴급 (\d+) · 관심목록", body).group(1))
    text_actions = int(re.search(r"조치 목록 \(긴급·높음·관심목록 (\d+)건\)", body).group(1))
    assert (text_critical, text_actions) == (1, 2)
    assert sum(tag.startswith("긴급") for tag in attached) == text_critical
    assert len(attached) == text_actions
    assert attached == ["긴급 · 관심", "높음 · 관심"]
    # the file on disk has the same actions (rendered again after sending, to list the delivery)
    assert action_tags(report.read_bytes()) == attached
