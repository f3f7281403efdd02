"""Where things live, read once from the environment.

Every step takes a `Settings` instead of reading the environment itself, so tests and the
demo can point a whole run at a temporary warehouse without touching `os.environ`.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from dmf_watch.core.errors import ConfigError

PROJECT_DIR = Path(__file__).resolve().parents[2]
SEOUL = ZoneInfo("Asia/Seoul")
# The MFDS DMF API, written once: the loader's default, the dlt source's and the simulator's
# paths are built from these (docs/operations.md's configuration table states the default; a test checks it).
MFDS_SERVICE_PATH = "/1471000/MdcDmfInfoService01"
MFDS_OPERATION_PATH = "/getMdcDmfList01"
DEFAULT_API_BASE_URL = "https://apis.data.go.kr" + MFDS_SERVICE_PATH
DEFAULT_LOCK_WAIT_S = 300.0
# A live load dated by the clock more than this many days after the latest load is more likely a
# wrong clock than a warehouse left alone that long: it then needs an explicit --as-of.
DEFAULT_MAX_LOAD_GAP_DAYS = 7
# A run still going after an hour is stuck (a morning takes about a minute, the AI step
# included); it stops as on SIGTERM, releasing the warehouse for the next one.
DEFAULT_RUN_DEADLINE_S = 3600.0
# The fetch's wall-clock bounds: a page (every byte: a read timeout restarts on each one) and the
# whole list (a full load is about 19 pages and a minute).
DEFAULT_PAGE_DEADLINE_S = 120.0
DEFAULT_LOAD_DEADLINE_S = 1800.0
# How long a build's statement on PostgreSQL waits for a table lock another session holds (a BI
# tool idle in a transaction that read a mart) before the build stops and names that session.
DEFAULT_PG_LOCK_TIMEOUT_S = 60.0
# The registry has no DMF before the system began; an earlier date is a typo, not a replay.
EARLIEST_AS_OF = date(2000, 1, 1)


@dataclass(frozen=True)
class Settings:
    project_dir: Path
    duckdb_path: Path
    reports_dir: Path
    state_dir: Path
    api_base_url: str
    agy_binary: str | None
    # Hosts (names, addresses or CIDR ranges) on private networks the loader may use on purpose.
    api_allowed_hosts: tuple[str, ...] = field(default=())
    # How long a run waits for another one holding the warehouse before giving up.
    lock_wait_s: float = DEFAULT_LOCK_WAIT_S
    # How many days after the latest load a live load dated by the clock alone may be.
    max_load_gap_days: int = DEFAULT_MAX_LOAD_GAP_DAYS
    # How long a command that holds the warehouse may run before it stops itself (0: no limit).
    run_deadline_s: float = DEFAULT_RUN_DEADLINE_S
    # Where the copies of the raw layer go after each accepted morning, and how many are kept.
    backup_dir: Path = Path("state/backups")
    backup_keep: int = 7
    # Wall-clock bounds of the fetch: one page (every byte of it), and the whole list.
    page_deadline_s: float = DEFAULT_PAGE_DEADLINE_S
    load_deadline_s: float = DEFAULT_LOAD_DEADLINE_S
    # The engine (`duckdb`: the file at duckdb_path; `postgres`: the server the libpq variables
    # name) and a prefix for every schema, so developers can share one server.
    warehouse: str = "duckdb"
    schema_prefix: str = ""
    # On PostgreSQL: how long the build's DDL waits for a lock another session holds.
    pg_lock_timeout_s: float = DEFAULT_PG_LOCK_TIMEOUT_S

    def with_paths(self, *, duckdb_path: Path, reports_dir: Path, state_dir: Path) -> Settings:
        """Another warehouse, reports and state; the backups move with the state unless set apart."""
        backups = state_dir / "backups" if self.backup_dir == self.state_dir / "backups" else self.backup_dir
        return dataclasses.replace(
            self, duckdb_path=duckdb_path, reports_dir=reports_dir, state_dir=state_dir, backup_dir=backups
        )


def _path(env: Mapping[str, str], name: str, default: str) -> Path:
    """A path the user set is taken from where they stand; the default lives in the project."""
    if env.get(name):
        return Path(env[name]).expanduser().resolve()
    return PROJECT_DIR / default


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    state_dir = _path(env, "DMF_STATE_DIR", "state")
    return Settings(
        project_dir=PROJECT_DIR,
        duckdb_path=_path(env, "DMF_DUCKDB_PATH", "data/dmf.duckdb"),
        reports_dir=_path(env, "DMF_REPORTS_DIR", "reports/out"),
        state_dir=state_dir,
        api_base_url=(env.get("MFDS_API_BASE_URL") or DEFAULT_API_BASE_URL).rstrip("/"),
        agy_binary=env.get("DMF_AGY_BINARY") or None,
        api_allowed_hosts=tuple(
            host.strip().lower() for host in env.get("MFDS_API_ALLOWED_HOSTS", "").split(",") if host.strip()
        ),
        lock_wait_s=_seconds(env, "DMF_LOCK_WAIT_S", DEFAULT_LOCK_WAIT_S),
        max_load_gap_days=_days(env, "DMF_MAX_LOAD_GAP_DAYS", DEFAULT_MAX_LOAD_GAP_DAYS),
        run_deadline_s=_seconds(env, "DMF_RUN_DEADLINE_S", DEFAULT_RUN_DEADLINE_S),
        page_deadline_s=_positive_seconds(env, "DMF_PAGE_DEADLINE_S", DEFAULT_PAGE_DEADLINE_S),
        load_deadline_s=_positive_seconds(env, "DMF_LOAD_DEADLINE_S", DEFAULT_LOAD_DEADLINE_S),
        backup_dir=Path(env["DMF_BACKUP_DIR"]).expanduser().resolve()
        if env.get("DMF_BACKUP_DIR")
        else state_dir / "backups",
        backup_keep=_days(env, "DMF_BACKUP_KEEP", 7),
        warehouse=_warehouse(env),
        schema_prefix=_schema_prefix(env),
        pg_lock_timeout_s=_positive_seconds(env, "DMF_PG_LOCK_TIMEOUT_S", DEFAULT_PG_LOCK_TIMEOUT_S),
    )


def _warehouse(env: Mapping[str, str]) -> str:
    engine = (env.get("DMF_WAREHOUSE") or "duckdb").strip().lower()
    if engine not in ("duckdb", "postgres"):
        raise ConfigError(f"DMF_WAREHOUSE must be duckdb or postgres, not {env.get('DMF_WAREHOUSE')!r}.")
    return engine


def _schema_prefix(env: Mapping[str, str]) -> str:
    prefix = (env.get("DMF_SCHEMA_PREFIX") or "").strip()
    if prefix and not re.fullmatch(r"[a-z][a-z0-9_]{0,30}", prefix):
        raise ConfigError(
            f"DMF_SCHEMA_PREFIX must be lower-case letters, digits and _ (starting with a letter, "
            f"at most 31), not {prefix!r}."
        )
    return prefix


def _positive_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    value = _seconds(env, name, default)
    if value <= 0:
        raise ConfigError(f"{name} must be a number of seconds above 0, not {env.get(name)!r}.")
    return value


def _days(env: Mapping[str, str], name: str, default: int) -> int:
    """A whole number of 1 or more (days, or copies)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{name} must be a whole number (1 or more), not {raw!r}.")
    return int(raw)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ConfigError(f"{name} must be a number of seconds (0 or more), not {raw!r}.")
    return value


