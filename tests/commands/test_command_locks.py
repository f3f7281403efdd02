"""Every `dmf` command declares whether it takes the warehouse lock (commands/command.py). These
walk every command through the real entry point and check that the lock it holds while it runs
is the one it declares, that only commands with a stated reason run without it, and that cron's
`dmf run` imports none of the other commands."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dmf_watch.commands import cli
from dmf_watch.core.lock import lock_path

# The commands that run without the lock, and why each may: none writes the warehouse, and the
# readers must answer while a morning holds it. Any other command takes the lock; a new command
# that should not is added here, with its reason, where a reviewer sees it.
RUN_BESIDE_A_MORNING = {
    "doctor": "reads, and checks the setup while a morning runs",
    "status": "reads, and tells what a running morning is doing",
    "history": "reads one registration's timeline",
    "registry": "reads the registry of a past day",
    "changes": "reads the net change between two days",
    "evidence": "reads one registration's events and writes files outside the warehouse",
    "seeds": "reads the seed CSV files, never the warehouse",
    "sim": "never opens the warehouse",
}

# The fewest arguments each command accepts (its run is replaced: nothing is loaded or built).
ARGUMENTS = {
    "accept-load": ["--as-of", "2026-10-01", "--by", "kim", "--reason", "checked"],
    "reject-load": ["--as-of", "2026-10-01", "--by", "kim", "--reason", "checked"],
    "backfill": ["{dumps}"],
    "export-loads": ["{tmp}/export"],
    "seeds": ["check"],
    "history": ["--permit-no", "1"],
    "registry": ["--as-of", "2026-10-01"],
    "changes": ["--since", "2026-10-01"],
    "evidence": ["--permit-no", "1", "--out", "{tmp}/evidence"],
    "proposals": ["list"],
    "sim": ["serve"],
}


def _lock_seen(path: Path) -> str | None:
    """The command line holding the flock on `path`, or None when nobody holds it (a second
    open file description conflicts with the holder's, in this process too)."""
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return json.loads(path.read_text(encoding="utf-8"))["command"]
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


@pytest.mark.parametrize("name", sorted(cli.COMMAND_MODULES))
def test_each_command_holds_the_lock_it_declares_while_it_runs(name, env, monkeypatch, capsys):
    (env / "dumps").mkdir()
    (env / "dumps" / "2026-10-01.jsonl").write_text("", encoding="utf-8")
    real_settings = cli.load_settings
    # the demo locks a warehouse under the project; this one lives in the test's folder
    monkeypatch.setattr(cli, "load_settings", lambda: dataclasses.replace(real_settings(), project_dir=env))
    original = cli.declared
    declared = original(name)
    seen: dict[str, str | None] = {}

    def probe(args, settings):
        target = declared.lock_target(settings) if declared.lock_target else settings
        seen["holder"] = _lock_seen(lock_path(target.duckdb_path))
        return 0

    monkeypatch.setattr(cli, "declared", lambda n: dataclasses.replace(original(n), run=probe))
    argv = [name, *(a.format(tmp=env, dumps=env / "dumps") for a in ARGUMENTS.get(name, []))]
    assert cli.main(argv) == 0, capsys.readouterr()
    assert "holder" in seen, "the command did not run"
    if declared.locks_warehouse:
        assert seen["holder"] is not None and seen["holder"].startswith(f"dmf {name}"), seen
    else:
        assert seen["holder"] is None, seen


def test_only_commands_with_a_stated_reason_run_without_the_lock():
    unlocked = {name for name in cli.COMMAND_MODULES if not cli.declared(name).locks_warehouse}
    assert unlocked == set(RUN_BESIDE_A_MORNING)


def test_every_listed_module_declares_its_command_once():
    for name, module in cli.COMMAND_MODULES.items():
        names = [command.name for command in __import__(module, fromlist=["COMMANDS"]).COMMANDS]
        assert names.count(name) == 1, (module, names)


def test_the_morning_job_imports_no_other_command():
    imported = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from dmf_watch.commands import cli; cli.parser(['run']).parse_args(['run']); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('dmf_watch'))))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    others = {module for name, module in cli.COMMAND_MODULES.items() if name != "run"}
    assert "dmf_watch.commands.run" in imported
    # what a morning uses itself (the build, the backup after it) is imported; nothing else is
    assert not (others - {"dmf_watch.commands.backup"}) & set(imported)
    assert not any(module.startswith("dmf_watch.simulator") for module in imported)
