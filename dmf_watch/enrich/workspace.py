"""The batch workspace agy runs in, and the permission block that denies it every tool:
registry text in a prompt may carry instructions, and an agent with no tools cannot act on them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from dmf_watch.core.config import Settings
from dmf_watch.enrich.ai_config import AiConfig

TEMPLATES = Path(__file__).resolve().parent / "workspace"
ROOT_AGENTS = Path(__file__).resolve().parents[2] / "AGENTS.md"
WORKSPACE_NAME = "agy_workspace"
MCP_RELATIVE = Path(".agents") / "mcp_config.json"
EXPECTED_FILES = frozenset({"AGENTS.md", MCP_RELATIVE.as_posix()})
REQUIRED_DENIES = ("command(*)", "unsandboxed(*)", "read_url(*)", "execute_url(*)", "mcp(*)")
CREDENTIAL_DENIES = ("read_file(*/.gemini/*)", "read_file(*/antigravity-oauth-token)")


def workspace_dir(settings: Settings) -> Path:
    return Path(settings.state_dir) / WORKSPACE_NAME


def global_mcp_config() -> Path:
    return Path.home() / ".gemini" / "config" / "mcp_config.json"


def agy_settings_path(cfg: AiConfig) -> Path:
    if cfg.agy_settings_path:
        return Path(cfg.agy_settings_path).expanduser()
    return Path.home() / ".gemini" / "antigravity-cli" / "settings.json"


def _load_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def mcp_config(global_config: Path | None = None) -> dict[str, Any]:
    """No server at all, plus each globally registered server repeated as disabled."""
    base = _load_json(TEMPLATES / MCP_RELATIVE) or {"mcpServers": {}}
    servers: dict[str, Any] = dict(base.get("mcpServers") or {})
    known = _load_json(global_config or global_mcp_config()) or {}
    for name in sorted((known.get("mcpServers") or {}) if isinstance(known.get("mcpServers"), dict) else {}):
        servers[str(name)] = {"command": "true", "args": [], "disabled": True}
    return {"mcpServers": servers}


def prepare_workspace(settings: Settings) -> tuple[Path, str | None]:
    """Create or refresh the workspace; returns (path, problem or None). Never raises."""
    path = workspace_dir(settings)
    try:
        (path / MCP_RELATIVE).parent.mkdir(parents=True, exist_ok=True)
        agents = ROOT_AGENTS.read_text(encoding="utf-8")
        target = path / "AGENTS.md"
        if not target.is_file() or target.read_text(encoding="utf-8") != agents:
            target.write_text(agents, encoding="utf-8")
        wanted = json.dumps(mcp_config(), ensure_ascii=False, indent=2) + "\n"
        mcp = path / MCP_RELATIVE
        if not mcp.is_file() or mcp.read_text(encoding="utf-8") != wanted:
            mcp.write_text(wanted, encoding="utf-8")
    except OSError as exc:
        return path, f"the agy workspace could not be prepared: {exc}"
    return path, None


def check_workspace(settings: Settings) -> tuple[bool, str]:
    path = workspace_dir(settings)
    if not path.is_dir():
        return False, f"{path} does not exist yet; the next `dmf enrich` creates it."
    problems: list[str] = []
    try:
        if (path / "AGENTS.md").read_text(encoding="utf-8") != ROOT_AGENTS.read_text(encoding="utf-8"):
            problems.append("AGENTS.md differs from the repository copy")
    except OSError:
        problems.append("AGENTS.md is missing")
    config = _load_json(path / MCP_RELATIVE)
    if config is None:
        problems.append(".agents/mcp_config.json is missing or unreadable")
    else:
        servers = config.get("mcpServers") if isinstance(config.get("mcpServers"), dict) else None
        if servers is None:
            problems.append(".agents/mcp_config.json has no mcpServers object")
        else:
            live = [n for n, s in servers.items() if not (isinstance(s, dict) and s.get("disabled") is True)]
            if live:
                problems.append("MCP servers not disabled: " + ", ".join(sorted(live)))
            glob = (_load_json(global_mcp_config()) or {}).get("mcpServers") or {}
            missing = [n for n in glob if n not in servers] if isinstance(glob, dict) else []
            if missing:
                problems.append("global MCP servers not switched off here: " + ", ".join(sorted(missing)))
    extra = sorted(
        p.relative_to(path).as_posix()
        for p in path.rglob("*")
        if p.is_file() and p.relative_to(path).as_posix() not in EXPECTED_FILES
    )
    if extra:
        problems.append("unexpected files: " + ", ".join(extra[:5]))
    if problems:
        return False, "; ".join(problems) + ". The next `dmf enrich` rewrites the workspace."
    return True, f"{path} holds only AGENTS.md and an MCP config with every server disabled."


def agy_path_form(path: Path | str) -> str:
    """A path as agy's permission rules match it: no drive letter, forward slashes, no leading /."""
    text = str(path).replace("\\", "/")
    text = re.sub(r"^[A-Za-z]:", "", text)
    return text.strip("/")


def permission_block(settings: Settings) -> dict[str, Any]:
    raw = (TEMPLATES / "agy_permissions.json").read_text(encoding="utf-8")
    values = {
        "HOME": agy_path_form(Path.home()),
        "PROJECT": agy_path_form(settings.project_dir),
        "STATE": agy_path_form(settings.state_dir),
    }
    for name, value in values.items():
        raw = raw.replace("{{" + name + "}}", value)
    return json.loads(raw)


def install_permission_block(settings: Settings, cfg: AiConfig, path: Path | None = None) -> tuple[bool, str]:
    """Add our deny rules to agy's user settings, keeping everything else. Never raises."""
    target = path or agy_settings_path(cfg)
    try:
        current = _load_json(target) if target.exists() else {}
        if current is None:
            return False, f"{target} is not valid JSON; fix or remove it, then try again."
        block = permission_block(settings)["permissions"]
        perms = current.setdefault("permissions", {})
        if not isinstance(perms, dict):
            return False, f"{target} has a 'permissions' value that is not an object; fix it by hand."
        deny = [r for r in perms.get("deny") or [] if isinstance(r, str)]
        for rule in block["deny"]:
            if rule not in deny:
                deny.append(rule)
        perms["deny"] = deny
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(current, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        return False, f"could not write {target}: {exc}"
    return True, f"deny rules merged into {target}"


def check_permissions(path: Path) -> tuple[bool, str]:
    """Are the deny rules that make agy tool-less still in agy's settings?"""
    data = _load_json(path) if path.exists() else None
    if not path.exists():
        return (
            False,
            f"{path} does not exist; install the deny block (dmf_watch/enrich/workspace/agy_permissions.json).",
        )
    if data is None:
        return False, f"{path} cannot be read as JSON; repair it and install the deny block again."
    perms = data.get("permissions") if isinstance(data.get("permissions"), dict) else {}
    deny = set(r for r in perms.get("deny") or [] if isinstance(r, str))
    missing = [r for r in REQUIRED_DENIES + CREDENTIAL_DENIES if r not in deny]
    if missing:
        return False, "agy settings lack deny rules " + ", ".join(missing) + "; install the deny block again."
    allow = [r for r in perms.get("allow") or [] if isinstance(r, str)]
    if allow:
        return False, "agy settings allow tools (" + ", ".join(allow[:3]) + "); empty the allow list."
    return True, "every tool is denied to agy (command, url, mcp, credential files)."