def check_as_of(as_of: date, *, future_allowed: bool = False, live_load: bool = False, option: str = "--as-of") -> None:
    """A logical date outside 2000-01-01..today (Seoul) is a typo: refused before anything runs.
    `future_allowed`: for withdrawing a day a wrong clock stored (`dmf reject-load`). `live_load`:
    the command loads today's list, so the refusal says why a load cannot be of a later day; a
    command that reads the warehouse says that no later day is in it."""
    today = today_in_seoul()
    if as_of < EARLIEST_AS_OF:
        raise ConfigError(
            f"{option} {as_of.isoformat()} is before {EARLIEST_AS_OF.isoformat()}; "
            "the MFDS DMF list has no data that old (use YYYY-MM-DD)."
        )
    if as_of > today and not future_allowed:
        why = (
            "the live API serves only today's list, so a load can only be of today or a past day."
            if live_load
            else "no load is of a later day, so there is nothing to show for it."
        )
        raise ConfigError(f"{option} {as_of.isoformat()} is after today in Seoul ({today.isoformat()}); {why}")


def check_directory(name: str, path: Path) -> None:
    """The directory `path` (setting `name`) exists or can be created, and a file can be written
    in it; otherwise one sentence naming the setting and the path. Tried for real (not
    os.access), so read-only mounts and root's bypassed permissions are judged correctly."""
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"{name} points at {path}, which is a file, not a directory; "
            "point it at a directory (or move the file away)."
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"{name}: the directory {path} cannot be created ({error.strerror or error}); "
            "create it or point the setting elsewhere."
        ) from None
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".dmf-write-check-"):
            pass
    except OSError as error:
        raise ConfigError(
            f"{name}: the directory {path} is not writable ({error.strerror or error}); "
            "fix its permissions or point the setting elsewhere."
        ) from None


def check_paths(settings: Settings, *, warehouse: bool = True, reports: bool = True) -> None:
    """Every directory a command writes to, checked before it starts (state first: logs go there)."""
    check_directory("DMF_STATE_DIR", settings.state_dir)
    if warehouse:
        if settings.duckdb_path.is_dir():
            raise ConfigError(
                f"DMF_DUCKDB_PATH points at {settings.duckdb_path}, which is a directory; "
                "point it at a DuckDB file (e.g. data/dmf.duckdb)."
            )
        check_directory("DMF_DUCKDB_PATH (its directory)", settings.duckdb_path.parent)
    if reports:
        check_directory("DMF_REPORTS_DIR", settings.reports_dir)


def today_in_seoul() -> date:
    """The logical date of a load when none is given: MFDS publishes on Korean days."""
    return datetime.now(SEOUL).date()
