"""`dmf notify`: raise the day's alerts, then deliver the day's messages once. Never raises.

Called by `dmf run` after the reports (and after a failed run, with its error) and by
`dmf notify --as-of D [--resend]`. Every alert and every delivery try is a row in the `notify`
schema; a (message, destination) pair already delivered is not sent again unless `resend`.
A delivery failure is recorded and retried a bounded number of times, and it never changes
the exit code of `dmf run`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.warehouse import table_exists
from dmf_watch.notify import ledger as store
from dmf_watch.notify import state_ledger
from dmf_watch.notify.deliver import Delivery, send, write_outbox
from dmf_watch.notify.destinations import Destination, NotifyConfig, load_notify_config
from dmf_watch.notify.messages import Message, alert_message, daily_message, test_message, weekly_message
from dmf_watch.notify.policy import (
    BACKUP,
    PIPELINE,
    broken_state,
    evaluate,
    is_broken,
    make_alert,
    run_failed_alert,
)
from dmf_watch.notify.redact import Scrubber

log = logging.getLogger("dmf.notify")
OUTBOX = "outbox"


@dataclass
class NotifyOutcome:
    as_of: date
    alerts: list[str] = field(default_factory=list)  # kinds of the alerts raised now
    sent: list[str] = field(default_factory=list)  # "destination: message key"
    failed: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # demo outbox files
    note: str = ""

    @property
    def recorded(self) -> bool:
        """Something was added to the notify tables (so the report's operations sheet changed)."""
        return bool(self.alerts or self.sent or self.failed or self.written)

    def summary(self) -> str:
        parts = []
        if self.alerts:
            parts.append("alerts " + ", ".join(self.alerts))
        if self.sent:
            parts.append(f"{len(self.sent)} delivered")
        if self.failed:
            parts.append(
                f"{len(self.failed)} failed after retries ({', '.join(self.failed)}; see the operations sheet)"
            )
        if self.written:
            parts.append(f"{len(self.written)} written to the outbox")
        if self.note:
            parts.append(self.note)
        return "; ".join(parts) or "nothing new to send"


def _scrubber(cfg: NotifyConfig) -> Scrubber:
    key = os.environ.get("MFDS_SERVICE_KEY")
    return Scrubber(cfg.secrets() + ([key] if key else []))


def _delivery_row(
    as_of: date, message: Message, destination: str, service: str, result: Delivery, resend: bool
) -> dict[str, Any]:
    return {
        "delivery_id": f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(4)}",
        "as_of_date": as_of,
        "delivered_at": store.utc_now(),
        "message_kind": message.kind,
        "message_key": message.key,
        "level": message.level,
        "alert_kind": message.alert_kind,
        "destination": destination,
        "service": service,
        "outcome": result.outcome,
        "attempts": result.attempts,
        "error": result.error,
        "resend": resend,
    }


def _messages(
    con, settings: Settings, as_of: date, cfg: NotifyConfig, run_failed: bool, fresh: set[Path]
) -> list[Message]:
    """The day's messages; a report is attached only when it was just rendered from this
    warehouse (`fresh`): a file written before cannot disagree with the text."""
    from dmf_watch.reports.daily_report import report_path
    from dmf_watch.reports.weekly_report import report_path as weekly_path

    daily_report, weekly_report = report_path(settings.reports_dir, as_of), weekly_path(settings.reports_dir, as_of)
    out: list[Message] = []
    if not run_failed:
        owners = sorted({d.route.owner for d in cfg.destinations if d.route.owner})
        for owner in [None, *owners]:
            daily = daily_message(con, as_of, daily_report, cfg.empty_day, owner, attach=daily_report in fresh)
            if daily is not None:
                out.append(daily)
        if as_of.weekday() == 0:
            out.append(weekly_message(con, as_of, weekly_report, attach=weekly_report in fresh))
    out += [alert_message(alert) for alert in store.alerts_for_day(con, as_of)]
    return out


def _has_decision(con: warehouse.Connection, as_of: date) -> bool:
    """The day has a load verdict, so it has a report to attach (a day never loaded has none)."""
    marts = con.schemas.marts
    if not table_exists(con, marts, "dmf_day_decisions"):
        return False
    return (
        con.execute(f"select count(*) from {marts}.dmf_day_decisions where as_of_date = ?", [as_of]).fetchone()[0] > 0
    )


