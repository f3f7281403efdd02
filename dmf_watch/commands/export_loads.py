"""`dmf export-loads DIR`: every stored day as a dated dump, plus people's decisions on loads.

Why: the raw layer is the whole truth of the warehouse (the marts are rebuilt from it), so
these files are an audit trail, a backup that any engine reads, and the way to move a
warehouse: `dmf backfill DIR` on another warehouse (`DMF_WAREHOUSE=postgres`) stores the
same loads and the same decisions, and its build gives the same events.

What is written, for each day with a complete load (the latest complete attempt of the day,
the one the build judges):
- `YYYY-MM-DD.jsonl`: the day's list in the order it was served, one raw record a line, the
  nine source fields under the API's own names with their stored values byte for byte (nulls,
  "", CR/LF and spaces kept); a record the list carried twice is written as many times as it
  was listed (`repeat_count`), so the backfill counts it again;
- `load_decisions.jsonl`: every `dmf accept-load` / `dmf reject-load` on an exported load, in
  the order recorded (the backfill gives each to its day's imported load); a decision on an
  attempt a later one replaced decided nothing that is exported.
Incomplete and failed attempts are not exported: they never publish anything. Days are
written oldest first into a folder that holds no dump yet; nothing is overwritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.pipelines.mfds.dumps import DECISIONS_FILE
from dmf_watch.pipelines.mfds.settings import (
    COLUMN_NAMES,
    MEMBERSHIP_TABLE,
    RUNS_TABLE,
    SOURCE_FIELDS,
    VERSIONS_TABLE,
)

DECISIONS_TABLE = "load_decisions"
Echo = Callable[[str], None]


def _day_loads(con: warehouse.Connection, raw: str) -> list[tuple[date, str]]:
    """The latest complete attempt of each day, oldest day first."""
    return [
        (row[0], row[1])
        for row in con.execute(
            "select as_of_date, load_id from ("
            "  select as_of_date, load_id, row_number() over ("
            "    partition by as_of_date"
            "    order by attempt_seq desc nulls last, finished_at desc, load_id desc) as latest"
            f"  from {raw}.{RUNS_TABLE} where fetch_status = 'complete') as attempts "
            "where latest = 1 order by as_of_date"
        ).fetchall()
    ]


def _records(con: warehouse.Connection, raw: str, load_id: str) -> list[tuple]:
    """(first position, times listed, the nine values) of each distinct record, in list order."""
    return con.execute(
        f"select m.item_position, m.repeat_count, {', '.join('v.' + c for c in COLUMN_NAMES)} "
        f"from {raw}.{MEMBERSHIP_TABLE} as m join {raw}.{VERSIONS_TABLE} as v on v.row_hash = m.row_hash "
        "where m.load_id = ? order by m.item_position",
        [load_id],
    ).fetchall()


def listed(records: list[tuple]) -> list[tuple]:
    """The list as served: each record at its first position, and its repeats in the gaps the
    repeats left between first positions (a repeat fills the first gap after its record), the
    rest at the end; so a backfill of the dump gives every record its original position."""
    served: list[tuple] = []
    pending: list[list] = []  # [repeats left, values], oldest record first
    for position, repeat_count, *values in records:
        while len(served) < position and pending:
            served.append(pending[0][1])
            pending[0][0] -= 1
            if not pending[0][0]:
                pending.pop(0)
        served.append(tuple(values))
        if (repeat_count or 1) > 1:
            pending.append([repeat_count - 1, tuple(values)])
    served.extend(values for left, values in pending for _ in range(left))
    return served


def _decisions(con: warehouse.Connection, raw: str) -> list[dict]:
    if not warehouse.table_exists(con, raw, DECISIONS_TABLE):
        return []
    found = warehouse.rows(
        con,
        "select as_of_date, load_id, decision, decided_by, reason, decided_at "
        f"from {raw}.{DECISIONS_TABLE} order by decision_seq nulls first, decided_at",
    )
    return [
        {
            **row,
            "as_of_date": row["as_of_date"].isoformat(),
            "decided_at": row["decided_at"].isoformat() if isinstance(row["decided_at"], datetime) else None,
        }
        for row in found
    ]


def _write_lines(path: Path, lines: list[str]) -> None:
    """Written beside, then renamed: a dump cut short by a full disk is never left under its name."""
    partial = path.with_name(f".{path.name}.partial")
    with partial.open("w", encoding="utf-8", newline="") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.replace(partial, path)


def export_loads(settings: Settings, folder: Path, *, echo: Echo = print) -> int:
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder} is a file; give a folder to write the dumps into.")
    if folder.is_dir() and any(p.suffix == ".jsonl" for p in folder.iterdir()):
        raise ConfigError(f"{folder} already holds dumps; export into an empty folder (nothing is overwritten).")
    if not warehouse.exists(settings):
        raise DmfError(f"the warehouse {warehouse.describe(settings)} does not exist; nothing to export.")
    raw = warehouse.schemas(settings).raw
    folder.mkdir(parents=True, exist_ok=True)
    with warehouse.connect(settings, read_only=True) as con:
        if not warehouse.holds_a_load(con, raw):
            raise DmfError(f"the warehouse {warehouse.describe(settings)} holds no load; nothing to export.")
        days = _day_loads(con, raw)
        for as_of, load_id in days:
            records = _records(con, raw, load_id)
            lines = [json.dumps(dict(zip(SOURCE_FIELDS, values)), ensure_ascii=False) for values in listed(records)]
            _write_lines(folder / f"{as_of.isoformat()}.jsonl", lines)
            echo(f"{as_of}  load {load_id}  {len(records):,} records, {len(lines):,} lines")
        exported = {load_id for _, load_id in days}
        decisions = [d for d in _decisions(con, raw) if d["load_id"] in exported]
    _write_lines(folder / DECISIONS_FILE, [json.dumps(d, ensure_ascii=False) for d in decisions])
    echo(
        f"exported {len(days)} day(s) and {len(decisions)} decision(s) to {folder}; "
        f"`dmf backfill {folder}` stores them in another warehouse"
    )
    return 0


COMMANDS = (
    Command(
        "export-loads",
        "write every stored day as a dated dump (and people's decisions) for `dmf backfill` elsewhere",
        lambda args, settings: export_loads(settings, Path(args.folder)),
        locks_warehouse=True,
        arguments=lambda parser: parser.add_argument(
            "folder", metavar="DIR", help="an empty folder (created if missing)"
        ),
    ),
)
