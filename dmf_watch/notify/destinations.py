"""Who gets which message: the committed `dmf_watch/notify/notify.toml`, a machine override, and the URLs.

The committed file holds routing only. A destination's URL carries credentials (an SMTP
password, a webhook token), so it is read from the environment or dlt secrets at run time and
is kept in a `Destination` whose repr never shows it; everything that is stored or printed
uses the destination's name. Loading never raises: a broken file falls back to the defaults
(no destination), because a delivery problem must never stop the pipeline.
"""

from __future__ import annotations

import logging
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger("dmf.notify")

CONFIG_FILE = Path(__file__).resolve().parent / "notify.toml"
LOCAL_OVERRIDE_NAME = "notify.toml"
URLS_VARIABLE = "DMF_NOTIFY_URLS"
URL_ENV_PREFIX = "DMF_NOTIFY_URL_"
SECRETS_SECTION = "notify"

LEVELS = ("INFO", "WARN", "CRITICAL")
OFF = "off"
EMPTY_DAY_CHOICES = ("line", "none")


def level_rank(level: str) -> int:
    """INFO 0 < WARN 1 < CRITICAL 2; an unknown level ranks as INFO."""
    return LEVELS.index(level) if level in LEVELS else 0


@dataclass(frozen=True)
class Route:
    """Which messages a destination receives. `daily`/`alerts` are a lowest level or "off";
    `owner` narrows the daily summary to the items of the watch terms that owner follows."""

    daily: str = OFF
    weekly: bool = False
    alerts: str = OFF
    owner: str | None = None

    def wants(self, kind: str, level: str) -> bool:
        if kind == "weekly":
            return self.weekly
        if kind == "test":
            return True
        threshold = self.daily if kind == "daily" else self.alerts
        return threshold != OFF and level_rank(level) >= level_rank(threshold)


EVERYTHING = Route(daily="INFO", weekly=True, alerts="INFO")


@dataclass(frozen=True)
class Destination:
    """A named destination. The URL is a secret: excluded from repr and equality."""

    name: str
    route: Route
    url: str = field(repr=False, compare=False, default="")

    @property
    def service(self) -> str:
        """The URL's scheme (mailto, json, slack, ...): not a secret, useful on the sheet."""
        return self.url.split("://", 1)[0].lower() if "://" in self.url else "?"

    @property
    def is_mail(self) -> bool:
        return self.service in ("mailto", "mailtos")


@dataclass(frozen=True)
class NotifyConfig:
    destinations: tuple[Destination, ...] = ()
    #: destinations named in the file whose URL is not set (skipped, named in the log)
    unconfigured: tuple[str, ...] = ()
    empty_day: str = "line"
    attempts: int = 3
    retry_wait_seconds: float = 2.0
    attach_report: bool = True
    source: str = "defaults"

    def secrets(self) -> list[str]:
        return [d.url for d in self.destinations if d.url]


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, ValueError) as exc:
        log.warning("notify config %s ignored: %s", path, type(exc).__name__)
        return None


def _level(value: Any, default: str) -> str:
    if isinstance(value, str):
        upper = value.strip().upper()
        if upper in LEVELS:
            return upper
        if value.strip().lower() == OFF:
            return OFF
    return default


def _route(raw: Mapping[str, Any], base: Route) -> Route:
    weekly = raw.get("weekly", base.weekly)
    owner = raw.get("owner")
    return Route(
        daily=_level(raw.get("daily"), base.daily),
        weekly=weekly if isinstance(weekly, bool) else base.weekly,
        alerts=_level(raw.get("alerts"), base.alerts),
        owner=" ".join(owner.split()) or None if isinstance(owner, str) else base.owner,
    )


def _dlt_secret(name: str) -> str | None:
    """`<name> = "..."` under [notify] in .dlt/secrets.toml (or dlt's NOTIFY__<NAME> env)."""
    try:
        import dlt

        value = dlt.secrets.get(f"{SECRETS_SECTION}.{name}")
    except Exception:  # dlt not configured here: there is simply no secret
        return None
    return str(value).strip() if value else None


def _url_for(name: str, env: Mapping[str, str], use_dlt: bool) -> str | None:
    key = URL_ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", name).upper()
    value = (env.get(key) or "").strip()
    if value:
        return value
    return _dlt_secret(name) if use_dlt else None


def load_notify_config(
    state_dir: Path | None = None, env: Mapping[str, str] | None = None, *, use_dlt: bool = True
) -> NotifyConfig:
    """The committed file, then `<state_dir>/notify.toml`, then the URLs. Never raises."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {"notify": {}, "destinations": {}}
    sources = []
    paths = [CONFIG_FILE] + ([Path(state_dir) / LOCAL_OVERRIDE_NAME] if state_dir else [])
    for path in paths:
        if not path.is_file():
            continue
        data = _read(path)
        if data is None:
            continue
        sources.append(str(path))
        if isinstance(data.get("notify"), dict):
            merged["notify"].update(data["notify"])
        for name, raw in (data.get("destinations") or {}).items():
            if isinstance(raw, dict):
                merged["destinations"].setdefault(str(name), {}).update(raw)

    settings = merged["notify"]
    destinations: list[Destination] = []
    unconfigured: list[str] = []
    for name, raw in sorted(merged["destinations"].items()):
        url = _url_for(name, env, use_dlt)
        if url:
            destinations.append(Destination(name, _route(raw, Route()), url))
        else:
            unconfigured.append(name)
    for index, url in enumerate((env.get(URLS_VARIABLE) or "").split(), start=1):
        destinations.append(Destination(f"{URLS_VARIABLE}#{index}", EVERYTHING, url))

    empty_day = settings.get("empty_day", "line")
    attempts = settings.get("attempts", 3)
    wait = settings.get("retry_wait_seconds", 2.0)
    attach = settings.get("attach_report", True)
    return NotifyConfig(
        destinations=tuple(destinations),
        unconfigured=tuple(unconfigured),
        empty_day=empty_day if empty_day in EMPTY_DAY_CHOICES else "line",
        attempts=min(max(attempts, 1), 10) if isinstance(attempts, int) and not isinstance(attempts, bool) else 3,
        retry_wait_seconds=float(wait)
        if isinstance(wait, (int, float)) and not isinstance(wait, bool) and wait >= 0
        else 2.0,
        attach_report=attach if isinstance(attach, bool) else True,
        source=" + ".join(sources) or "defaults",
    )
