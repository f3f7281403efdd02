"""Every constant has one home: the API base URL, the AI defaults and the demo seed are defined
once and imported; a copy elsewhere is a second truth that drifts (the AI defaults once did)."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from dmf_watch.core.config import DEFAULT_API_BASE_URL, MFDS_SERVICE_PATH
from dmf_watch.core.warehouse import DEFAULT_CONNECT_TIMEOUT_S
from dmf_watch.enrich.ai_config import CONFIG_FILE, AiConfig, load_ai_config
from dmf_watch.simulator.registry import DEFAULT_SEED

PROJECT_DIR = Path(__file__).resolve().parents[2]
SOURCE_DIRS = (
    "dmf_watch",
    "benchmarks",
    "tests",
    "models",
    "macros",
    "seeds",
    ".dlt",
)
TEXT_SUFFIXES = {".py", ".toml", ".yml", ".yaml", ".sql", ".csv", ".md", ".example"}


def _files_containing(pattern: str, *, tests: bool = True) -> set[str]:
    """Repository files (relative paths) whose text matches `pattern`, README and docs included; with
    tests=False, test files are left out (a test may state the value it expects)."""
    found = set()
    paths = [PROJECT_DIR / "README.md", PROJECT_DIR / "pyproject.toml", PROJECT_DIR / "dbt_project.yml"]
    paths += sorted((PROJECT_DIR / "docs").glob("*.md"))
    for folder in SOURCE_DIRS if tests else [d for d in SOURCE_DIRS if d != "tests"]:
        paths += [p for p in (PROJECT_DIR / folder).rglob("*") if p.suffix in TEXT_SUFFIXES]
    for path in paths:
        if path.is_file() and re.search(pattern, path.read_text(encoding="utf-8", errors="replace")):
            found.add(path.relative_to(PROJECT_DIR).as_posix())
    return found


def test_the_api_base_url_is_defined_once_and_the_readme_states_that_value():
    assert _files_containing(re.escape(MFDS_SERVICE_PATH), tests=False) == {
        "dmf_watch/core/config.py",
        "docs/operations.md",
    }
    readme_row = next(
        line
        for line in (PROJECT_DIR / "docs" / "operations.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `MFDS_API_BASE_URL` |")
    )
    assert f"`{DEFAULT_API_BASE_URL}`" in readme_row


def test_the_profile_falls_back_to_the_warehouse_connect_timeout():
    """A plain `dbt build` (no `dmf` to set PGCONNECT_TIMEOUT) waits as long as every `dmf` connection."""
    profile = (PROJECT_DIR / "profiles.yml").read_text(encoding="utf-8")
    assert f"env_var('PGCONNECT_TIMEOUT', '{DEFAULT_CONNECT_TIMEOUT_S}')" in profile


def test_the_demo_seed_is_defined_once():
    assert _files_containing(rf"\b{DEFAULT_SEED}\b(?!T)") == {"dmf_watch/simulator/registry.py"}


def test_the_committed_ai_config_only_overrides_the_defaults_it_names():
    """Every key of dmf_watch/enrich/agy.toml is an AiConfig knob of the right type that differs from the
    default (a typo or a wrong type would be ignored silently, a repeated default is a copy);
    loading gives the defaults with exactly those overrides."""
    section = tomllib.loads(CONFIG_FILE.read_text(encoding="utf-8"))["enrich"]
    defaults = AiConfig()
    knobs = {f.name for f in dataclasses.fields(AiConfig)} - {"disabled_by_env", "source"}
    assert set(section) <= knobs
    overrides = {}
    for name, value in section.items():
        default = getattr(defaults, name)
        if name == "error_patterns":
            value = {**default, **{kind: tuple(patterns) for kind, patterns in value.items()}}
        else:
            assert type(value) is type(default) or (type(default) is float and type(value) is int), name
        assert value != default, f"dmf_watch/enrich/agy.toml repeats the default of {name}"
        overrides[name] = value
    loaded = load_ai_config(env={})
    assert loaded == dataclasses.replace(defaults, **overrides, source=str(CONFIG_FILE))