def _render_attachments(settings: Settings, as_of: date) -> set[Path]:
    """Render the reports the messages attach from the warehouse the messages are written from,
    so a mail's text and its xlsx cannot disagree (an xlsx written before a seed edit and a
    rebuild said "2건" under a text saying "3건"). Rendering reads only the warehouse and gives
    the same bytes for the same warehouse, so an unchanged day's file is rewritten identical.
    Returns the reports rendered; one that failed is named but not attached."""
    from dmf_watch.reports.daily_report import render_daily
    from dmf_watch.reports.weekly_report import render_weekly

    renders = [render_daily] + ([render_weekly] if as_of.weekday() == 0 else [])
    rendered = set()
    for render in renders:
        try:
            rendered.add(Path(render(settings, as_of)))
        except Exception as exc:  # delivery goes on without a file that may be stale
            log.error("notify %s: %s failed (%s); the message goes without its report", as_of, render.__name__, exc)
    return rendered


def notify_day(
    settings: Settings,
    as_of: date,
    *,
    run_error: str | None = None,
    fault: str | None = None,
    resend: bool = False,
    outbox: Path | None = None,
    env: dict[str, str] | None = None,
) -> NotifyOutcome:
    """Alerts + deliveries for one day. `outbox` (the demo) stands in when nothing is configured.
    `fault`: the kind of warehouse fault that stopped the run (core/faults.py), if it is one.

    A failed run whose alert cannot go through the warehouse (it cannot be opened, read or
    written: that may be the very fault) is alerted from the state folder's ledger instead."""
    outcome = NotifyOutcome(as_of)
    try:
        cfg = load_notify_config(settings.state_dir, env)
        if outbox is not None:  # the demo never sends anywhere, whatever this machine has set
            cfg = dataclasses.replace(cfg, destinations=())
    except Exception as exc:  # delivery is never fatal
        outcome.note = f"notification step failed ({type(exc).__name__}); see state/logs/dmf.log"
        log.error("notify %s failed: %s", as_of, type(exc).__name__)
        return outcome
    try:
        _notify_day(settings, as_of, cfg, outcome, run_error, fault, resend, outbox)
    except Exception as exc:  # delivery is never fatal
        log.error("notify %s through the warehouse failed: %s", as_of, " ".join(str(exc).split())[:300])
        if run_error is None:
            outcome.note = f"notification step failed ({type(exc).__name__}); see state/logs/dmf.log"
            return outcome
        outcome.alerts, outcome.sent, outcome.failed = [], [], []
        _notify_without_warehouse(settings, as_of, cfg, outcome, run_error, fault)
    return outcome


def _notify_day(
    settings: Settings,
    as_of: date,
    cfg: NotifyConfig,
    outcome: NotifyOutcome,
    run_error: str | None,
    fault: str | None,
    resend: bool,
    outbox: Path | None,
) -> None:
    scrub = _scrubber(cfg)
    if not warehouse.exists(settings):
        if run_error is not None:  # the first morning failed before it made a warehouse
            _notify_without_warehouse(settings, as_of, cfg, outcome, run_error, fault)
            return
        outcome.note = f"no warehouse at {warehouse.describe(settings)}: nothing recorded or sent"
        log.warning("notify %s: %s", as_of, outcome.note)
        return
    with warehouse.connect(settings) as con:
        store.ensure_schema(con)
        ledger = state_ledger.read(settings.state_dir)
        _adopt_state_ledger(con, ledger)
        raised = evaluate(con, as_of, scrub(run_error) if run_error is not None else None, fault)
        outcome.alerts = [a["kind"] for a in raised]
        _mirror_to_state_ledger(con, settings, ledger)
        reported = run_error is None and (bool(cfg.destinations) or outbox is not None) and _has_decision(con, as_of)
    fresh = _render_attachments(settings, as_of) if reported else set()
    with warehouse.connect(settings) as con:
        messages = _messages(con, settings, as_of, cfg, run_error is not None, fresh)
        done = set() if resend else store.sent_keys(con, as_of)

    targets: list[tuple[Destination | None, Message]] = []
    if cfg.destinations:
        targets = [
            (d, m)
            for m in messages
            for d in cfg.destinations
            if d.route.wants(m.kind, m.level) and m.suits(d.route.owner) and (m.key, d.name) not in done
        ]
    elif outbox is not None:
        targets = [(None, m) for m in messages if m.suits(None) and (m.key, OUTBOX) not in done]
    else:
        outcome.note = "no notification destination configured: nothing sent"
        log.info("notify %s: %s (set DMF_NOTIFY_URLS or a destination in notify.toml)", as_of, outcome.note)
        return

    for destination, message in targets:
        if destination is None:
            result = write_outbox(outbox, message)  # type: ignore[arg-type]
            name, service = OUTBOX, "file"
        else:
            result = send(
                destination,
                message,
                attempts=cfg.attempts,
                wait_s=cfg.retry_wait_seconds,
                attach=cfg.attach_report,
                scrub=scrub,
            )
            name, service = destination.name, destination.service
        label = f"{name}: {message.key}"
        {"sent": outcome.sent, "written": outcome.written}.get(result.outcome, outcome.failed).append(label)
        log.info(
            "notify %s %s -> %s (%s, %d attempt(s)) %s",
            as_of,
            message.key,
            name,
            result.outcome,
            result.attempts,
            result.error or "",
        )
        with warehouse.connect(settings) as con:
            store.insert_delivery(con, _delivery_row(as_of, message, name, service, result, resend))


