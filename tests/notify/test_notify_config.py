"""Routing comes from notify.toml, URLs only from the environment (or dlt secrets), and every
form of a destination's credentials is scrubbed from texts we keep."""

from __future__ import annotations

import tomllib
from urllib.parse import quote

from dmf_watch.notify.destinations import CONFIG_FILE, Route, load_notify_config
from dmf_watch.notify.redact import Scrubber

PASSWORD = "Pw-7c1e9QxZ-notify"


def test_the_committed_file_routes_names_and_holds_no_url():
    data = tomllib.loads(CONFIG_FILE.read_text(encoding="utf-8"))
    assert set(data["destinations"]) == {"ra_team", "ra_urgent", "data_team"}
    assert all(set(d) <= {"daily", "weekly", "alerts"} for d in data["destinations"].values())


def test_destination_urls_come_from_the_environment_and_urls_env_gets_everything(tmp_path):
    env = {
        "DMF_NOTIFY_URL_RA_URGENT": "json://u:p@127.0.0.1:9/ra",
        "DMF_NOTIFY_URLS": "json://a:b@127.0.0.1:9/x  mailto://c:d@127.0.0.1:9?mode=insecure",
    }
    cfg = load_notify_config(tmp_path, env, use_dlt=False)
    assert [d.name for d in cfg.destinations] == ["ra_urgent", "DMF_NOTIFY_URLS#1", "DMF_NOTIFY_URLS#2"]
    assert set(cfg.unconfigured) == {"ra_team", "data_team"}
    urgent = cfg.destinations[0]
    assert urgent.route.wants("daily", "CRITICAL") and not urgent.route.wants("daily", "WARN")
    assert not urgent.route.wants("alert", "WARN") and not urgent.route.wants("weekly", "INFO")
    assert all(d.route.wants(k, "INFO") for d in cfg.destinations[1:] for k in ("daily", "weekly", "alert"))
    assert "127.0.0.1" not in repr(cfg)  # the URL never shows in a repr


def test_the_machine_override_changes_routing(tmp_path):
    (tmp_path / "notify.toml").write_text(
        '[notify]\nempty_day = "none"\nattempts = 1\n[destinations.data_team]\nalerts = "WARN"\n', encoding="utf-8"
    )
    cfg = load_notify_config(tmp_path, {"DMF_NOTIFY_URL_DATA_TEAM": "json://127.0.0.1:9/d"}, use_dlt=False)
    assert (cfg.empty_day, cfg.attempts) == ("none", 1)
    assert cfg.destinations[0].route == Route(daily="off", weekly=False, alerts="WARN")


def test_the_scrubber_removes_every_form_of_the_credentials():
    url = f"mailtos://dmf:{quote(PASSWORD + '/+')}@smtp.example.com?to=ra@example.com"
    scrub = Scrubber([url, "slack://TokenAAAAAA/TokenBBBBBB/TokenCCCCCC"])
    texts = [
        f"login failed for {PASSWORD}/+ on smtp",
        f"quoted {quote(PASSWORD + '/+', safe='')}",
        f"raw url {url} refused",
        "slack TokenBBBBBB rejected",
        "see mailtos://dmf:****@host",
    ]
    cleaned = " ".join(scrub(t) for t in texts)
    for secret in (PASSWORD, "TokenBBBBBB", "mailtos://"):
        assert secret not in cleaned
    assert scrub("Connection refused by 127.0.0.1") == "Connection refused by 127.0.0.1"
