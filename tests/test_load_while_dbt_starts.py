"""`dmf run` loads the day in a forked child while it imports dbt and parses the project.

Each case runs in a new Python process, as cron starts `dmf run`: the pytest worker has other
threads (xdist's), and with other threads alive the two steps run one after the other. The load
and the parse are stand-ins that record which process ran them; the real ones run in the
`dmf run` child processes of test_gate_rejection_recording, test_disk_full and test_run_lock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parents[1]

# The child: patches the load and the parse, calls load_while_dbt_starts, prints what came back.
CHILD = """
import gc, json, os, sys, threading, time
from datetime import date
from pathlib import Path

import pipelines.mfds.load as load_module
import dmf.run as run
from settings.config import load_settings
from settings.errors import DmfError

meet = Path(sys.argv[1])  # each step waits for the other's mark: only steps that overlap both finish
case = sys.argv[2]


def wait_for(name):
    deadline = time.monotonic() + 20
    while not (meet / name).exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


class Unpicklable(Exception):
    def __init__(self, what, why):  # pickle calls __init__ with args alone: it cannot come back
        super().__init__(f"{what}: {why}")


def fake_load(settings, as_of, *, service_key=None):
    (meet / "load-started").touch()
    met = wait_for("parse-started") if case == "overlap" else None
    if case == "dmf_error":
        raise DmfError("the MFDS list could not be written: disk full")
    if case == "unpicklable":
        raise Unpicklable("socket", "gone")
    if case == "killed":
        os._exit(137)  # as the OOM killer or kill -9 leaves it: no result, no exception
    return {
        "pid": os.getpid(), "met": met, "service_key": service_key, "as_of": as_of.isoformat(), "collector": gc.isenabled()
    }


def fake_parse(settings):
    (meet / "parse-started").touch()
    met = wait_for("load-started") if case == "overlap" else None
    return {"pid": os.getpid(), "met": met}


load_module.load_day = fake_load
run.parse_project = fake_parse
if case == "threaded":
    threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
if case == "collector_off":  # as run_day leaves it for `dmf run`
    gc.disable()
try:
    loaded, parsed = run.load_while_dbt_starts(load_settings({}), date(2026, 12, 1), "key")
except Exception as error:
    print(json.dumps({"error": type(error).__name__, "message": str(error), "pid": os.getpid()}))
else:
    print(json.dumps({"loaded": loaded, "parsed": parsed, "pid": os.getpid(), "collector": gc.isenabled()}))
"""


def run_case(tmp_path: Path, case: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHILD), str(tmp_path), case],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_load_runs_in_a_child_process_while_this_process_parses(tmp_path):
    result = run_case(tmp_path, "overlap")

    assert result["loaded"]["pid"] != result["pid"], "the load ran in the process that parses"
    assert result["parsed"]["pid"] == result["pid"], "the parse must stay in the process that builds"
    assert result["loaded"]["met"] and result["parsed"]["met"], "the two steps did not run at the same time"
    assert result["loaded"]["service_key"] == "key" and result["loaded"]["as_of"] == "2026-12-01"


def test_the_load_collects_garbage_in_its_child_while_the_building_process_leaves_it_off(tmp_path):
    result = run_case(tmp_path, "collector_off")

    assert result["loaded"]["pid"] != result["pid"]
    assert result["loaded"]["collector"] is True and result["collector"] is False


def test_a_load_error_comes_back_whole_from_the_child(tmp_path):
    result = run_case(tmp_path, "dmf_error")

    assert result["error"] == "DmfError"
    assert result["message"] == "the MFDS list could not be written: disk full"


def test_an_error_that_cannot_travel_back_comes_back_as_its_type_and_message(tmp_path):
    result = run_case(tmp_path, "unpicklable")

    assert result["error"] == "RuntimeError"
    assert result["message"] == "Unpicklable: socket: gone"


@pytest.mark.fault("`dmf run`'s load process is killed (kill -9, out of memory) while dbt starts")
def test_a_load_process_that_dies_is_one_line_saying_nothing_was_built(tmp_path):
    """The load's child dies without a result: one DmfError line, nothing built, no pool error."""
    result = run_case(tmp_path, "killed")

    assert result["error"] == "DmfError"
    assert result["message"].startswith("the load of 2026-12-01 ended without a result")
    assert "nothing was built" in result["message"]


def test_with_another_thread_alive_the_load_and_the_parse_run_here_in_turn(tmp_path):
    result = run_case(tmp_path, "threaded")

    assert result["loaded"]["pid"] == result["pid"] == result["parsed"]["pid"]
    assert (tmp_path / "load-started").stat().st_mtime_ns <= (tmp_path / "parse-started").stat().st_mtime_ns


def test_the_process_that_builds_imports_neither_the_loader_nor_dlt():
    # dlt's import is 0.4 s of the parent's start before dbt's; only the load's child needs it
    modules = "dmf.cli dmf.run dmf.build enrich.daily enrich.weekly reports.daily reports.weekly notify.day".split()
    probe = f"import importlib, sys; [importlib.import_module(m) for m in {modules!r}]; " + (
        "print(sorted(m for m in sys.modules if m == 'dlt' or m.startswith(('dlt.', 'pipelines'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_dmf_run_leaves_the_cyclic_collector_off_and_a_day_in_a_longer_process_does_not():
    """`dmf run` ends its process once the day is done (end_process), so its collections after dbt
    would only free what the exit drops (dmf.run.run_day); demo and tests run several days in one
    process and keep collecting. The day itself is a stand-in: the real one runs in test_run_lock."""
    probe = textwrap.dedent(
        """
        import argparse, gc, json
        from datetime import date
        import dmf.cli as cli
        import dmf.run as run
        from settings.config import load_settings

        run._run_day = lambda settings, as_of, **kwargs: run.DayOutcome(as_of, "accepted", None, 0)
        import notify.day
        notify.day.notify_day = lambda *a, **k: type("N", (), {"summary": lambda self: "", "recorded": False})()
        seen = {}
        run.run_day(load_settings({}), date(2026, 12, 1), echo=lambda line: None)
        seen["a day in a longer process"] = gc.isenabled()
        cli.dispatch(argparse.Namespace(command="run", as_of=date(2026, 12, 1)), load_settings({}))
        seen["dmf run"] = gc.isenabled()
        print(json.dumps(seen))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"a day in a longer process": True, "dmf run": False}
