"""An earlier release of DMF Watch, installed beside this one: a `git worktree` of an older commit
of this repository with its own venv, for the tests of upgrading in place.

The venv is built once per commit and kept (`DMF_RELEASE_CACHE`, else the system's temporary
folder, in `dmf-watch-release-<commit>/`), so a second session reuses it: building it costs a
`pip install -e` from this machine's package index (about 30 s), reusing it nothing. Sessions
and xdist workers that need it at once take turns through a lock file beside it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]


def release_dir(commit: str) -> Path:
    root = Path(os.environ.get("DMF_RELEASE_CACHE") or tempfile.gettempdir())
    return root / f"dmf-watch-release-{commit[:12]}"


def installed_release(commit: str) -> Path:
    """The `dmf` executable of `commit`, its checkout and venv made first if no session made them."""
    folder = release_dir(commit)
    folder.parent.mkdir(parents=True, exist_ok=True)
    dmf = folder / "venv" / "bin" / "dmf"
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        source = folder / "src"
        if (folder / "ready").is_file() and _imports(folder / "venv", source):
            return dmf
        # the venv is an editable install: a checkout deleted by a cleaner of the temporary
        # folder leaves a `dmf` that cannot import, so the checkout and venv are made again
        (folder / "ready").unlink(missing_ok=True)
        _git("worktree", "prune")
        if not (source / "pyproject.toml").is_file():
            shutil.rmtree(source, ignore_errors=True)
            _git("worktree", "add", "--detach", "--force", str(source), commit)
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
        install = subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "--no-input", "-e", str(source)],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if install.returncode != 0:
            raise RuntimeError(f"pip could not install the release {commit[:12]}: {install.stderr[-2000:]}")
        (folder / "ready").write_text(commit + "\n", encoding="utf-8")
    return dmf


def _imports(venv: Path, source: Path) -> bool:
    """Whether the release's venv still imports `dmf` from its checkout."""
    if not (venv / "bin" / "dmf").is_file() or not (source / "pyproject.toml").is_file():
        return False
    done = subprocess.run([str(venv / "bin" / "python"), "-c", "import dmf"], capture_output=True)
    return done.returncode == 0


def _git(*args: str) -> None:
    done = subprocess.run(["git", "-C", str(PROJECT_DIR), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
