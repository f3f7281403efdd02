"""Running `agy` headless, one turn, and turning every outcome into a value.

The client knows nothing about the warehouse: usage rows go to an `on_usage` callback and the
caller stores them. It never raises. Success needs three things at once: exit code 0, envelope
`status == "SUCCESS"`, and an answer that passes our own schema validation.

Fixed flags: `--output-format json`, `--print-timeout`, `--disable-slash-commands`,
`--log-file`, `--model`/`--effort` from config, `--json-schema` as a helper only. Never
`--dangerously-skip-permissions`, `--continue`, `--add-dir`, or any mode that edits files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from dmf_watch.enrich import sanitize
from dmf_watch.enrich.ai_config import AiConfig
from dmf_watch.enrich.budget import CircuitBreaker, ResultCache, TokenBudget
from dmf_watch.enrich.extract import Extraction, best_object, extract_and_validate, validate
from dmf_watch.enrich.guard import check_prompt
from dmf_watch.enrich.render import RenderedPrompt, sha256_text

_CREATE_NO_WINDOW = 0x08000000
FORBIDDEN_FLAGS = frozenset({"--dangerously-skip-permissions", "--continue", "--conversation", "--add-dir", "--mode"})
#: Environment variables never handed to agy (the MFDS key and anything that looks secret).
_SECRET_VARIABLE = re.compile(r"SERVICE_KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|_TOKEN$", re.IGNORECASE)


class ErrorKind(str, Enum):
    """What happened to a call. The values double as `skip_reason` where one is mapped below."""

    NONE = "none"
    DISABLED = "disabled"
    NO_CHANGES = "no_changes"
    LAUNCH_FAILED = "launch_failed"
    AUTH = "auth"
    QUOTA = "quota"
    NOT_FOUND = "not_found"
    TIMEOUT = "timeout"
    SCHEMA_INVALID = "schema_invalid"
    INVALID_OUTPUT = "invalid_output"
    AGY_ERROR = "agy_error"
    TOKEN_CAP = "token_cap"
    CALL_CAP = "call_cap"
    PROMPT_GUARD = "prompt_guard"
    CIRCUIT_OPEN = "circuit_open"


SKIP_REASON: dict[ErrorKind, str] = {
    ErrorKind.LAUNCH_FAILED: "binary_missing",
    ErrorKind.NOT_FOUND: "model_not_found",
    ErrorKind.NO_CHANGES: "diff_empty",
}

#: Failures that count toward opening the circuit (budget, guard and switches do not).
COUNTED_FAILURES = frozenset(
    {
        ErrorKind.LAUNCH_FAILED,
        ErrorKind.AUTH,
        ErrorKind.QUOTA,
        ErrorKind.NOT_FOUND,
        ErrorKind.TIMEOUT,
        ErrorKind.SCHEMA_INVALID,
        ErrorKind.INVALID_OUTPUT,
        ErrorKind.AGY_ERROR,
    }
)
#: Failures a second attempt cannot fix.
NO_RETRY = frozenset({ErrorKind.LAUNCH_FAILED, ErrorKind.AUTH, ErrorKind.QUOTA, ErrorKind.NOT_FOUND, ErrorKind.TIMEOUT})

RETRY_BLOCK = (
    "[재시도 지시 — 직전 응답이 형식 검증을 통과하지 못했습니다]\n"
    "직전 응답의 문제: {reason}\n"
    "이번 응답은 다음을 반드시 지키십시오.\n"
    "- 응답 전체가 JSON 객체 단 하나여야 합니다. 코드 펜스, 앞뒤 설명, 인사말을 붙이지 마십시오.\n"
    "- 첫 글자는 여는 중괄호, 마지막 글자는 닫는 중괄호입니다.\n"
    "- 같은 JSON 을 두 번 이상 출력하지 마십시오.\n"
    "- 스키마에 없는 키(toolAction, toolSummary 포함)를 넣지 마십시오.\n"
    "- enum 으로 정해진 필드에는 목록에 있는 값만 쓰십시오.\n"
)


def skip_reason_for(kind: ErrorKind) -> str:
    return SKIP_REASON.get(kind, kind.value)


# --------------------------------------------------------------------------- binary and flags


def usual_binary_places() -> list[Path]:
    """Where installers put agy, most specific first; PATH is only the last resort."""
    places: list[Path] = []
    local = os.environ.get("LOCALAPPDATA")
    if local:
        places += [Path(local) / "agy" / "bin" / "agy.exe", Path(local) / "Microsoft" / "WinGet" / "Links" / "agy.exe"]
    home = Path.home()
    places += [
        home / ".local" / "bin" / "agy",
        home / ".agy" / "bin" / "agy",
        Path("/usr/local/bin/agy"),
        Path("/opt/homebrew/bin/agy"),
    ]
    return places


def resolve_binary(configured: str = "") -> Path | None:
    """The agy executable, or None. A configured path is taken as is (no fallback search)."""
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_file() else None
    for place in usual_binary_places():
        try:
            if place.is_file():
                return place
        except OSError:
            continue
    found = shutil.which("agy")
    return Path(found) if found else None


def parse_duration(text: str, default: float = 600.0) -> float:
    """'10m', '90s', '1h30m' or '600' -> seconds; anything else -> `default`."""
    value = str(text or "").strip().lower()
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([hms])", value)
    total = sum(float(n) * {"h": 3600.0, "m": 60.0, "s": 1.0}[u] for n, u in parts)
    return total if total > 0 else default


def build_args(
    binary: Path, cfg: AiConfig, transport: str, prompt: str, schema_path: Path | None, log_file: Path
) -> list[str]:
    """The fixed flag set. `-p` carries the prompt for argv; stdin uses stream-json both ways."""
    args = [str(binary)]
    if transport == "argv":
        args += ["-p", prompt, "--output-format", "json"]
    else:
        args += ["--input-format", "stream-json", "--output-format", "stream-json"]
    args += ["--print-timeout", cfg.print_timeout, "--disable-slash-commands", "--log-file", str(log_file)]
    if cfg.model:
        args += ["--model", cfg.model]
    if cfg.effort:
        args += ["--effort", cfg.effort]
    if cfg.use_json_schema_flag and schema_path is not None:
        args += ["--json-schema", str(schema_path.resolve())]
    assert not FORBIDDEN_FLAGS.intersection(args[1:]), "forbidden agy flag"
    return args


def child_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment minus secrets, with agy's auto-update switched off."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not _SECRET_VARIABLE.search(k)}
    env["AGY_CLI_DISABLE_AUTO_UPDATE"] = "true"
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


# --------------------------------------------------------------------------- one process


@dataclass(frozen=True)
class Envelope:
    """agy's JSON envelope plus what we saw of the process."""

    status: str  # SUCCESS, ERROR, ... or our own INVALID/TIMEOUT/LAUNCH_FAILED
    response: str = ""
    error: str | None = None
    exit_code: int = -1
    duration_s: float = 0.0
    turns: int = 0
    usage: Mapping[str, int] = field(default_factory=dict)
    conversation_id: str | None = None
    structured_output: Any = None
    transport: str = "argv"
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    stderr_tail: str = ""

    def usage_int(self, name: str) -> int:
        try:
            return max(0, int(self.usage.get(name, 0)))
        except (TypeError, ValueError, AttributeError):
            return 0

    @property
    def total_tokens(self) -> int:
        total = self.usage_int("total_tokens")
        if total:
            return total
        return sum(self.usage_int(k) for k in ("input_tokens", "output_tokens", "thinking_tokens"))


