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
from pathlib import Path
from typing import Any

from dmf_watch.core.errors import error_chain

WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
WRITE_PHRASES = (
    "no space left on device",
    "disk quota exceeded",
    "file too large",
    "read-only file system",
    "not enough space",
)


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


#: Below this much free space a disk counts as the full one, whatever the error's text named.
NEARLY_FULL_BYTES = 16 * 2**20


def _candidates(settings: Any) -> list[tuple[str, Path]]:
    found = [
        ("DMF_DUCKDB_PATH", Path(settings.duckdb_path).parent),
        ("DMF_STATE_DIR", Path(settings.state_dir)),
        ("DMF_REPORTS_DIR", Path(settings.reports_dir)),
    ]
    backup_dir = getattr(settings, "backup_dir", None)
    if backup_dir is not None:
        found.append(("DMF_BACKUP_DIR", Path(backup_dir)))
    return found


def mount_point(path: Path) -> Path:
    """The mount point of the file system `path` is on (the disk to free, in `df`'s words)."""
    path = _existing(path).resolve()
    try:
        device = path.stat().st_dev
        while path != path.parent and path.parent.stat().st_dev == device:
            path = path.parent
    except OSError:
        pass
    return path


def _where(filename: str | None, text: str, settings: Any) -> tuple[str, Path]:
    """The setting and directory the failed write was in: named by the error when it says,
    else the configured directory with the least free space (the full one)."""
    candidates = _candidates(settings)
    fullest = min(candidates, key=lambda item: free_space(item[1]))
    for hint in (filename or "", text):
        matches = [(name, path) for name, path in candidates if hint and str(path) in hint]
        if matches:
            named = max(matches, key=lambda item: len(str(item[1])))
            # dlt names its own working file (in the state dir) when DuckDB's write failed on the
            # warehouse's disk: a named disk with room is not the full one when another has none
            if free_space(named[1]) >= NEARLY_FULL_BYTES and 0 <= free_space(fullest[1]) < NEARLY_FULL_BYTES:
                return fullest
            return named
    return fullest


def write_failure_message(
    settings: Any, *, filename: str | None = None, text: str = "", reason: str = "no space left on the disk"
) -> str:
    name, path = _where(filename, text, settings)
    return (
        f"could not write to {path} ({name}): {reason}, {human_bytes(free_space(path))} free there "
        f"(the file system mounted at {mount_point(path)}); "
        "free space on that disk (or point the setting at a larger one) and run again: "
        "nothing half-written was kept and the next run picks up where this one stopped."
    )


def write_failure(error: BaseException, settings: Any) -> str | None:
    """The one-line message when `error` is a failed write, else None."""
    for current in error_chain(error):
        if isinstance(current, OSError) and current.errno in WRITE_ERRNOS:
            reason = (current.strerror or "the write failed").lower()
            filename = current.filename if isinstance(current.filename, str) else None
            return write_failure_message(settings, filename=filename, text=str(current), reason=reason)
    for current in error_chain(error):
        text = str(current)
        if is_write_failure_text(text):
            phrase = next(p for p in WRITE_PHRASES if p in text.lower())
            return write_failure_message(settings, text=text, reason=phrase)
    return None
