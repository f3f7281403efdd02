"""The service key appears nowhere: not in logs, stdout/stderr, DuckDB, or dlt's state and traces."""

from __future__ import annotations

import logging

import duckdb

from dmf_watch.pipelines.mfds.load import load_day
from support.mfds import SERVICE_KEY, START_DATE, pointed_at
from support.secrets import file_bytes, key_leaks


def test_service_key_appears_in_no_log_output_file_or_table(
    tmp_settings, start_simulator, fast_policy, caplog, capfd, monkeypatch
):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)  # resolved by dlt: must stay out of its trace
    server = start_simulator(faults="http500:1,http429:1@retry_after=0,drop:1")
    settings = pointed_at(tmp_settings, server)

    outcomes = [load_day(settings, START_DATE, retry_policy=fast_policy)]  # retried, complete
    server.set_faults("xml_code:30")
    outcomes.append(load_day(settings, START_DATE, service_key=SERVICE_KEY, force=True, retry_policy=fast_policy))
    server.set_faults("truncate_last_page")
    outcomes.append(load_day(settings, START_DATE, force=True, retry_policy=fast_policy))
    server.set_faults("slow:1@times=1")
    outcomes.append(
        load_day(
            settings,
            START_DATE,
            force=True,
            retry_policy=fast_policy.__class__(**{**fast_policy.__dict__, "read_timeout_s": 0.2}),
        )
    )
    assert [o.fetch_status for o in outcomes] == ["complete", "failed", "incomplete", "complete"]

    texts = [o.summary() for o in outcomes] + [repr(o) for o in outcomes]
    texts += [record.getMessage() for record in caplog.records]
    out, err = capfd.readouterr()
    texts += [out, err]
    assert any("HTTP Request" in record.getMessage() for record in caplog.records)  # httpx did log
    assert [t for t in texts if key_leaks(t.encode())] == []

    files = [p for p in tmp_settings.state_dir.rglob("*") if p.is_file()]
    assert any(p.name == "trace.pickle" for p in files)
    assert {str(p): key_leaks(file_bytes(p)) for p in files if key_leaks(file_bytes(p))} == {}

    db_files = [p for p in tmp_settings.duckdb_path.parent.iterdir() if p.is_file()]
    assert {str(p): key_leaks(p.read_bytes()) for p in db_files if key_leaks(p.read_bytes())} == {}

    # DuckDB compresses strings, so also ask it: no text value anywhere holds the key.
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        columns = con.execute(
            "select table_schema, table_name, column_name from information_schema.columns where data_type = 'VARCHAR'"
        ).fetchall()
        hits = []
        for schema, table, column in columns:
            found = con.execute(
                f'select count(*) from "{schema}"."{table}" where "{column}" like ?', ["%9f3b1c7e%"]
            ).fetchone()[0]
            if found:
                hits.append(f"{schema}.{table}.{column}")
    assert hits == []
