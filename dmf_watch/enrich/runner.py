"""The contract every AI step keeps, in one place: the outcome value, the day's latest run, the
call (client, budget, cache, circuit, workspace), the parsed answer's checks, and one run
written whole (its row, its items, its agy call rows, its proposals) in one transaction.

A step (daily_briefing, weekly_briefing, anomaly, drift) is what it reads, its prompt and
schema, and what it keeps of an answer (`Ask`); `ask_agy` does the rest the same way for all.
"""

from __future__ import annotations

import secrets
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.warehouse import table_exists
from dmf_watch.enrich import enrichment_store as store
from dmf_watch.enrich.ai_config import AiConfig, load_ai_config
from dmf_watch.enrich.badges import SKIPPED_REASONS, badge_for
from dmf_watch.enrich.budget import CircuitBreaker, ResultCache, TokenBudget
from dmf_watch.enrich.client import AgyClient, CallResult, skip_reason_for
from dmf_watch.enrich.parse import AnomalyNote
from dmf_watch.enrich.render import SCHEMAS_DIR, RenderedPrompt
from dmf_watch.enrich.workspace import prepare_workspace

T = TypeVar("T")

REQUIRED_MARTS = (
    "dmf_loads",
    "dmf_day_decisions",
    "dmf_events",
    "dmf_event_field_changes",
    "dmf_signals",
    "dmf_watchlist_unmatched",
    "dmf_daily_summary",
)


@dataclass
class EnrichOutcome:
    """What one enrichment step did. `status` OK | SKIPPED | FAILED; never an exception."""

    run_id: str | None
    as_of_date: date
    kind: str
    status: str
    skip_reason: str | None = None
    headline: str | None = None
    detail: str = ""
    agy_calls: int = 0
    tokens: int = 0
    cache_hit: bool = False
    reused: bool = False
    comments: int = 0
    anomaly_notes: int = 0
    proposals_queued: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    prompt_chars: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "OK"

    @property
    def badge(self) -> str:
        return badge_for(self.skip_reason)

    def summary(self) -> str:
        head = f"AI {self.kind} {self.as_of_date.isoformat()}: {self.status}"
        if self.status != "OK":
            text = f"{head} ({self.skip_reason}) — {self.badge}"
            return text + (f"; {self.detail}" if self.detail else "")
        if self.reused:
            return f"{head} — already enriched by run {self.run_id}; agy not called"
        parts = []
        if self.kind == "daily":
            parts.append(
                f"{self.comments} event comments, {self.anomaly_notes} anomaly notes, "
                f"{self.proposals_queued} alias proposals queued"
            )
        elif self.kind == "anomaly":
            parts.append(f"{self.anomaly_notes} signal interpretations")
        if self.dropped:
            parts.append(f"{sum(self.dropped.values())} invented items dropped")
        calls = (
            "cache hit, agy not called" if self.cache_hit else f"{self.agy_calls} agy call(s), {self.tokens:,} tokens"
        )
        parts.append(calls)
        return f"{head} — " + "; ".join(parts)


def new_run_id(as_of: date, kind: str) -> str:
    stamp = datetime.now(UTC).strftime("%H%M%S")
    return f"{as_of:%Y%m%d}-{kind}-{stamp}-{secrets.token_hex(3)}"


def status_for(reason: str) -> str:
    return "SKIPPED" if reason in SKIPPED_REASONS else "FAILED"


class Tools:
    """A configured client for one run, collecting its usage rows for the audit table."""

    def __init__(self, settings: Settings, cfg: AiConfig, run_id: str) -> None:
        state = Path(settings.state_dir)
        self.calls: list[dict[str, Any]] = []
        self.log_dir = state / "agy_runs" / run_id
        workdir, self.workspace_problem = prepare_workspace(settings)
        self.client = AgyClient(
            cfg,
            workdir=workdir,
            budget=TokenBudget(state / "agy_budget.json", cfg.daily_token_cap, cfg.daily_call_cap),
            cache=ResultCache(state / "agy_cache", cfg.cache_ttl_seconds),
            circuit=CircuitBreaker(state / "agy_circuit.json", cfg.circuit_failure_threshold, cfg.circuit_open_hours),
            on_usage=self.calls.append,
        )

    def call_rows(self, run_id: str, as_of: date, extra_note: str = "") -> list[dict[str, Any]]:
        out = []
        for index, row in enumerate(self.calls):
            record = dict(row, call_id=f"{run_id}-{index}", run_id=run_id, as_of_date=as_of)
            if extra_note and index == len(self.calls) - 1 and row.get("schema_valid"):
                record["error"] = "; ".join(x for x in (row.get("error"), extra_note) if x)
            out.append(record)
        return out


