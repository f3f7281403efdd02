"""Hand one message to one destination through apprise, with bounded retries; never raises.

Apprise speaks SMTP, Slack, Teams, Discord, generic JSON webhooks and the rest, one URL per
destination, so no protocol client lives here. Mail gets the HTML body and the attachments;
every other service gets the plain text only. Apprise's own log lines are captured (not sent to
our log, where they could quote a URL) and only a scrubbed summary is kept as the error.
The demo's outbox writes the same message to files instead, to show where it would have gone.
"""

from __future__ import annotations

import json
import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

from dmf_watch.notify.destinations import Destination
from dmf_watch.notify.messages import Message
from dmf_watch.notify.redact import Scrubber

MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class Delivery:
    outcome: str  # sent | failed | written
    attempts: int
    error: str | None = None


def _send_once(destination: Destination, message: Message, attach: bool) -> tuple[bool, str]:
    import apprise

    apprise_logger = logging.getLogger("apprise")
    apprise_logger.propagate = False  # its lines may quote a URL: they go to the capture only
    with apprise.LogCapture(level=logging.WARNING) as captured:
        notifier = apprise.Apprise(asset=apprise.AppriseAsset(app_id="DMF Watch", async_mode=False))
        if not notifier.add(destination.url):
            reason = _last_lines(captured.getvalue())
            return False, "the destination's URL is not a valid apprise URL" + (f" ({reason})" if reason else "")
        files = [str(p) for p in message.attachments] if attach and destination.is_mail else None
        ok = notifier.notify(
            body=message.html if destination.is_mail else message.text,
            title=message.title,
            notify_type=message.notify_type,
            body_format=apprise.NotifyFormat.HTML if destination.is_mail else apprise.NotifyFormat.TEXT,
            attach=files or None,
        )
        text = captured.getvalue()
    if ok:
        return True, ""
    return False, _last_lines(text) or "apprise reported a failure without a reason"


def _last_lines(captured: str) -> str:
    """The last few lines apprise logged, without their time stamps (scrubbed by the caller)."""
    lines = [re.sub(r"^\S+ \S+ - \w+ - ", "", line).strip() for line in captured.splitlines() if line.strip()]
    return " | ".join(lines[-3:])


def send(
    destination: Destination, message: Message, *, attempts: int, wait_s: float, attach: bool, scrub: Scrubber
) -> Delivery:
    """Try up to `attempts` times; the error kept is the last one, scrubbed and cut short."""
    error = ""
    for attempt in range(1, attempts + 1):
        try:
            ok, error = _send_once(destination, message, attach)
        except Exception as exc:  # a plugin bug must not stop the pipeline either
            ok, error = False, f"{type(exc).__name__}: {exc}"
        if ok:
            return Delivery("sent", attempt)
        if attempt < attempts and wait_s > 0:
            time.sleep(wait_s)
    return Delivery("failed", attempts, scrub(error)[:MAX_ERROR_CHARS])


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", key).strip("_")


def write_outbox(outbox: Path, message: Message) -> Delivery:
    """The demo's stand-in for a destination: the chat text, the mail HTML and the webhook JSON."""
    try:
        outbox.mkdir(parents=True, exist_ok=True)
        stem = outbox / _slug(message.key)
        stem.with_suffix(".txt").write_text(message.text + "\n", encoding="utf-8")
        stem.with_suffix(".html").write_text(message.html + "\n", encoding="utf-8")
        stem.with_suffix(".json").write_text(
            json.dumps(
                {
                    "version": "1.0",
                    "title": message.title,
                    "message": message.text,
                    "type": message.notify_type,
                    "attachments": [p.name for p in message.attachments],
                },
                ensure_ascii=False,
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
    except OSError as exc:
        return Delivery("failed", 1, f"the outbox could not be written ({type(exc).__name__})")
    return Delivery("written", 1)
