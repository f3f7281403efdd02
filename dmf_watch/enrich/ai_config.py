"""AI-layer settings: the defaults below, the committed `dmf_watch/enrich/agy.toml`, a local override, and
the kill switch.

Every knob and its default lives here, once (`AiConfig`); `dmf_watch/enrich/agy.toml` and
`<state_dir>/agy.toml` only override (the committed file repeats no default, a test checks it).
Kept apart from `dmf_watch.core.config.Settings` because these knobs only matter to `dmf_watch/enrich/` and
because a broken or missing file must never stop the pipeline: loading never raises, it falls
back to these defaults.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from dmf_watch.core.config import Settings

CONFIG_FILE = Path(__file__).resolve().parent / "agy.toml"
LOCAL_OVERRIDE_NAME = "agy.toml"
DISABLE_VARIABLE = "DMF_AI_DISABLED"

DEFAULT_ERROR_PATTERNS: dict[str, tuple[str, ...]] = {
    "quota": (
        r"\bquota\b",
        r"\bcredits?\b",
        r"\bexceed",
        r"rate[ -]?limit",
        r"resource[_ -]?exhausted",
        r"\b429\b",
        r"insufficient",
    ),
    "auth": (
        r"\bauth\w*",
        r"unauthenticated",
        r"unauthorized",
        r"sign[ -]?in",
        r"log[ -]?in",
        r"credential",
        r"keyring",
        r"\b401\b",
        r"\b403\b",
    ),
    "not_found": (r"invalid model selection", r"not recognized as a known model", r"unknown model"),
    "timeout": (r"\btimed? ?out\b", r"deadline exceeded"),
}


@dataclass(frozen=True)
class AiConfig:
    """Each knob of the AI layer with its default; an `[enrich]` key of the same name overrides it."""

    enabled: bool = True  # false: every run is SKIPPED with skip_reason 'disabled'
    binary: str = ""  # empty: search the usual install places, then PATH; DMF_AGY_BINARY wins
    model: str = "gemini-3.7-flash-medium"  # daily briefing; `dmf doctor` checks it against `agy models`
    effort: str = "medium"  # raised one step (retry_effort) for the stricter retry
    retry_effort: str = "high"
    print_timeout: str = "10m"  # passed as --print-timeout; the process is killed after it + grace
    hard_kill_grace_seconds: float = 60.0
    max_json_retries: int = 1  # one stricter retry after a schema failure, never more
    retry_backoff_seconds: float = 30.0  # pause before retrying an unclassified agy error
    daily_token_cap: int = 300_000  # checked before each call against today's recorded usage
    daily_call_cap: int = 4  # agy launches per day (Asia/Seoul), retries included
    max_prompt_chars: int = 120_000  # absolute prompt size cap (prompt_guard above it)
    cmdline_safe_chars: int = 30_000  # up to this: -p argument; above: stdin stream-json
    max_events_in_prompt: int = 60
    cache_ttl_seconds: int = 86_400  # result cache in <state_dir>/agy_cache
    use_json_schema_flag: bool = True  # --json-schema is a helper only; we validate ourselves
    circuit_failure_threshold: int = 3  # consecutive failures before the breaker opens
    circuit_open_hours: float = 24.0  # quota opens it at once
    weekly_enabled: bool = False  # weekly commentary: off until daily runs are stable
    weekly_model: str = "gemini-3.1-pro-high"
    weekly_effort: str = "high"
    anomaly_model: str = "gemini-3.7-flash-medium"
    drift_enabled: bool = True  # API schema-drift diagnosis on a drift rejection
    drift_model: str = "gemini-3.1-pro-high"
    agy_settings_path: str = ""  # empty: ~/.gemini/antigravity-cli/settings.json
    # Error classification (regex, case-insensitive); `[enrich.error_patterns]` replaces a kind.
    # The quota and auth strings of agy are not documented: adjust after observing real failures.
    error_patterns: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_ERROR_PATTERNS))
    disabled_by_env: bool = False
    source: str = "defaults"

    def for_purpose(self, model: str, effort: str) -> AiConfig:
        """The same settings with another model/effort (weekly, anomaly, drift calls)."""
        return replace(self, model=model or self.model, effort=effort or self.effort)


def _read_section(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, ValueError):
        return None
    section = data.get("enrich")
    return section if isinstance(section, dict) else None


def _coerce(name: str, value: Any, default: Any) -> Any:
    """Take a TOML value only when it has the type the default has; otherwise keep the default."""
    if isinstance(default, bool):
        return value if isinstance(value, bool) else default
    if isinstance(default, int):
        return value if isinstance(value, int) and not isinstance(value, bool) else default
    if isinstance(default, float):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return default
    if isinstance(default, str):
        return value if isinstance(value, str) else default
    return default


def _merge(base: AiConfig, section: Mapping[str, Any], source: str) -> AiConfig:
    changes: dict[str, Any] = {}
    for f in fields(AiConfig):
        if f.name in ("error_patterns", "disabled_by_env", "source") or f.name not in section:
            continue
        changes[f.name] = _coerce(f.name, section[f.name], getattr(base, f.name))
    patterns = dict(base.error_patterns)
    raw_patterns = section.get("error_patterns")
    if isinstance(raw_patterns, dict):
        for kind, pats in raw_patterns.items():
            if isinstance(pats, list) and all(isinstance(p, str) for p in pats):
                patterns[str(kind).lower()] = tuple(pats)
    changes["error_patterns"] = patterns
    changes["source"] = source
    return replace(base, **changes)


def load_ai_config(settings: Settings | None = None, env: Mapping[str, str] | None = None) -> AiConfig:
    """Read the committed file, then `<state_dir>/agy.toml`, then the environment. Never raises."""
    env = os.environ if env is None else env
    cfg = AiConfig()
    section = _read_section(CONFIG_FILE)
    if section is not None:
        cfg = _merge(cfg, section, str(CONFIG_FILE))
    if settings is not None:
        local = Path(settings.state_dir) / LOCAL_OVERRIDE_NAME
        if local.is_file():
            section = _read_section(local)
            if section is not None:
                cfg = _merge(cfg, section, cfg.source + " + " + str(local))
        if settings.agy_binary:
            cfg = replace(cfg, binary=settings.agy_binary)
    flag = str(env.get(DISABLE_VARIABLE, "")).strip().lower()
    if flag in ("1", "true", "yes", "on"):
        cfg = replace(cfg, enabled=False, disabled_by_env=True)
    return cfg
