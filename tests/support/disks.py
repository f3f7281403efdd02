"""Real small and read-only file systems for the write-failure tests (tmpfs mounts).

Why mounts: a full or read-only disk is only real when the kernel says so (ENOSPC, EROFS);
these tests need root or CAP_SYS_ADMIN, which the project's CI and test machines have. When
mounting is not permitted the test fails and says so: it is never skipped silently.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(target: Path, options: str) -> None:
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"these tests mount a tmpfs to get a real ENOSPC/EROFS and could not: {done.stderr.strip()}")


def _umount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True)


@contextmanager
def tmpfs(target: Path, size: str, *, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `target` for the duration of the block."""
    _mount(target, f"size={size},mode=0755" + (",ro" if read_only else ""))
    try:
        yield target
    finally:
        _umount(target)


def fill(directory: Path, name: str = "filler.bin") -> Path:
    """Write into `directory` until its file system is full; returns the filler file."""
    path = directory / name
    chunk = b"\0" * (1 << 20)
    with path.open("wb", buffering=0) as handle:
        while True:
            try:
                handle.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
        for size in (65536, 4096, 512, 1):  # the last blocks too
            while True:
                try:
                    handle.write(b"\0" * size)
                except OSError:
                    break
    os.sync()
    return path
