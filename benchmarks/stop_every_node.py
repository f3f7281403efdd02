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

Run:  python benchmarks/stop_every_node.py [--size 300] [--stride 1] [--warehouse postgres]
      (postgres: the server the libpq variables name, schemas prefixed `stopnode`)
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
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


def status_text(env: dict[str, str]) -> str:
    shown = dmf(env, "status")
    return f"exit {shown.returncode}\n{shown.stdout}{shown.stderr}"


def report_cells(env: dict[str, str], as_of: date) -> str:
    """Every cell of every sheet of `dmf report` for `as_of`, or its refusal."""
    rendered = dmf(env, "report", "--as-of", as_of.isoformat())
    if rendered.returncode != 0:
        return f"exit {rendered.returncode}: {rendered.stderr.strip()}"
    with warnings.catch_warnings():  # openpyxl reads past the sparklines XlsxWriter writes, and says so
        warnings.simplefilter("ignore", UserWarning)
        book = openpyxl.load_workbook(rendered.stdout.strip().splitlines()[-1], read_only=True)
    cells = [f"{sheet.title}!{row}" for sheet in book.worksheets for row in sheet.iter_rows(values_only=True)]
    book.close()
    return "\n".join(cells)


def finished_nodes(log: Path) -> list[str]:
    if not log.exists():
        return []
    with log.open("rb") as written:
        text = COLOURS.sub("", written.read().decode("utf-8", "replace"))
    return [match.group(4).strip() for match in FINISHED.finditer(text)]


def build_stopped_after(env: dict[str, str], log: Path, k: int, sig: int) -> tuple[int, str]:
    """`dmf build` in a child, sent `sig` once dbt logged its k-th finished node."""
    log.unlink(missing_ok=True)  # a fresh log for this build (dbt rotates its log at 10 MB)
    child = subprocess.Popen(
        [sys.executable, "-m", "dmf_watch.commands.cli", "build"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    node = "(finished first)"
    while child.poll() is None:
        done = finished_nodes(log)
        if len(done) >= k:
            child.send_signal(sig)
            node = done[k - 1] if k else "(before any node)"
            break
        time.sleep(0.005)
    _, err = child.communicate()
    if node == "(finished first)" and child.returncode != 0:  # it failed on its own: say why
        node += " " + (err.strip().splitlines() or ["no output"])[-1][:160]
    return child.returncode, node


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--stride", type=int, default=1)
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
        for n in range(2):
            sim.set_day(DAY + timedelta(days=n))
            run_day(settings, DAY + timedelta(days=n), service_key=KEY, echo=lambda line: None)
        sim.set_day(DAY + timedelta(days=2))
        load_day(settings, DAY + timedelta(days=2), service_key=KEY)

        log = settings.state_dir / "logs" / "dbt.log"
        before = marts_digest(settings)
        published = DAY + timedelta(days=1)
        status_before, report_before = status_text(env), report_cells(env, published)
        total = None
        stops = differing = 0
        print(f"{'k':>4}  {'signal':<7}  {'exit':>4}  marts      status     report     node just finished")
        k = 0
        while (total is None and k < 1000) or (total is not None and k <= total):
            for sig in (signal.SIGTERM, signal.SIGKILL):
                code, node = build_stopped_after(env, log, k, sig)
                if total is None:
                    counted = [
                        int(m.group(2))
                        for m in FINISHED.finditer(COLOURS.sub("", (log.read_text("utf-8") if log.exists() else "")))
                    ]
                    total = max(counted) if counted else None  # stopped before dbt counted its nodes
                same = (
                    marts_digest(settings) == before,
                    status_text(env) == status_before,
                    report_cells(env, published) == report_before,
                )
                stops += 1
                differing += not all(same)
                verdicts = "  ".join(f"{'same' if held else 'CHANGED':<9}" for held in same)
                print(f"{k:>4}  {signal.Signals(sig).name:<7}  {code:>4}  {verdicts}  {node}", flush=True)
            k += args.stride
        finished = dmf(env, "build")
        changed = marts_digest(settings) != before
        if finished.returncode != 0:
            print(f"the build run to its end failed: {(finished.stderr.strip().splitlines() or ['no output'])[-1]}")
        print(
            f"\n{stops} stops over {total or 0} nodes (stride {args.stride}) on {args.warehouse}: "
            f"{differing} left the marts, status or report changed; the build run to its end exited {finished.returncode} "
            f"and {'changed' if changed else 'did NOT change'} them"
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
