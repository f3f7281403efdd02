"""Bad inputs are refused before anything connects or writes: one line on stderr, exit 1.

Every test here runs the real `dmf` entry point (`dmf.cli.main`) with the environment
cron would give it. Sockets and httpx clients are replaced by recorders that refuse, so a
refusal that came too late (after a connection attempt) fails the test instead of reaching
any address: nothing here can send a packet anywhere, loopback included, unless a test says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from dmf_watch.commands.cli import main
from dmf_watch.core.config import today_in_seoul
from support.cli import refused
from support.mfds import SERVICE_KEY, START_DATE
from support.scenarios import query

PASSWORD = "pa55-Hunter2-xyz"


@pytest.mark.fault("`--as-of 0001-01-01` or `9999-12-31`")
@pytest.mark.parametrize("as_of", ["0001-01-01", "1999-12-31", "9999-12-31"])
def test_an_as_of_outside_2000_to_today_is_refused_and_nothing_is_written(env, no_network, capsys, as_of):
    """--as-of before 2000 or after today in Seoul: one line, exit 1, nothing written."""
    err = refused(capsys, ["run", "--as-of", as_of])
    assert f"--as-of {as_of}" in err
    assert not (env / "data" / "dmf.duckdb").exists()
    assert not list((env / "reports").glob("*.xlsx"))
    assert no_network == []


@pytest.mark.fault("`--as-of 0001-01-01` or `9999-12-31`")
def test_tomorrow_in_seoul_is_refused_for_every_dated_command(env, no_network, capsys):
    """Tomorrow in Seoul is refused by every dated command."""
    tomorrow = (today_in_seoul() + timedelta(days=1)).isoformat()
    for command in ("run", "load", "report", "build", "enrich"):
        assert "after today in Seoul" in refused(capsys, [command, "--as-of", tomorrow])
    for command in ("run", "load"):
        assert "the live API serves only today's list" in refused(capsys, [command, "--as-of", tomorrow])
    for command in ("report", "registry", "status"):  # reading commands speak of the warehouse, not the API
        err = refused(capsys, [command, "--as-of", tomorrow])
        assert "no load is of a later day" in err and "API" not in err
    assert not (env / "data" / "dmf.duckdb").exists()
    assert no_network == []


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("http://169.254.169.254/latest/meta-data", "cloud metadata address (169.254.169.254)"),
        ("https://169.254.169.254/x", "cloud metadata address (169.254.169.254)"),
        ("http://[fd00:ec2::254]/x", "cloud metadata address (fd00:ec2::254)"),
        ("https://metadata.google.internal/computeMetadata/v1", "cloud metadata address (metadata.google.internal)"),
        ("http://metadata/x", "cloud metadata address (metadata)"),
        ("http://2852039166/x", "cloud metadata address (2852039166)"),
        ("http://[::ffff:169.254.169.254]/x", "cloud metadata address"),
        ("https://169.254.10.20/x", "link-local address (169.254.10.20)"),
        ("https://[fe80::1]/x", "link-local address (fe80::1)"),
        ("https://10.1.2.3/x", "private address 10.1.2.3"),
        ("https://172.16.0.9/x", "private address 172.16.0.9"),
        ("https://192.168.1.10/x", "private address 192.168.1.10"),
        ("https://[fc00::5]/x", "private address fc00::5"),
        (
            "http://apis.data.go.kr/1471000/MdcDmfInfoService01",
            "(http://apis.data.go.kr/1471000/MdcDmfInfoService01) is plain http",
        ),
        ("ftp://apis.data.go.kr/x", "is not an http(s) URL"),
    ],
)
@pytest.mark.fault("`MFDS_API_BASE_URL=http://169.254.169.254/...` or any plain-http host")
@pytest.mark.parametrize("command", ["run", "load"])
def test_a_base_url_that_must_not_be_reached_is_refused_before_any_connection(
    env, no_network, capsys, monkeypatch, url, named, command
):
    """Metadata, link-local, unnamed private and plain-http URLs are refused before any connection."""
    monkeypatch.setenv("MFDS_API_BASE_URL", url)
    err = refused(capsys, [command, "--as-of", START_DATE.isoformat()])
    assert named in err and "MFDS_API_BASE_URL" in err
    assert SERVICE_KEY not in err
    assert no_network == []
    assert not (env / "data" / "dmf.duckdb").exists()


@pytest.mark.parametrize(
    "url",
    [
        f"https://ra-team:{PASSWORD}@apis.data.go.kr/1471000/MdcDmfInfoService01",
        f"http://ra-team:{PASSWORD}@127.0.0.1:8089/x",
        f"https://:{PASSWORD}@apis.data.go.kr/x",
    ],
)
@pytest.mark.fault("a base URL with `user:password@`")
def test_credentials_in_the_url_are_refused_and_never_shown_or_stored(env, no_network, capsys, monkeypatch, url):
    """Credentials in the URL: refused in one line that never shows them; nothing stored."""
    monkeypatch.setenv("MFDS_API_BASE_URL", url)
    err = refused(capsys, ["run", "--as-of", START_DATE.isoformat()])
    assert "user name or password" in err
    assert PASSWORD not in err and "ra-team" not in err
    assert no_network == []
    assert not (env / "data" / "dmf.duckdb").exists()
    logged = b"".join(p.read_bytes() for p in (env / "state").rglob("*") if p.is_file())
    assert PASSWORD.encode() not in logged


@pytest.mark.fault("`MFDS_API_BASE_URL=http://169.254.169.254/...` or any plain-http host")
def test_the_loader_itself_refuses_a_metadata_url_when_called_without_the_cli(tmp_settings, no_network):
    """Defence in depth: load_day and fetch_registry judge the URL whoever calls them."""
    import dataclasses

    from dmf_watch.core.errors import ConfigError
    from dmf_watch.pipelines.mfds.helpers import fetch_registry
    from dmf_watch.pipelines.mfds.load import load_day

    settings = dataclasses.replace(tmp_settings, api_base_url="http://169.254.169.254/latest")
    with pytest.raises(ConfigError, match="cloud metadata"):
        load_day(settings, START_DATE, service_key=SERVICE_KEY)
    result = fetch_registry(f"https://u:{PASSWORD}@10.0.0.7/x", SERVICE_KEY)
    assert result.status == "failed" and result.requests == 0
    assert PASSWORD not in result.source_url and PASSWORD not in (result.reason or "")
    assert no_network == []


def test_a_private_mirror_named_in_the_allowed_hosts_passes_the_url_check():
    """The check alone (no connection is tried here): a mirror named on purpose is allowed."""
    from dmf_watch.core.url_policy import base_url_problem

    assert base_url_problem("https://10.1.2.3/mfds", ["10.1.2.3"]) is None
    assert base_url_problem("https://10.1.2.3/mfds", ["10.0.0.0/8"]) is None
    assert base_url_problem("https://10.1.2.3/mfds", ["10.9.9.9"]) is not None
    assert base_url_problem("http://10.1.2.3/mfds", ["10.1.2.3"]) is not None  # still https only
    assert base_url_problem("http://169.254.169.254/", ["169.254.169.254"]) is not None  # never
    assert base_url_problem("http://127.0.0.1:8089/x") is None and base_url_problem("http://localhost:1/") is None
    assert base_url_problem("http://[::1]:8089/x") is None


@pytest.mark.fault("`DMF_STATE_DIR` pointing at a file")
@pytest.mark.parametrize("setting", ["DMF_STATE_DIR", "DMF_DUCKDB_PATH", "DMF_REPORTS_DIR"])
def test_a_path_setting_that_is_a_file_is_named_in_one_line(env, no_network, capsys, monkeypatch, setting):
    """A state, warehouse or reports path that is a file, cannot be created or is read-only: named in one line."""
    blocker = env / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(setting, str(blocker / "dmf.duckdb") if setting == "DMF_DUCKDB_PATH" else str(blocker))
    err = refused(capsys, ["report", "--as-of", START_DATE.isoformat()])
    assert setting in err and str(blocker) in err and "is a file" in err
    assert no_network == []


@pytest.mark.fault("`DMF_STATE_DIR` pointing at a file")
@pytest.mark.parametrize("setting", ["DMF_STATE_DIR", "DMF_DUCKDB_PATH", "DMF_REPORTS_DIR"])
def test_a_path_setting_that_cannot_be_created_is_named_in_one_line(env, no_network, capsys, monkeypatch, setting):
    blocker = env / "a_file"
    blocker.write_text("not a directory")
    target = blocker / "sub" / "dir"  # a directory below a file can never be created
    monkeypatch.setenv(setting, str(target / "dmf.duckdb") if setting == "DMF_DUCKDB_PATH" else str(target))
    err = refused(capsys, ["report", "--as-of", START_DATE.isoformat()])
    assert setting in err and str(target) in err and "cannot be created" in err


@pytest.mark.fault("`DMF_STATE_DIR` pointing at a file")
@pytest.mark.parametrize("setting", ["DMF_STATE_DIR", "DMF_DUCKDB_PATH", "DMF_REPORTS_DIR"])
def test_a_path_setting_on_a_read_only_disk_is_named_in_one_line(
    env, no_network, capsys, monkeypatch, setting, read_only_dir
):
    monkeypatch.setenv(
        setting, str(read_only_dir / "dmf.duckdb") if setting == "DMF_DUCKDB_PATH" else str(read_only_dir)
    )
    err = refused(capsys, ["report", "--as-of", START_DATE.isoformat()])
    assert setting in err and str(read_only_dir) in err and "not writable" in err


@pytest.mark.fault("`--as-of 0001-01-01` or `9999-12-31`")
def test_a_live_load_before_the_latest_load_is_refused_and_the_latest_day_may_run_again(
    env, capsys, monkeypatch, start_simulator
):
    """A live load before the latest load is refused (use backfill); the latest day may run again."""
    server = start_simulator(day=START_DATE + timedelta(days=1))
    monkeypatch.setenv("MFDS_API_BASE_URL", server.base_url)
    later = (START_DATE + timedelta(days=1)).isoformat()
    assert main(["load", "--as-of", later]) == 0
    capsys.readouterr()
    rows_before = query_count(env)

    for command in ("load", "run"):
        err = refused(capsys, [command, "--as-of", START_DATE.isoformat()])
        assert f"before the latest load in the warehouse ({later})" in err and "dmf backfill" in err
    assert query_count(env) == rows_before

    assert main(["load", "--as-of", later]) == 0
    assert "skipped" in capsys.readouterr().out
    assert query_count(env) == rows_before


def query_count(env: Path) -> tuple[int, int]:
    from dmf_watch.core.config import load_settings

    settings = load_settings()
    return query(
        settings, "select (select count(*) from mfds_raw.load_runs), (select count(*) from mfds_raw.dmf_items)"
    )[0]


def test_an_unusable_lock_wait_is_named_in_one_line(env, no_network, capsys, monkeypatch):
    monkeypatch.setenv("DMF_LOCK_WAIT_S", "soon")
    err = refused(capsys, ["run", "--as-of", date(2026, 11, 29).isoformat()])
    assert "DMF_LOCK_WAIT_S" in err and "'soon'" in err


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    from support.disks import tmpfs

    with tmpfs(tmp_path / "ro", "1m", read_only=True) as path:
        yield path
