"""Write failures (disk full, quota, read-only disk) turned into one sentence that says what to free.

Why here and not at each writer: DuckDB, dlt, dbt, XlsxWriter and logging each report a full
disk in their own shape (an OSError, a duckdb.IOException inside dlt's PipelineStepFailed, a
line in dbt's output). Every writer already leaves nothing half-written (DuckDB rolls back, dlt
keeps its package for the next run, the report is written to a temporary file and renamed), so
the user needs only to be told which disk to free and how much space is left there.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
WRITE_PHRASES = (
    "no space left on device",
    "disk quota exceeded",
    "file too large",
    "read-only file system",
    "not enough space",
)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error, its causes and contexts, and dlt's wrapped step exception, each once."""
    seen: set[int] = set()
    todo: list[BaseException] = [error]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nested in (current.__cause__, current.__context__, getattr(current, "exception", None)):
            if isinstance(nested, BaseException):
                todo.append(nested)


def is_write_failure_text(text: str) -> bool:
    lowered = text.lower()
    return any(phrase in lowered for phrase in WRITE_PHRASES)


def _existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_space(path: Path) -> int:
    try:
        return shutil.disk_usage(_existing(path)).free
    except OSError:
        return -1


def human_bytes(n: int) -> str:
    if n < 0:
        return "unknown"
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def _candidates(settings: Any) -> list[tuple[str, Path]]:
    return [
        ("DMF_DUCKDB_PATH", Path(settings.duckdb_path).parent),
        ("DMF_STATE_DIR", Path(settings.state_dir)),
        ("DMF_REPORTS_DIR", Path(settings.reports_dir)),
    ]


def _where(filename: str | None, text: str, settings: Any) -> tuple[str, Path]:
    """The setting and directory the failed write was in: named by the error when it says,
    else the configured directory with the least free space (the full one)."""
    candidates = _candidates(settings)
    for hint in (filename or "", text):
        matches = [(name, path) for name, path in candidates if hint and str(path) in hint]
        if matches:
            return max(matches, key=lambda item: len(str(item[1])))
    return min(candidates, key=lambda item: free_space(item[1]))


def write_failure_message(
    settings: Any, *, filename: str | None = None, text: str = "", reason: str = "no space left on the disk"
) -> str:
    name, path = _where(filename, text, settings)
    return (
        f"could not write to {path} ({name}): {reason}, {human_bytes(free_space(path))} free there; "
        "free space on that disk (or point the setting at a larger one) and run again: "
        "nothing half-written was kept and the next run picks up where this one stopped."
    )


def write_failure(error: BaseException, settings: Any) -> str | None:
    """The one-line message when `error` is a failed write, else None."""
    for current in _chain(error):
        if isinstance(current, OSError) and current.errno in WRITE_ERRNOS:
            reason = (current.strerror or "the write failed").lower()
            filename = current.filename if isinstance(current.filename, str) else None
            return write_failure_message(settings, filename=filename, text=str(current), reason=reason)
    for current in _chain(error):
        text = str(current)
        if is_write_failure_text(text):
            phrase = next(p for p in WRITE_PHRASES if p in text.lower())
            return write_failure_message(settings, text=text, reason=phrase)
    return None