def _envelope_from_text(text: str, **common: Any) -> Envelope:
    text = (text or "").strip()
    if not text:
        return Envelope(status="INVALID", error="agy wrote nothing on stdout", **common)
    try:
        data = json.loads(text)
    except ValueError:
        data = best_object(text, ("status", "response"))
        if data is None or "status" not in data:
            return Envelope(status="INVALID", response=text[:4000], error="agy stdout is not JSON", **common)
    if not isinstance(data, dict):
        return Envelope(status="INVALID", error="agy stdout is not a JSON object", **common)
    usage_raw = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    usage: dict[str, int] = {}
    for key, value in usage_raw.items():
        try:
            usage[str(key)] = int(value)
        except (TypeError, ValueError):
            continue
    try:
        turns = int(data.get("num_turns") or 0)
    except (TypeError, ValueError):
        turns = 0
    return Envelope(
        status=str(data.get("status") or "INVALID").upper(),
        response=data.get("response") if isinstance(data.get("response"), str) else "",
        error=str(data["error"]) if data.get("error") else None,
        turns=turns,
        usage=usage,
        conversation_id=str(data["conversation_id"]) if data.get("conversation_id") else None,
        structured_output=data.get("structured_output"),
        **common,
    )


def collapse_stream(text: str) -> str:
    """stream-json NDJSON (init, step_update*, result) -> one envelope JSON string."""
    result: dict[str, Any] | None = None
    pieces: list[str] = []
    usage: dict[str, Any] = {}
    conversation: str | None = None
    for line in (text or "").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        name = event.get("event")
        conversation = conversation or event.get("conversation_id")
        if name == "result" and isinstance(event.get("result"), dict):
            result = event["result"]
        elif name == "step_update" and isinstance(event.get("step_update"), dict):
            step = event["step_update"]
            if step.get("step_type") == "agent_response" and isinstance(step.get("text_delta"), str):
                pieces.append(step["text_delta"])
            if isinstance(step.get("usage"), dict):
                usage = step["usage"]
    if result is not None:
        return json.dumps(result, ensure_ascii=False)
    if not pieces and not text.strip():
        return ""
    return json.dumps(
        {
            "conversation_id": conversation,
            "status": "SUCCESS" if pieces else "INVALID",
            "response": "".join(pieces),
            "error": None if pieces else "stream ended without a result event",
            "num_turns": 1 if pieces else 0,
            "usage": usage,
        },
        ensure_ascii=False,
    )