def open_warehouse(settings: Settings) -> tuple[AbstractContextManager[warehouse.Connection] | None, str]:
    """The warehouse to open with `with`, or (None, sentence) when there is none yet. Opening it
    can still fail (a `warehouse.Error` from the `with`), which each caller turns into its value."""
    if not warehouse.exists(settings):
        where = warehouse.describe(settings)
        return None, f"the warehouse {where} does not exist; run `dmf load` and `dmf build` first."
    return warehouse.connect(settings), ""


def missing_marts(con: warehouse.Connection, names: Sequence[str] = REQUIRED_MARTS) -> list[str]:
    return [n for n in names if not table_exists(con, con.schemas.marts, n)]


def write_run(
    settings: Settings,
    run: Mapping[str, Any],
    items: Sequence[Mapping[str, Any]] = (),
    calls: Sequence[Mapping[str, Any]] = (),
    proposals: Sequence[Mapping[str, Any]] = (),
) -> str | None:
    """Store one run atomically; returns None or a sentence saying why it could not be stored."""
    opened, problem = open_warehouse(settings)
    if opened is None:
        return problem
    try:
        with opened as con:
            store.ensure_schema(con)
            with con.transaction():
                store.insert_run(con, run)
                store.insert_items(con, items)
                store.insert_calls(con, calls)
                store.insert_proposals(con, proposals)
    except warehouse.Error as exc:
        return f"the enrichment could not be stored ({str(exc)[:160]})."
    return None


def base_run(
    run_id: str,
    as_of: date,
    kind: str,
    status: str,
    reason: str | None,
    cfg: AiConfig | None,
    detail: str = "",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "as_of_date": as_of,
        "kind": kind,
        "status": status,
        "skip_reason": reason,
        "badge": badge_for(reason) or None,
        "detail": detail or None,
        "model": cfg.model if cfg else None,
        "effort": cfg.effort if cfg else None,
        "created_at": store.utc_now(),
        "agy_call_count": 0,
        "total_tokens": 0,
        "cache_hit": False,
        **extra,
    }


def latest_run(settings: Settings, as_of: date, kind: str) -> dict[str, Any] | None:
    """The day's latest run of `kind`, or None when there is none or no warehouse to ask (a
    warehouse that cannot be read asks agy again rather than stopping the step)."""
    opened, _ = open_warehouse(settings)
    if opened is None:
        return None
    try:
        with opened as con:
            store.ensure_schema(con)
            return store.latest_run(con, as_of, kind)
    except warehouse.Error:
        return None


def same_as_latest(
    settings: Settings, as_of: date, kind: str, status: str, reason: str | None, prompt_sha: str | None
) -> dict[str, Any] | None:
    """The latest run when it already says the same thing (re-runs add no duplicate rows)."""
    latest = latest_run(settings, as_of, kind)
    if (
        latest
        and latest["status"] == status
        and latest["skip_reason"] == reason
        and latest["prompt_sha256"] == prompt_sha
    ):
        return latest
    return None


def read_marts(
    settings: Settings, as_of: date, kind: str, cfg: AiConfig, read: Callable[[warehouse.Connection], T]
) -> tuple[T | None, EnrichOutcome | None]:
    """Runs `read` on the warehouse, or returns the outcome that says why it cannot:
    no warehouse file yet, or marts that `dmf build` has not created."""
    opened, problem = open_warehouse(settings)
    if opened is None:
        return None, EnrichOutcome(None, as_of, kind, "FAILED", "marts_missing", detail=problem)
    with opened as con:
        store.ensure_schema(con)
        missing = missing_marts(con)
        value = None if missing else read(con)
    if missing:
        return None, finish_without_call(
            settings,
            as_of,
            kind,
            "marts_missing",
            cfg,
            "missing marts: " + ", ".join("marts." + m for m in missing) + "; run `dmf build` first.",
        )
    return value, None


#: Why the client refused to call agy at all. On a re-run after a failed call for the same facts,
#: such a refusal does not replace the failure: the day's run stays the one agy answered, so
#: the report a re-run writes is the same (docs/ai-layer.md, "Re-runs").
REFUSED_BEFORE_CALLING = frozenset({"circuit_open", "call_cap", "token_cap"})


def earlier_call_failure(settings: Settings, as_of: date, kind: str, prompt_sha: str | None) -> dict[str, Any] | None:
    """The latest run of the day when agy was called for these same facts and did not answer
    (an error, a timeout, a quota refusal by agy itself)."""
    if prompt_sha is None:
        return None
    latest = latest_run(settings, as_of, kind)
    if (
        latest
        and latest["status"] != "OK"
        and (latest.get("agy_call_count") or 0) > 0
        and latest["prompt_sha256"] == prompt_sha
    ):
        return latest
    return None


