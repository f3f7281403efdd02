"""Where things live, read once from the environment (SPEC §10).

Every step takes a `Settings` instead of reading the environment itself, so tests and the
demo can point a whole run at a temporary warehouse without touching `os.environ`.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

PROJECT_DIR = Path(__file__).resolve().parents[1]
SEOUL = ZoneInfo("Asia/Seoul")
DEFAULT_API_BASE_URL = "https://apis.data.go.kr/1471000/MdcDmfInfoService01"


@dataclass(frozen=True)
class Settings:
    project_dir: Path
    duckdb_path: Path
    reports_dir: Path
    state_dir: Path
    api_base_url: str
    agy_binary: str | None

    def with_paths(self, *, duckdb_path: Path, reports_dir: Path, state_dir: Path) -> "Settings":
        return Settings(
            project_dir=self.project_dir,
            duckdb_path=duckdb_path,
            reports_dir=reports_dir,
            state_dir=state_dir,
            api_base_url=self.api_base_url,
            agy_binary=self.agy_binary,
        )


def _path(env: Mapping[str, str], name: str, default: str) -> Path:
    """A path the user set is taken from where they stand; the default lives in the project."""
    if env.get(name):
        return Path(env[name]).expanduser().resolve()
    return PROJECT_DIR / default


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    return Settings(
        project_dir=PROJECT_DIR,
        duckdb_path=_path(env, "DMF_DUCKDB_PATH", "data/dmf.duckdb"),
        reports_dir=_path(env, "DMF_REPORTS_DIR", "reports/out"),
        state_dir=_path(env, "DMF_STATE_DIR", "state"),
        api_base_url=(env.get("MFDS_API_BASE_URL") or DEFAULT_API_BASE_URL).rstrip("/"),
        agy_binary=env.get("DMF_AGY_BINARY") or None,
    )


def today_in_seoul() -> date:
    """The logical date of a load when none is given: MFDS publishes on Korean days."""
    return datetime.now(SEOUL).date()