def _adopt_state_ledger(con: warehouse.Connection, ledger: dict[str, Any]) -> None:
    """A pipeline state the state folder's ledger observed after the warehouse's last one (a
    morning whose warehouse could not be written) becomes the warehouse's, so the next honest
    morning says "recovered" and the same fault again stays quiet."""
    seen = state_ledger.condition(ledger, PIPELINE)
    if seen is None:
        return
    current = store.condition_state(con, PIPELINE)
    last_date = date.fromisoformat(seen["last_date"])
    if current is not None and (current["last_evaluated_date"] >= last_date or current["state"] == seen["state"]):
        return
    store.set_condition_state(con, PIPELINE, seen["state"], date.fromisoformat(seen["since"]), changed=True)
    if last_date > date.fromisoformat(seen["since"]):
        store.set_condition_state(con, PIPELINE, seen["state"], last_date, changed=False)


def _mirror_to_state_ledger(con: warehouse.Connection, settings: Settings, ledger: dict[str, Any]) -> None:
    """The warehouse's pipeline state, also in the state folder: the morning the warehouse
    cannot be opened still knows whether its fault is a new one."""
    current = store.condition_state(con, PIPELINE)
    if current is None:
        return
    ledger["conditions"][PIPELINE] = {
        "state": current["state"],
        "since": current["since_date"].isoformat(),
        "last_date": current["last_evaluated_date"].isoformat(),
        "detail": None,
    }
    state_ledger.write(settings.state_dir, ledger)


def _send_from_state_ledger(
    settings: Settings,
    as_of: date,
    cfg: NotifyConfig,
    outcome: NotifyOutcome,
    ledger: dict[str, Any],
    alert: dict[str, Any],
) -> None:
    """Send one alert to every destination that takes it, each try recorded in the ledger."""
    scrub = _scrubber(cfg)
    state_ledger.add_alert(ledger, alert)
    outcome.alerts.append(alert["kind"])
    message = alert_message(alert)
    targets = [
        d for d in cfg.destinations if d.route.wants(message.kind, message.level) and message.suits(d.route.owner)
    ]
    if not targets:
        outcome.note = "no notification destination configured: nothing sent"
    for destination in targets:
        result = send(
            destination, message, attempts=cfg.attempts, wait_s=cfg.retry_wait_seconds, attach=False, scrub=scrub
        )
        label = f"{destination.name}: {message.key}"
        (outcome.sent if result.outcome == "sent" else outcome.failed).append(label)
        log.info("notify %s %s -> %s (%s, without the warehouse)", as_of, message.key, destination.name, result.outcome)
        state_ledger.add_delivery(
            ledger, _delivery_row(as_of, message, destination.name, destination.service, result, False)
        )