def finish_without_call(
    settings: Settings,
    as_of: date,
    kind: str,
    reason: str,
    cfg: AiConfig | None,
    detail: str,
    prompt_sha: str | None = None,
    result: CallResult | None = None,
    tools: Tools | None = None,
    run_id: str | None = None,
) -> EnrichOutcome:
    """Record a SKIPPED/FAILED run (once: an identical latest row is reused) and say so."""
    status = status_for(reason)
    calls = tools.calls if tools else []
    if not calls:
        existing = same_as_latest(settings, as_of, kind, status, reason, prompt_sha)
        if existing:
            return EnrichOutcome(existing["run_id"], as_of, kind, status, reason, detail=detail)
        failed = earlier_call_failure(settings, as_of, kind, prompt_sha) if reason in REFUSED_BEFORE_CALLING else None
        if failed:  # the retry was refused: the earlier failure stays the day's run, nothing is added
            return EnrichOutcome(
                failed["run_id"],
                as_of,
                kind,
                failed["status"],
                failed["skip_reason"],
                detail=f"not retried ({reason}): {detail}",
            )
    run_id = run_id or new_run_id(as_of, kind)
    run = base_run(
        run_id,
        as_of,
        kind,
        status,
        reason,
        cfg,
        detail,
        prompt_sha256=prompt_sha,
        agy_call_count=len(calls),
        total_tokens=result.tokens if result else 0,
    )
    problem = write_run(settings, run, calls=tools.call_rows(run_id, as_of) if tools else [])
    outcome = EnrichOutcome(
        run_id if problem is None else None,
        as_of,
        kind,
        status,
        reason,
        detail=detail,
        agy_calls=len(calls),
        tokens=result.tokens if result else 0,
        prompt_chars=result.prompt_chars if result else 0,
    )
    if problem and reason not in ("marts_missing",):
        outcome.detail = (detail + "; " if detail else "") + problem
    return outcome


def call_failure_detail(result: CallResult) -> str:
    """One sentence for a failed call, free of secrets (agy's own text is quarantined)."""
    from dmf_watch.enrich.sanitize import for_output

    text = for_output(result.reason, 240)
    return f"agy call ended with {result.kind.value}: {text}" if text else f"agy call ended with {result.kind.value}"


def finish_after_failed_call(
    settings: Settings,
    as_of: date,
    kind: str,
    cfg: AiConfig,
    prompt_sha: str,
    result: CallResult,
    tools: Tools,
    run_id: str,
) -> EnrichOutcome:
    """Record a run whose agy call failed, with the failure's reason and its secret-free detail.

    Every kind ends the same way when agy does not answer, so the reason (timeout, quota, ...)
    reads the same on the report's badge whichever kind of run it was.
    """
    return finish_without_call(
        settings,
        as_of,
        kind,
        skip_reason_for(result.kind),
        cfg,
        call_failure_detail(result),
        prompt_sha,
        result,
        tools,
        run_id,
    )


class Answer(Protocol):
    """What every parsed answer says about itself (dmf_watch.enrich.parse)."""

    ok: bool
    failure_reason: str | None
    dropped: Any  # parse.Dropped: what was invented and removed


@dataclass
class Kept:
    """What a step keeps of a valid answer: the enrichment items, the run row's own fields, the
    proposals queued for a person, and the counts its outcome reports."""

    items: list[dict[str, Any]]
    run_fields: dict[str, Any] = field(default_factory=dict)
    proposals: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    # written once the run is stored (a file a person reviews), never before
    after_stored: Callable[[], None] | None = None


@dataclass(frozen=True)
class Ask:
    """One question to agy: the step's kind, the call's purpose (the audit rows), its prompt and
    schema, how the answer is parsed against the facts shown, and what is kept of it."""

    kind: str
    purpose: str
    prompt: RenderedPrompt
    schema_name: str
    schema: dict
    parse: Callable[[Any], Answer]
    keep: Callable[[Any, str], Kept]  # (the parsed answer, the run id)
    reused: str = ""  # the detail of a re-run that finds the same facts already answered


