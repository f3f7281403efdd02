"""Copies of what cannot be fetched again, and a warehouse rebuilt from one.

The live API serves only today's list, so the raw layer (every load as received, the load runs,
the gates' recorded rejections, people's decisions on loads and on AI proposals) exists nowhere
but in the warehouse file. Everything else (staging, the marts) comes back with
`dmf build --full-refresh`. So after each accepted morning `dmf run` copies those tables, under
the warehouse lock it holds, as zstd Parquet files into a dated folder (written as `.partial`
and renamed, so a half-written copy never counts), and keeps the last DMF_BACKUP_KEEP.
`dmf restore` rebuilds a warehouse from one. `warehouse_problem` tells a file DuckDB cannot
read, for `run`, `status` and `doctor` alike, with the way back.

All of this is about the DuckDB file. A PostgreSQL server is backed up and restored by whoever
runs it (pg_dump, their base backups), so on PostgreSQL the morning copy is skipped and
`dmf restore` refuses.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.storage import WRITE_PHRASES, free_space, human_bytes, mount_point

log = logging.getLogger(__name__)

Echo = Callable[[str], None]
MANIFEST = "manifest.json"
PARTIAL = ".partial"
# Tables of the enrichment schema that people wrote and no load or build can give back (the rest
# of it is AI output).
PEOPLES_TABLES = ("proposals", "proposal_decisions")
DUCKDB_HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers
SERVER_BACKUPS = "a PostgreSQL warehouse is backed up and restored by its DBA (pg_dump), not by dmf"


@dataclass(frozen=True)
class Copy:
    path: Path
    created_at: str
    as_of: str | None
    tables: dict[str, int]  # "schema.table" -> rows


def copies(backup_dir: Path) -> list[Copy]:
    """The complete copies in `backup_dir`, newest first."""
    found = []
    for manifest in backup_dir.glob(f"*/{MANIFEST}") if backup_dir.is_dir() else ():
        if manifest.parent.name.endswith(PARTIAL):
            continue
        try:
            info = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found.append(Copy(manifest.parent, info["created_at"], info.get("as_of"), info["tables"]))
    return sorted(found, key=lambda copy: copy.path.name, reverse=True)


def _kept_tables(con: warehouse.Connection) -> list[tuple[str, str]]:
    rows = con.execute(
        "select table_schema, table_name from information_schema.tables where table_type = 'BASE TABLE' order by 1, 2"
    ).fetchall()
    return [
        (schema, table)
        for schema, table in rows
        if schema == con.schemas.raw or (schema == con.schemas.enrichment and table in PEOPLES_TABLES)
    ]


def back_up(settings: Settings, as_of: date | None = None) -> Copy:
    """Copy the raw layer and people's decisions of the warehouse; prune to the last N copies.
    The caller holds the warehouse lock (nothing writes while the copy is taken)."""
    stamp = datetime.now(UTC)
    name = f"{stamp:%Y%m%dT%H%M%SZ}" + (f"-{as_of.isoformat()}" if as_of else "")
    settings.backup_dir.mkdir(parents=True, exist_ok=True)
    partial = settings.backup_dir / (name + PARTIAL)
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    tables: dict[str, int] = {}
    with warehouse.connect(settings, read_only=True) as con:
        for schema, table in _kept_tables(con):
            target = partial / f"{schema}.{table}.parquet"
            con.execute(f'copy (select * from "{schema}"."{table}") to \'{target}\' (format parquet, compression zstd)')
            ((rows,),) = con.execute(f'select count(*) from "{schema}"."{table}"').fetchall()
            tables[f"{schema}.{table}"] = rows
    info = {"created_at": f"{stamp:%Y-%m-%d %H:%M:%S} UTC", "as_of": as_of.isoformat() if as_of else None}
    (partial / MANIFEST).write_text(json.dumps({**info, "tables": tables}, indent=1), encoding="utf-8")
    final = settings.backup_dir / name
    os.replace(partial, final)
    for old in copies(settings.backup_dir)[settings.backup_keep :]:
        shutil.rmtree(old.path, ignore_errors=True)
    return Copy(final, info["created_at"], info["as_of"], tables)


def backup_failure_line(settings: Settings, as_of: date, error: BaseException) -> str:
    """The one line of a backup that failed after a published day: the day stands, the copy of
    what the API can never give again does not, and where to free space."""
    text = str(error)
    # DuckDB wraps the kernel's answer in a JSON blob about an async write: name the answer
    reason = next((phrase for phrase in WRITE_PHRASES if phrase in text.lower()), None) or (
        error.strerror.lower() if isinstance(error, OSError) and error.strerror else None
    )
    reason = reason or (text.splitlines() or [type(error).__name__])[0][:160]
    where = settings.backup_dir
    return (
        f"{as_of} was published, but its backup to {where} (DMF_BACKUP_DIR) failed: {reason}, "
        f"{human_bytes(free_space(where))} free there (the file system mounted at {mount_point(where)}); "
        "free space there or point DMF_BACKUP_DIR at a larger disk: the next accepted morning writes a backup again."
    )


def back_up_after_run(settings: Settings, as_of: date) -> tuple[str, str | None]:
    """back_up for `dmf run`: (the step's line, the failure's one line or None). A failure (a
    full disk) never undoes the published day; `dmf run` alerts it and prints its line."""
    if settings.warehouse != "duckdb":
        log.info("no backup after %s: %s", as_of, SERVER_BACKUPS)
        return f"skipped: {SERVER_BACKUPS}", None
    try:
        copy = back_up(settings, as_of)
    except (OSError, *warehouse.Error) as error:
        log.warning("the backup after %s could not be written to %s: %s", as_of, settings.backup_dir, error)
        return f"backup failed ({str(error).splitlines()[0][:120]}); the run's result stands", backup_failure_line(
            settings, as_of, error
        )
    size = sum(path.stat().st_size for path in copy.path.iterdir())
    log.info("backup %s: %s", copy.path, ", ".join(f"{t} {n}" for t, n in copy.tables.items()))
    return f"{copy.path} ({size / 2**20:.1f} MiB)", None


def restore_advice(backup_dir: Path) -> str:
    found = copies(backup_dir)
    if not found:
        return (
            f"there is no backup in {backup_dir}: move the file aside and run `dmf backfill` with your dumps "
            "(the live API serves only today's list)"
        )
    return (
        f"rebuild it from the newest backup with `dmf restore` ({len(found)} in {backup_dir}, "
        f"newest {found[0].path.name}); the broken file is kept beside it"
    )


# What DuckDB says of a file it cannot trust; a block read deep in a run can say it too.
DAMAGE_WORDS = ("corrupt database file", "not a valid duckdb database file", "checksum")


def warehouse_problem(settings: Settings, error: BaseException | None = None) -> str | None:
    """Why DuckDB cannot use the warehouse file (garbage, a bad checksum, cut short), in one
    sentence with the way back; None when it opens and is whole, or when another process holds
    it (that is the lock's story, not damage), or on PostgreSQL (a server's health is its DBA's).
    `error`: one a run met reading a damaged block the opening check cannot see (DuckDB checks a
    block's checksum when it reads it)."""
    duckdb_path, backup_dir = settings.duckdb_path, settings.backup_dir
    if settings.warehouse != "duckdb" or not duckdb_path.is_file():
        return None
    if error is not None and any(word in str(error).lower() for word in DAMAGE_WORDS):
        what = str(error).splitlines()[0][:160]
        return f"the warehouse {duckdb_path} is damaged ({what}); {restore_advice(backup_dir)}."
    try:
        with warehouse.connect(settings, read_only=True) as con:
            con.execute("select count(*) from information_schema.tables").fetchall()
            ((block_size, used_blocks),) = con.execute(
                "select block_size, used_blocks from pragma_database_size()"
            ).fetchall()
    except warehouse.Error as error:
        text = str(error)
        if "could not set lock" in text.lower() or "conflicting lock" in text.lower():
            return None
        what = text.splitlines()[0][:160]
    else:
        needed = DUCKDB_HEADER_BYTES + used_blocks * block_size
        size = duckdb_path.stat().st_size
        if size >= needed:
            return None
        what = f"the file is cut short: {size:,} bytes where its {used_blocks} blocks need at least {needed:,}"
    return f"the warehouse {duckdb_path} is damaged ({what}); {restore_advice(backup_dir)}."


def restore(settings: Settings, copy_path: Path | None = None, *, echo: Echo = print) -> int:
    """Rebuild the warehouse from a copy (default: the newest): the current file is moved aside,
    a new one gets the copied tables, then every model is rebuilt (`dmf build --full-refresh`)."""
    from dmf_watch.pipelines.mfds.row_versions import create_items_view
    from dmf_watch.transform.build import build

    if settings.warehouse != "duckdb":
        raise DmfError(f"dmf restore rebuilds a DuckDB file; {SERVER_BACKUPS}.")
    found = copies(settings.backup_dir)
    if copy_path is None:
        if not found:
            raise DmfError(f"there is no backup in {settings.backup_dir} (DMF_BACKUP_DIR); nothing to restore from.")
        chosen = found[0]
    else:
        resolved = copy_path if copy_path.is_absolute() else settings.backup_dir / copy_path
        chosen = next((copy for copy in found if copy.path.resolve() == resolved.resolve()), None)
        if chosen is None:
            raise DmfError(f"{copy_path} is not a complete backup in {settings.backup_dir}; `ls` it to choose one.")
    if settings.duckdb_path.exists():
        aside = settings.duckdb_path.with_name(f"{settings.duckdb_path.name}.broken-{datetime.now(UTC):%Y%m%dT%H%M%SZ}")
        os.replace(settings.duckdb_path, aside)
        echo(f"restore: the current warehouse was moved to {aside}")
    working_dir = settings.state_dir / "dlt"
    if working_dir.exists():  # dlt's local state may be newer than the copy: it is synced from the warehouse
        os.replace(working_dir, working_dir.with_name(f"dlt.before-restore-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"))
    with warehouse.connect(settings) as con:
        for name in chosen.tables:
            schema, table = name.split(".", 1)
            con.execute(f'create schema if not exists "{schema}"')
            source = chosen.path / f"{name}.parquet"
            con.execute(f'create table "{schema}"."{table}" as select * from read_parquet(\'{source}\')')
        create_items_view(con)
        loads = con.execute(
            f"select count(*), min(as_of_date), max(as_of_date) from {con.schemas.raw}.load_runs"
        ).fetchone()
    decisions = chosen.tables.get(f"{warehouse.schemas(settings).raw}.load_decisions", 0)
    echo(
        f"restore: {chosen.path.name} ({chosen.created_at}): {loads[0]} load attempts {loads[1]} … {loads[2]}, "
        f"{decisions} decision(s) on loads; rebuilding every model"
    )
    built = build(settings, full_refresh=True)
    echo(f"restore: build   {built.summary()}")
    return 0 if built.success else (2 if built.gate_fired else 1)


COMMANDS = (
    Command(
        "restore",
        "rebuild the warehouse from a backup (the newest by default); the current file is kept",
        lambda args, settings: restore(settings, Path(args.copy) if args.copy else None),
        locks_warehouse=True,
        arguments=lambda parser: parser.add_argument(
            "copy", nargs="?", default=None, metavar="COPY", help="a backup folder (default: the newest)"
        ),
        checks_damage=False,  # it is how a damaged warehouse is replaced
    ),
)
