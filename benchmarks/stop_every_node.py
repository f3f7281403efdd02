"""Stop one `dmf build` at every node boundary and check what readers see: the marts, `dmf status`
and `dmf report` equal the previous build's after every stop.

Why: issue 39 asks that a build stopped anywhere (SIGTERM, `kill -9`, the deadline) leave every
reader the last complete build. The test suite (tests/commands/test_stopped_build.py) stops a
build at three chosen boundaries; this stops it after the k-th node for every k (or every
`--stride`-th), with each signal, and prints one row per stop: the node dbt had just finished,
the exit code, whether every published mart held exactly the rows it held before, whether
`dmf status` printed the same table and whether `dmf report` rendered the same cells. A world
of two simulated days is built through the real daily job, a third day loaded and left unbuilt,
so that each build has a day to publish; after the stops a build runs to its end and must
change the marts (else the comparison proved nothing).

Run:  python benchmarks/stop_every_node.py [--size 300] [--stride 1] [--from 0] [--to N] [--warehouse postgres]
      (postgres: the server the libpq variables name, schemas prefixed `stopnode`)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import date, timedelta
from pathlib import Path

import openpyxl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dmf_watch.commands import cli
from dmf_watch.commands.run import run_day
from dmf_watch.core import warehouse
from dmf_watch.core.config import load_settings
from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.simulator.registry import DEFAULT_SEED, SyntheticRegistry
from dmf_watch.simulator.server import SimulatorServer

KEY = "bench-key"
DAY = date(2026, 11, 2)
FINISHED = re.compile(r"\] \[[^\]]*\]: (\d+) of (\d+) (OK|PASS|WARN|ERROR|FAIL|SKIP)\S* (.*?)(?: \.+|\s+\[)")
COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def marts_digest(settings) -> str:
    """One hash of every row of every published mart, in a stable order."""
    digest = hashlib.sha256()
    with warehouse.connect(settings, read_only=True) as con:
        marts = con.schemas.marts
        names = con.execute(
            "select table_name from information_schema.tables where table_schema = ? order by table_name", [marts]
        ).fetchall()
        for (name,) in names:
            rows = sorted(map(repr, con.execute(f"select * from {marts}.{name}").fetchall()))
            digest.update(name.encode() + b"\0" + "\n".join(rows).encode() + b"\0")
    return digest.hexdigest()[:12]


def dmf(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args], env=env, capture_output=True, text=True
    )


def in_process(*args: str) -> tuple[int, str, str]:
    """`dmf` run in this process (the environment already points it at the world): a reader
    needs no dbt, and a fresh interpreter for each of several hundred reads costs minutes."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def status_text() -> str:
    code, out, err = in_process("status")
    return f"exit {code}\n{out}{err}"


def report_cells(as_of: date) -> str:
    """Every cell of every sheet of `dmf report` for `as_of`, or its refusal."""
    code, out, err = in_process("report", "--as-of", as_of.isoformat())
    if code != 0:
        return f"exit {code}: {err.strip()}"
    with warnings.catch_warnings():  # openpyxl reads past the sparklines XlsxWriter writes, and says so
        warnings.simplefilter("ignore", UserWarning)
        book = openpyxl.load_workbook(out.strip().splitlines()[-1], read_only=True)
        cells = [f"{sheet.title}!{row}" for sheet in book.worksheets for row in sheet.iter_rows(values_only=True)]
    book.close()
    return "\n".join(cells)


def finished_nodes(log: Path) -> list[tuple[str, bool]]:
    """Each line dbt logged as finished (hooks and nodes, in order), and whether it was the
    build's last: its last on-run-end hook, the publish (macros/publish_marts.sql)."""
    if not log.exists():
        return []
    with log.open("rb") as written:
        text = COLOURS.sub("", written.read().decode("utf-8", "replace"))
    return [
        (m.group(4).strip(), "on-run-end" in m.group(4) and m.group(1) == m.group(2)) for m in FINISHED.finditer(text)
    ]