def ask_agy(settings: Settings, as_of: date, cfg: AiConfig, ask: Ask) -> EnrichOutcome:
    """Ask once for these facts: reuse the day's run that already answered them, else call agy,
    keep only a valid answer's checked parts, and store the run whole or say why not."""
    prompt = ask.prompt
    latest = latest_run(settings, as_of, ask.kind)
    if latest and latest["status"] == "OK" and latest["prompt_sha256"] == prompt.identity_sha256:
        return EnrichOutcome(
            latest["run_id"],
            as_of,
            ask.kind,
            "OK",
            headline=latest["headline"],
            reused=True,
            detail=ask.reused,
            prompt_chars=len(prompt.text),
        )
    run_id = new_run_id(as_of, ask.kind)
    tools = Tools(settings, cfg, run_id)
    result = tools.client.call(ask.purpose, prompt, ask.schema, SCHEMAS_DIR / ask.schema_name, tools.log_dir)
    if not result.ok:
        return finish_after_failed_call(settings, as_of, ask.kind, cfg, prompt.identity_sha256, result, tools, run_id)
    answer = ask.parse(result.obj)
    if not answer.ok:
        return finish_without_call(
            settings,
            as_of,
            ask.kind,
            "parse_failed",
            cfg,
            f"the answer was discarded: {answer.failure_reason}.",
            prompt.identity_sha256,
            result,
            tools,
            run_id,
        )
    kept = ask.keep(answer, run_id)
    note = answer.dropped.note()
    run = base_run(
        run_id,
        as_of,
        ask.kind,
        "OK",
        None,
        cfg,
        note,
        prompt_sha256=prompt.identity_sha256,
        agy_call_count=result.attempts,
        total_tokens=result.tokens,
        cache_hit=result.cache_hit,
        dropped_json=store.dumps(answer.dropped.as_dict()) if answer.dropped.total else None,
        **kept.run_fields,
    )
    problem = write_run(settings, run, kept.items, tools.call_rows(run_id, as_of, note), kept.proposals)
    if problem:
        return EnrichOutcome(
            None,
            as_of,
            ask.kind,
            "FAILED",
            "storage_error",
            detail=problem,
            agy_calls=result.attempts,
            tokens=result.tokens,
        )
    if kept.after_stored:
        kept.after_stored()
    return EnrichOutcome(
        run_id,
        as_of,
        ask.kind,
        "OK",
        headline=run.get("headline"),
        detail=note,
        agy_calls=result.attempts,
        tokens=result.tokens,
        cache_hit=result.cache_hit,
        dropped=answer.dropped.as_dict(),
        prompt_chars=len(prompt.text),
        **kept.counts,
    )


def item_row(
    run_id: str, as_of: date, kind: str, key: str | None, content: str | None, **fields: Any
) -> dict[str, Any]:
    """One enrichment item of a run (`importance`, `detail_json` as the step gives them)."""
    return {
        "run_id": run_id,
        "as_of_date": as_of,
        "kind": kind,
        "item_key": key,
        "importance": fields.get("importance"),
        "content": content,
        "detail_json": fields.get("detail_json"),
        "applied": 0,
        "created_at": store.utc_now(),
    }


def hypothesis_item(run_id: str, as_of: date, note: AnomalyNote) -> dict[str, Any]:
    """An anomaly hypothesis as an item, the same whichever step (the daily briefing or the
    anomaly explanation) wrote it; the alternative only when the step's schema asked for one."""
    detail = {"verdict": note.verdict, "suggested_action": note.suggested_action}
    if note.alternative_hypothesis:
        detail["alternative_hypothesis"] = note.alternative_hypothesis
    detail["confidence"] = note.confidence
    return item_row(
        run_id,
        as_of,
        "anomaly_hypothesis",
        note.signal_id,
        note.hypothesis,
        importance=note.verdict,
        detail_json=store.dumps(detail),
    )


def never_raises(
    settings: Settings, as_of: date, kind: str, step: Callable[[AiConfig], EnrichOutcome]
) -> EnrichOutcome:
    """Runs a step with the AI configuration; an unexpected error is the step's FAILED outcome
    (recorded when the warehouse allows, its traceback in state/agy_runs/), never the morning's."""
    cfg: AiConfig | None = None
    try:
        cfg = load_ai_config(settings)
        return step(cfg)
    except Exception as exc:  # the last net: the pipeline must go on to the report
        detail = f"unexpected error in the {kind} step: {type(exc).__name__}"
        outcome = EnrichOutcome(None, as_of, kind, "FAILED", "internal_error", detail=detail)
        try:
            outcome = finish_without_call(settings, as_of, kind, "internal_error", cfg, detail)
        except Exception:
            pass
        _log_traceback(settings, as_of, kind)
        return outcome


def _log_traceback(settings: Settings, as_of: date, kind: str) -> None:
    try:
        path = settings.state_dir / "agy_runs" / f"{as_of:%Y%m%d}-{kind}-internal_error.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(traceback.format_exc(), encoding="utf-8")
    except OSError:
        pass