def _notify_without_warehouse(
    settings: Settings, as_of: date, cfg: NotifyConfig, outcome: NotifyOutcome, run_error: str, fault: str | None
) -> None:
    """The failed run's alert, once per streak, from the state folder's ledger alone."""
    why = _scrubber(cfg)(run_error)
    ledger = state_ledger.read(settings.state_dir)
    changed, previous, _ = state_ledger.observe(ledger, PIPELINE, broken_state(fault), as_of, why)
    if changed:
        _send_from_state_ledger(settings, as_of, cfg, outcome, ledger, run_failed_alert(as_of, why))
    elif is_broken(previous):
        outcome.note = "the same fault as the last morning: alerted when it began, not again"
    if not state_ledger.write(settings.state_dir, ledger):
        outcome.note = "; ".join(filter(None, [outcome.note, "the alert ledger could not be written"]))
    outcome.note = "; ".join(
        filter(None, ["the warehouse could not record it: alerted from the state folder", outcome.note])
    )


BACKUP_TEXT = {
    "failed": (
        "WARN",
        "backup_failed",
        "경고: 백업 실패 (발행은 정상)",
        "{as_of} 는 정상 발행되었지만 원본 적재 백업을 쓰지 못했습니다: {why}. 다시 받을 수 없는 원본이 "
        "백업되지 않은 상태입니다. 백업 위치(DMF_BACKUP_DIR)의 공간을 확보하세요. 실패가 이어지는 동안에는 다시 "
        "알리지 않고, 백업이 다시 쓰이면 한 번 알려 드립니다.",
    ),
    "ok": (
        "WARN",
        "backup_recovered",
        "복구: 백업 정상",
        "{as_of} 의 백업이 정상적으로 쓰였습니다. {since} 부터 이어진 백업 실패가 해소되었습니다.",
    ),
}


def notify_backup(
    settings: Settings, as_of: date, failure: str | None, env: dict[str, str] | None = None
) -> NotifyOutcome:
    """The backup's own condition, kept in the state folder's ledger: one alert when backups
    start failing after published days, one when a backup is written again. Never raises."""
    outcome = NotifyOutcome(as_of)
    try:
        cfg = load_notify_config(settings.state_dir, env)
        ledger = state_ledger.read(settings.state_dir)
        state = "ok" if failure is None else "failed"
        if failure is None and state_ledger.condition(ledger, BACKUP) is None:
            return outcome  # backups never failed: nothing to remember
        why = _scrubber(cfg)(failure or "")
        changed, previous, since = state_ledger.observe(ledger, BACKUP, state, as_of, why or None)
        if changed and (state == "failed" or previous == "failed"):
            level, kind, title, body = BACKUP_TEXT[state]
            alert = make_alert(as_of, kind, level, BACKUP, title, body.format(as_of=as_of, why=why, since=since))
            _send_from_state_ledger(settings, as_of, cfg, outcome, ledger, alert)
        state_ledger.write(settings.state_dir, ledger)
    except Exception as exc:  # delivery is never fatal
        outcome.note = f"backup alert failed ({type(exc).__name__}); see state/logs/dmf.log"
        log.error("notify backup %s failed: %s", as_of, exc)
    return outcome


def notify_test(settings: Settings, env: dict[str, str] | None = None) -> list[tuple[str, str | None, bool, str]]:
    """A test message to every configured destination: (name, owner served or None for
    everything, ok, scrubbed error) each."""
    cfg = load_notify_config(settings.state_dir, env)
    scrub = _scrubber(cfg)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    results = []
    for destination in cfg.destinations:
        message = test_message(destination.name, stamp, destination.route.owner)
        result = send(destination, message, attempts=1, wait_s=0, attach=False, scrub=scrub)
        results.append((destination.name, destination.route.owner, result.outcome == "sent", result.error or ""))
        if warehouse.exists(settings):
            try:
                with warehouse.connect(settings) as con:
                    store.ensure_schema(con)
                    store.insert_delivery(
                        con,
                        _delivery_row(today_in_seoul(), message, destination.name, destination.service, result, False),
                    )
            except warehouse.Error:
                log.warning("notify test: the delivery of %s could not be recorded", destination.name)
    return results


def unconfigured(settings: Settings, env: dict[str, str] | None = None) -> tuple[str, ...]:
    return load_notify_config(settings.state_dir, env).unconfigured