def build_stopped_after(env: dict[str, str], log: Path, k: int, sig: int) -> tuple[int, str, bool]:
    """`dmf build` in a child, sent `sig` once dbt logged its k-th finished line; and whether the
    build was whole by then (its last line logged, or it ended before its k-th)."""
    log.unlink(missing_ok=True)  # a fresh log for this build (dbt rotates its log at 10 MB)
    child = subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", "build"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    node, whole = "(finished first)", True
    while child.poll() is None:
        done = finished_nodes(log)
        if len(done) >= k:
            child.send_signal(sig)
            node, whole = done[k - 1] if k else ("(before any node)", False)
            break
        time.sleep(0.005)
    _, err = child.communicate()
    if node == "(finished first)" and child.returncode != 0:  # it failed on its own: say why
        node += " " + (err.strip().splitlines() or ["no output"])[-1][:160]
    return child.returncode, node, whole


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument(
        "--from", dest="first", type=int, default=0, help="the first line to stop after (to resume a walk)"
    )
    parser.add_argument("--to", dest="last", type=int, help="the last line to stop after (default: up to the publish)")
    parser.add_argument("--warehouse", choices=("duckdb", "postgres"), default="duckdb")
    args = parser.parse_args()

    registry = SyntheticRegistry(seed=DEFAULT_SEED, size=args.size, start_date=DAY)
    with tempfile.TemporaryDirectory(prefix="dmf-stop-") as tmp, SimulatorServer(registry, service_key=KEY) as sim:
        root = Path(tmp)
        settings = load_settings({}).with_paths(
            duckdb_path=root / "data" / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
        )
        settings = dataclasses.replace(
            settings,
            api_base_url=sim.base_url,
            agy_binary=str(root / "no-agy"),
            warehouse=args.warehouse,
            schema_prefix="stopnode" if args.warehouse == "postgres" else "",
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
        env.update(
            DMF_DUCKDB_PATH=str(settings.duckdb_path),
            DMF_STATE_DIR=str(settings.state_dir),
            DMF_REPORTS_DIR=str(settings.reports_dir),
            DMF_AI_DISABLED="1",
            DMF_WAREHOUSE=args.warehouse,
            DMF_SCHEMA_PREFIX=settings.schema_prefix,
        )
        os.environ.clear()
        os.environ.update(env)  # for the readers run in this process
        for n in range(2):
            sim.set_day(DAY + timedelta(days=n))
            run_day(settings, DAY + timedelta(days=n), service_key=KEY, echo=lambda line: None)
        sim.set_day(DAY + timedelta(days=2))
        load_day(settings, DAY + timedelta(days=2), service_key=KEY)

        log = settings.state_dir / "logs" / "dbt.log"
        before = marts_digest(settings)
        published = DAY + timedelta(days=1)
        status_before, report_before = status_text(), report_cells(published)
        stops = differing = 0
        print(f"{'k':>4}  {'signal':<7}  {'exit':>4}  marts      status     report     line dbt had just finished")
        k, whole = args.first, None
        while whole is None and (args.last is None or k <= args.last):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                code, node, complete = build_stopped_after(env, log, k, sig)
                if complete:  # past the publish: the new build is whole, and readers see it
                    whole = f"{k:>4}  {signal.Signals(sig).name:<7}  {code:>4}  published  {node}"
                    break
                same = (
                    marts_digest(settings) == before,
                    status_text() == status_before,
                    report_cells(published) == report_before,
                )
                stops += 1
                differing += not all(same)
                verdicts = "  ".join(f"{'same' if held else 'CHANGED':<9}" for held in same)
                print(f"{k:>4}  {signal.Signals(sig).name:<7}  {code:>4}  {verdicts}  {node}", flush=True)
            k += args.stride
        print(whole or f"(stopped after line {args.last}, as --to asks)")
        finished = dmf(env, "build")
        changed = marts_digest(settings) != before
        if finished.returncode != 0:
            print(f"the build run to its end failed: {(finished.stderr.strip().splitlines() or ['no output'])[-1]}")
        print(
            f"\n{stops} stops before the publish (stride {args.stride}, every line dbt logs as finished: hooks, "
            f"models, tests) on {args.warehouse}: {differing} left the marts, status or report changed; "
            f"past the publish the marts {'changed' if changed else 'did NOT change'} (the new build, whole); "
            f"a build after it exited {finished.returncode}"
        )
        if args.warehouse == "postgres":
            with warehouse.connect(settings) as con:
                for (schema,) in con.execute(
                    "select schema_name from information_schema.schemata where schema_name like 'stopnode\\_%'"
                ).fetchall():
                    con.execute(f"drop schema {schema} cascade")
    return 0 if differing == 0 and changed and finished.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
