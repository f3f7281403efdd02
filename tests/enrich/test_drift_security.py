"""The key sweep over the drift paths: a hostile API that echoes the service key inside drifted
items (as a key name and as values) leaves it in no drift reason, no `schema_drift` record, no
prompt sent to agy, no report, log, state file or warehouse text."""

from __future__ import annotations

import logging
import zipfile
from datetime import date
from urllib.parse import quote

import duckdb
import pytest

from fake_agy.support import fake_calls, fake_env
from support.mfds import SERVICE_KEY
from support.scenarios import DaysSource, run_days, settings_with_fake_agy
from support.secrets import file_bytes, key_leaks

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2 = date(2026, 10, 8), date(2026, 10, 9)


def hostile(items: list[dict]) -> list[dict]:
    """Grown items whose new keys and values carry the key in several forms."""
    out = [dict(item) for item in items]
    out[0] = {
        **out[0],
        f"serviceKey={SERVICE_KEY}": SERVICE_KEY,
        "echo": f"key {quote(SERVICE_KEY, safe='')}",
        SERVICE_KEY: "x",
    }
    out[1] = {**out[1], "remark": f"https://x/?serviceKey={SERVICE_KEY}&a=1"}
    return out


@pytest.mark.fault("the API grows an unknown item field")
def test_drift_reason_record_prompt_and_report_hold_no_service_key(real_sample, tmp_path, monkeypatch, caplog, capfd):
    """a hostile drifted API echoing the key: 0 leaks in reason, schema_drift, agy prompt, report, logs, warehouse"""
    caplog.set_level(logging.DEBUG)
    log = fake_env(monkeypatch, tmp_path, "ok")
    settings = settings_with_fake_agy(tmp_path)
    _, drifted = run_days(
        settings,
        DaysSource({DAY_1: real_sample, DAY_2: hostile(real_sample)}),
        [(DAY_1, None), (DAY_2, None)],
        SERVICE_KEY,
    )
    assert (drifted.verdict, drifted.exit_code) == ("rejected", 2)
    assert "item schema changed" in drifted.reason and "***" in drifted.reason  # the key name was redacted

    with duckdb.connect(str(settings.duckdb_path)) as con:
        [(reason, record)] = con.execute(
            "select reason, schema_drift from mfds_raw.load_runs where as_of_date = ?", [DAY_2]
        ).fetchall()
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns where data_type = 'VARCHAR'"
        ).fetchall()
        hits = [
            f"{s}.{t}.{c}"
            for s, t, c in columns
            if con.execute(f'select count(*) from "{s}"."{t}" where "{c}" like ?', ["%9f3b1c7e%"]).fetchone()[0]
        ]
    assert "echo" in record and "remark" in record  # the hostile items are the samples
    assert key_leaks(reason.encode()) == [] and key_leaks(record.encode()) == []
    assert hits == []

    calls = fake_calls(log)
    assert len(calls) == 1 and "9f3b1c7e" not in repr(calls)  # the prompt agy received

    report = settings.reports_dir / f"dmf_daily_{DAY_2:%Y%m%d}.xlsx"
    with zipfile.ZipFile(report) as book:
        unzipped = b"".join(book.read(name) for name in book.namelist())
    assert b"item schema changed" in unzipped and key_leaks(unzipped) == []

    texts = [drifted.reason or "", *(r.getMessage() for r in caplog.records), *capfd.readouterr()]
    assert [t[:80] for t in texts if key_leaks(t.encode())] == []
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {str(p): key_leaks(file_bytes(p)) for p in files if key_leaks(file_bytes(p))} == {}
