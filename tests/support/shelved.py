"""What the session's shelved warehouses share: they are read-only, and a digest of their files
tells whether a test wrote to one anyway (file modes do not stop root)."""

from __future__ import annotations

import hashlib
import shutil
import stat
from pathlib import Path

# What a copy leaves out: dbt's and dlt's logs and dbt's parse cache (keyed to the world's own path).
NOT_COPIED = shutil.ignore_patterns("logs", "target", "*.log")


class SharedWorldWritten(AssertionError):
    """A test wrote to a shared world instead of its copy."""


def digests(root: Path) -> str:
    """One line a file: its SHA-256 and its path under `root`."""
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(root)}")
    return "\n".join(lines)


def make_read_only(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    root.chmod(root.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