def _die_with_parent() -> None:
    """In the agy child, before exec: the kernel kills it if the dmf process dies (kill -9
    included), so no agy outlives the run that started it (prctl PR_SET_PDEATHSIG, Linux)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _kill_tree(proc: subprocess.Popen) -> None:
    try:
        if sys.platform.startswith("win"):
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, ProcessLookupError):
        try:
            proc.kill()
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except (subprocess.TimeoutExpired, OSError):
        pass


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def run_once(
    cfg: AiConfig, prompt: str, *, transport: str, schema_path: Path | None, log_dir: Path, workdir: Path, tag: str = ""
) -> Envelope:
    """Launch agy once; stdout and stderr go to separate files in `log_dir`. Never raises."""
    suffix = "_" + tag if tag else ""
    stdout_path = log_dir / f"agy{suffix}.stdout.json"
    stderr_path = log_dir / f"agy{suffix}.stderr.log"
    cli_log = log_dir / f"agy_cli{suffix}.log"
    common = {"transport": transport, "stdout_path": stdout_path, "stderr_path": stderr_path}
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return Envelope(status="LAUNCH_FAILED", error=f"cannot prepare directories: {exc}", **common)
    binary = resolve_binary(cfg.binary)
    if binary is None:
        where = cfg.binary or "the usual install places or PATH"
        return Envelope(status="LAUNCH_FAILED", error=f"agy executable not found ({where})", **common)
    args = build_args(binary, cfg, transport, prompt, schema_path, cli_log)
    stdin_bytes = None
    if transport == "stdin":
        stdin_bytes = (json.dumps({"event": "user", "message": {"content": prompt}}, ensure_ascii=False) + "\n").encode(
            "utf-8"
        )
    limit = parse_duration(cfg.print_timeout) + max(0.0, float(cfg.hard_kill_grace_seconds))
    popen_extra: dict[str, Any] = {}
    if sys.platform.startswith("win"):
        popen_extra["creationflags"] = _CREATE_NO_WINDOW
    else:
        popen_extra["start_new_session"] = True
        if sys.platform.startswith("linux"):
            popen_extra["preexec_fn"] = _die_with_parent
    started = time.monotonic()
    try:
        with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
            proc = subprocess.Popen(
                args,
                cwd=str(workdir),
                env=child_env(),
                stdin=subprocess.PIPE if stdin_bytes is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                **popen_extra,
            )
            try:
                proc.communicate(input=stdin_bytes, timeout=limit)
            except KeyboardInterrupt:  # a stopped run (SIGTERM, its deadline) leaves no agy behind
                _kill_tree(proc)
                raise
            except subprocess.TimeoutExpired:
                _kill_tree(proc)
                return Envelope(
                    status="TIMEOUT",
                    exit_code=-1,
                    error=f"no answer within {cfg.print_timeout} (+grace); process killed",
                    duration_s=time.monotonic() - started,
                    stderr_tail=_read(stderr_path)[-2000:],
                    **common,
                )
    except (OSError, ValueError) as exc:
        return Envelope(
            status="LAUNCH_FAILED",
            error=f"agy could not be started: {exc}",
            duration_s=time.monotonic() - started,
            **common,
        )
    elapsed = time.monotonic() - started
    raw = _read(stdout_path)
    if transport == "stdin":
        raw = collapse_stream(raw)
    env = _envelope_from_text(
        raw, exit_code=proc.returncode, duration_s=elapsed, stderr_tail=_read(stderr_path)[-2000:], **common
    )
    return env


def classify(env: Envelope, patterns: Mapping[str, Sequence[str]]) -> ErrorKind:
    """Exit code and envelope status are both checked; text patterns name the failure."""
    if env.status == "LAUNCH_FAILED":
        return ErrorKind.LAUNCH_FAILED
    if env.status == "TIMEOUT":
        return ErrorKind.TIMEOUT
    if env.status == "SUCCESS" and env.exit_code == 0:
        return ErrorKind.NONE
    blob = " ".join(
        x for x in (env.error or "", env.stderr_tail, env.response[:2000] if env.status != "SUCCESS" else "") if x
    )
    for name, kind in (
        ("quota", ErrorKind.QUOTA),
        ("auth", ErrorKind.AUTH),
        ("not_found", ErrorKind.NOT_FOUND),
        ("timeout", ErrorKind.TIMEOUT),
    ):
        for pattern in patterns.get(name, ()):
            try:
                if re.search(pattern, blob, re.IGNORECASE):
                    return kind
            except re.error:
                continue
    if env.status == "INVALID":
        return ErrorKind.INVALID_OUTPUT
    return ErrorKind.AGY_ERROR


# --------------------------------------------------------------------------- the client


@dataclass(frozen=True)
class CallResult:
    ok: bool
    kind: ErrorKind
    reason: str = ""
    obj: dict[str, Any] | None = None
    attempts: int = 0  # agy processes launched
    cache_hit: bool = False
    schema_valid: bool = False
    noise_removed: tuple[str, ...] = ()
    prompt_sha256: str = ""
    prompt_chars: int = 0
    transport: str = "argv"
    tokens: int = 0

    @property
    def skip_reason(self) -> str | None:
        return None if self.ok else skip_reason_for(self.kind)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class AgyClient:
    """The one entry point use-case code calls. Owns the guard, breaker, budget and cache."""

    def __init__(
        self,
        cfg: AiConfig,
        *,
        workdir: Path,
        budget: TokenBudget | None = None,
        cache: ResultCache | None = None,
        circuit: CircuitBreaker | None = None,
        on_usage: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.workdir = workdir
        self.budget = budget
        self.cache = cache
        self.circuit = circuit
        self.on_usage = on_usage

    def _emit(self, row: dict[str, Any]) -> None:
        if self.on_usage is None:
            return
        try:
            self.on_usage(row)
        except Exception:  # recording must never break the call
            pass

    def _usage_row(
        self,
        purpose: str,
        attempt: int,
        cfg: AiConfig,
        env: Envelope,
        prompt: str,
        kind: ErrorKind,
        schema_valid: bool,
        error: str | None,
        started_at: datetime,
    ) -> dict[str, Any]:
        return {
            "purpose": purpose,
            "attempt": attempt,
            "started_at": started_at,
            "duration_s": round(env.duration_s, 3),
            "exit_code": env.exit_code,
            "status": env.status,
            "error_kind": kind.value,
            "transport": env.transport,
            "turns": env.turns,
            "input_tokens": env.usage_int("input_tokens"),
            "output_tokens": env.usage_int("output_tokens"),
            "cached_tokens": env.usage_int("cache_read_tokens") or env.usage_int("cached_tokens"),
            "thinking_tokens": env.usage_int("thinking_tokens"),
            "total_tokens": env.total_tokens,
            "prompt_chars": len(prompt),
            "prompt_sha256": sha256_text(prompt),
            "model": cfg.model,
            "effort": cfg.effort,
            "schema_valid": 1 if schema_valid else 0,
            "error": sanitize.for_output(error, 1000) if error else None,
            "stdout_path": str(env.stdout_path) if env.stdout_path else None,
        }

    def _fail(self, kind: ErrorKind, reason: str, prompt: RenderedPrompt, **extra: Any) -> CallResult:
        return CallResult(
            False, kind, reason, prompt_sha256=prompt.identity_sha256, prompt_chars=len(prompt.text), **extra
        )

    def call(
        self,
        purpose: str,
        prompt: RenderedPrompt,
        schema: Mapping[str, Any],
        schema_path: Path | None,
        log_dir: Path,
        *,
        use_cache: bool = True,
    ) -> CallResult:
        """Ask once (plus at most one stricter retry) and return a validated object or a reason."""
        try:
            return self._call(purpose, prompt, schema, schema_path, log_dir, use_cache)
        except Exception as exc:  # the contract is "never raises"; this is the last net
            return self._fail(ErrorKind.AGY_ERROR, f"unexpected client error: {exc!r}"[:300], prompt)

    def _call(
        self,
        purpose: str,
        prompt: RenderedPrompt,
        schema: Mapping[str, Any],
        schema_path: Path | None,
        log_dir: Path,
        use_cache: bool,
    ) -> CallResult:
        cfg = self.cfg
        if not cfg.enabled:
            why = "DMF_AI_DISABLED is set" if cfg.disabled_by_env else "enabled = false in config"
            return self._fail(ErrorKind.DISABLED, why, prompt)
        verdict = check_prompt(prompt.text, cfg.max_prompt_chars, cfg.cmdline_safe_chars)
        if not verdict.ok:
            return self._fail(ErrorKind.PROMPT_GUARD, verdict.reason, prompt)
        schema_sha = sha256_text(json.dumps(schema, sort_keys=True, ensure_ascii=False))
        cache_key = ResultCache.key(purpose, prompt.identity_sha256, cfg.model, cfg.effort, schema_sha)
        if use_cache and self.cache is not None:
            cached = self.cache.get(cache_key)
            if cached is not None and validate(cached, schema) is None:
                return CallResult(
                    True,
                    ErrorKind.NONE,
                    "cache hit",
                    cached,
                    0,
                    True,
                    True,
                    prompt_sha256=prompt.identity_sha256,
                    prompt_chars=len(prompt.text),
                    transport=verdict.transport,
                )
        if self.circuit is not None:
            allowed, why = self.circuit.allow()
            if not allowed:
                return self._fail(ErrorKind.CIRCUIT_OPEN, why, prompt)

        attempts = 0
        tokens = 0
        current_text = prompt.text
        current_cfg = cfg
        transport = verdict.transport
        last_kind, last_reason = ErrorKind.AGY_ERROR, ""
        max_attempts = 1 + max(0, int(cfg.max_json_retries))
        while attempts < max_attempts:
            if self.budget is not None:
                allowed, reason, detail = self.budget.check()
                if not allowed:
                    if attempts == 0:
                        return self._fail(ErrorKind(reason), detail, prompt)
                    break  # the retry is not worth breaking a cap; keep the first failure
            started_at = _utc_now()
            env = run_once(
                current_cfg,
                current_text,
                transport=transport,
                schema_path=schema_path,
                log_dir=log_dir,
                workdir=self.workdir,
                tag=f"retry{attempts}" if attempts else "",
            )
            attempts += 1
            tokens += env.total_tokens
            if env.status != "LAUNCH_FAILED" and self.budget is not None:
                self.budget.record(purpose, env.total_tokens)
            kind = classify(env, current_cfg.error_patterns)
            if kind is not ErrorKind.NONE:
                reason = env.error or env.status
                if env.status == "SUCCESS":
                    reason = f"exit code {env.exit_code} although status is SUCCESS"
                last_kind, last_reason = kind, reason[:400]
                self._emit(
                    self._usage_row(
                        purpose, attempts - 1, current_cfg, env, current_text, kind, False, last_reason, started_at
                    )
                )
                if kind in NO_RETRY:
                    break
                if cfg.retry_backoff_seconds > 0 and attempts < max_attempts:
                    time.sleep(float(cfg.retry_backoff_seconds))
                continue

            extraction = self._extract(env, schema)
            note = None
            if extraction.valid and extraction.noise_removed:
                note = "noise_keys_stripped: " + ", ".join(extraction.noise_removed[:8])
            elif not extraction.valid:
                note = extraction.error
            self._emit(
                self._usage_row(
                    purpose,
                    attempts - 1,
                    current_cfg,
                    env,
                    current_text,
                    ErrorKind.NONE if extraction.valid else ErrorKind.SCHEMA_INVALID,
                    extraction.valid,
                    note,
                    started_at,
                )
            )
            if extraction.valid and extraction.obj is not None:
                if self.circuit is not None:
                    self.circuit.record_success()
                if use_cache and self.cache is not None:
                    self.cache.put(cache_key, extraction.obj)
                return CallResult(
                    True,
                    ErrorKind.NONE,
                    note or "",
                    extraction.obj,
                    attempts,
                    False,
                    True,
                    extraction.noise_removed,
                    prompt.identity_sha256,
                    len(prompt.text),
                    transport,
                    tokens,
                )
            last_kind = ErrorKind.SCHEMA_INVALID
            last_reason = (extraction.error or "answer failed validation")[:400]
            block = RETRY_BLOCK.format(reason=sanitize.for_prompt(last_reason, 240))
            retry_text = prompt.with_retry_block(block)
            current_text = retry_text if retry_text != prompt.text else prompt.text + "\n\n" + block
            current_cfg = replace(cfg, effort=cfg.retry_effort or cfg.effort)
            transport = "argv" if len(current_text) <= cfg.cmdline_safe_chars else "stdin"

        if self.circuit is not None and last_kind in COUNTED_FAILURES:
            self.circuit.record_failure(last_kind.value)
        return CallResult(
            False,
            last_kind,
            last_reason,
            None,
            attempts,
            False,
            False,
            prompt_sha256=prompt.identity_sha256,
            prompt_chars=len(prompt.text),
            transport=transport,
            tokens=tokens,
        )

    @staticmethod
    def _extract(env: Envelope, schema: Mapping[str, Any]) -> Extraction:
        """structured_output first (only if it validates), else our own scan of `response`."""
        if isinstance(env.structured_output, dict) and validate(env.structured_output, schema) is None:
            return Extraction(env.structured_output, True, objects_seen=1)
        return extract_and_validate(env.response, schema)
