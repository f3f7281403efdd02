"""`dmf doctor` for the AI layer: is agy usable, and is it still tool-less? Each check is a
value; nothing raises and nothing is changed, except by `fix_circuit` (`dmf doctor --fix`),
which a person asks for."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from dmf_watch.core.config import Settings
from dmf_watch.enrich.ai_config import load_ai_config
from dmf_watch.enrich.budget import CLOSED, CircuitBreaker, TokenBudget
from dmf_watch.enrich.client import ErrorKind, child_env, resolve_binary
from dmf_watch.enrich.render import PROMPTS_DIR, SCHEMAS_DIR, TOKEN
from dmf_watch.enrich.workspace import ROOT_AGENTS, agy_settings_path, check_permissions, check_workspace

PROMPT_FILES = ("uc1_daily_briefing.md", "uc3_anomaly_only.md", "uc5_weekly_commentary.md", "uc2b_api_drift.md")
SCHEMA_FILES = (
    "uc1_briefing.schema.json",
    "uc3_anomaly.schema.json",
    "uc4_alias.schema.json",
    "uc5_weekly.schema.json",
    "uc2b_api_drift.schema.json",
)
#: How the binary check begins when agy is absent: `dmf doctor` then rates the permission checks
#: as warnings (nothing can run with the missing deny block).
AGY_NOT_FOUND = "agy was not found"


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    message: str


def _models(binary: Path) -> tuple[list[str] | None, str]:
    try:
        proc = subprocess.run(
            [str(binary), "models"], capture_output=True, timeout=60, env=child_env(), stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`agy models` could not run ({type(exc).__name__})"
    text = proc.stdout.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        return None, f"`agy models` exited with {proc.returncode}; sign in with `agy` and retry"
    names = [line.strip().split()[0] for line in text.splitlines() if line.strip()]
    return names, ""


def _assets() -> Check:
    problems: list[str] = []
    for name in PROMPT_FILES:
        path = PROMPTS_DIR / name
        try:
            raw = path.read_bytes()
        except OSError:
            problems.append(f"{name} missing")
            continue
        if raw.startswith(b"\xef\xbb\xbf") or b"\r\n" in raw:
            problems.append(f"{name} has a BOM or CRLF line ends")
        if "NONCE" not in {m.group(1) for m in TOKEN.finditer(raw.decode("utf-8", errors="replace"))}:
            problems.append(f"{name} does not fence its data with {{{{NONCE}}}}")
    for name in SCHEMA_FILES:
        try:
            jsonschema.Draft202012Validator.check_schema(json.loads((SCHEMAS_DIR / name).read_text(encoding="utf-8")))
        except (OSError, ValueError, jsonschema.SchemaError) as exc:
            problems.append(f"{name}: {type(exc).__name__}")
    if problems:
        return Check("ai_prompt_assets", False, "; ".join(problems) + ". Restore the files from the repository.")
    return Check("ai_prompt_assets", True, f"{len(PROMPT_FILES)} prompts and {len(SCHEMA_FILES)} schemas are in order.")


def run_doctor(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    try:
        cfg = load_ai_config(settings)
        state = "on" if cfg.enabled else ("off (DMF_AI_DISABLED)" if cfg.disabled_by_env else "off (config)")
        checks.append(
            Check(
                "ai_config",
                True,
                f"AI layer {state}; model {cfg.model}, effort {cfg.effort}; settings from {cfg.source}.",
            )
        )
        binary = resolve_binary(cfg.binary)
        if binary is None:
            checks.append(
                Check(
                    "agy_binary",
                    not cfg.enabled,
                    f"{AGY_NOT_FOUND} (set DMF_AGY_BINARY or install agy); "
                    "reports are still produced, without AI text.",
                )
            )
            checks.append(Check("agy_model", False, "cannot check the model without the agy binary."))
        else:
            checks.append(Check("agy_binary", True, f"agy found at {binary}."))
            names, problem = _models(binary)
            if names is None:
                checks.append(Check("agy_model", False, problem + "."))
            else:
                wanted = {cfg.model, cfg.weekly_model if cfg.weekly_enabled else cfg.model}
                missing = sorted(m for m in wanted if m not in names)
                checks.append(
                    Check(
                        "agy_model",
                        not missing,
                        "configured models are available."
                        if not missing
                        else "agy does not list "
                        + ", ".join(missing)
                        + "; pick one from `agy models` in dmf_watch/enrich/agy.toml.",
                    )
                )
        ok, message = check_permissions(agy_settings_path(cfg))
        checks.append(Check("agy_permissions", ok, message))
        ok, message = check_workspace(settings)
        checks.append(Check("agy_workspace", ok, message))
        checks.append(
            Check(
                "agents_md",
                ROOT_AGENTS.is_file(),
                "AGENTS.md is at the repository root."
                if ROOT_AGENTS.is_file()
                else "AGENTS.md is missing from the repository root; restore it.",
            )
        )
        checks.append(_assets())
        circuit = CircuitBreaker(
            settings.state_dir / "agy_circuit.json", cfg.circuit_failure_threshold, cfg.circuit_open_hours
        )
        st = circuit.read()
        allowed, why = circuit.peek()
        checks.append(
            Check(
                "agy_circuit",
                st.state == "CLOSED" or allowed,
                "circuit closed."
                if st.state == "CLOSED"
                else f"circuit {st.state} after {st.last_error_kind}: {why or 'a trial call is allowed next'}.",
            )
        )
        budget = TokenBudget(settings.state_dir / "agy_budget.json", cfg.daily_token_cap, cfg.daily_call_cap)
        b = budget.state()
        allowed, reason, detail = budget.check()
        checks.append(
            Check(
                "agy_budget",
                allowed,
                f"today {b['calls']}/{cfg.daily_call_cap} calls, {b['tokens']:,}/{cfg.daily_token_cap:,} tokens."
                + ("" if allowed else f" {reason}: no more calls today."),
            )
        )
    except Exception as exc:  # doctor must always answer
        checks.append(Check("ai_doctor", False, f"the AI checks stopped early ({type(exc).__name__})."))
    return checks


def _circuit(settings: Settings) -> CircuitBreaker:
    cfg = load_ai_config(settings)
    return CircuitBreaker(
        settings.state_dir / "agy_circuit.json", cfg.circuit_failure_threshold, cfg.circuit_open_hours
    )


def fix_circuit(settings: Settings) -> str:
    """`dmf doctor --fix`: closes a circuit that a missing agy opened, once agy is found and runs.

    Why: a missing binary opens the circuit for `circuit_open_hours` (24 h); a person who has
    since installed agy should not wait a day for the AI text. Only a circuit opened by a
    launch failure is reset, and only after `agy models` answers: one opened by quota, auth or
    timeouts is about the service, not the installation, and closes by its own cool-down.
    Returns what it did, one line; never raises.
    """
    try:
        circuit = _circuit(settings)
        state = circuit.read()
        if state.state == CLOSED:
            return "AI circuit closed; nothing to reset."
        if state.last_error_kind != ErrorKind.LAUNCH_FAILED.value:
            return (
                f"AI circuit {state.state} after {state.last_error_kind or 'failures'}: left as is "
                "(not a missing agy; it lets a trial call through after its cool-down)."
            )
        binary = resolve_binary(load_ai_config(settings).binary)
        if binary is None:
            return f"AI circuit {state.state} after launch_failed: left as is, {AGY_NOT_FOUND} yet."
        names, problem = _models(binary)
        if names is None:
            return (
                f"AI circuit {state.state} after launch_failed: left as is, agy at {binary} does not run ({problem})."
            )
        circuit.reset()
        return f"AI circuit reset (was {state.state} after launch_failed): agy at {binary} now runs."
    except Exception as exc:  # doctor always answers
        return f"AI circuit not checked ({type(exc).__name__})."
