"""A warehouse an earlier release built, brought to this release's layout before anything reads it.

An upgrade in place (`git pull`, `pip install`) changes the code at once but the warehouse only
when something rebuilds it: until then the marts lack the columns the new code reads (the load
reads `dmf_loads.attempt_order`, the reports read `dmf_events.rationale_ko`, ...). One step, in
this order, is called by every command that reads them:

1. The fast path. `schema_version` in the raw layer records the layout key (a digest of the
   marts' contracts) every upgrade left; when it holds this release's key the warehouse is
   current, and the check cost one query.
2. The marts: a table whose columns are not those of its enforced contract
   (models/marts/_marts__models.yml and reporting/) was built by an earlier release. `dmf run`
   and `dmf load` first bring the raw layer to this release's layout (the loader's migrations: a
   per-load `dmf_items` table moved into row versions, columns declared since added; each
   idempotent), then rebuild every model with `--full-refresh` under the lock they hold (every
   table from the raw loads, so rows the old SQL computed do not stay beside new ones; a full
   refresh gives the same events). `dmf report` and `dmf status` are read-only: they say so in
   one line (`layout_problem`) instead of changing the warehouse. With current marts the raw
   layer is left to the load, which runs the same migrations before it writes.
3. This release's key recorded, so the next morning takes the fast path.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import yaml

from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.core.warehouse import holds_a_load, table_exists

log = logging.getLogger(__name__)

LAYOUT_TABLE = "schema_version"
# The files that define the marts' columns (their enforced contracts), relative to the project.
CONTRACT_FILES = ("models/marts/_marts__models.yml", "models/marts/reporting/_reporting__models.yml")
# Raised when a release changes the raw layer in a way the contracts do not show, so that every
# warehouse takes the slow path (its raw migrations) once more.
RAW_LAYOUT = 1


def layout_key(settings: Settings) -> str:
    """This release's layout: the raw layout number and the bytes of the contract files (a file
    edit that changes no column costs one comparison of columns on the next run, not a rebuild)."""
    digest = hashlib.sha256(f"raw {RAW_LAYOUT}\0".encode())
    for name in CONTRACT_FILES:
        path = settings.project_dir / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    return digest.hexdigest()[:16]


def mart_contracts(settings: Settings) -> dict[str, list[str]]:
    """The column names of every mart with an enforced contract, in contract order."""
    contracts: dict[str, list[str]] = {}
    for name in CONTRACT_FILES:
        path = settings.project_dir / name
        if not path.is_file():
            continue
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            if model.get("config", {}).get("contract", {}).get("enforced"):
                contracts[model["name"]] = [column["name"] for column in model.get("columns", [])]
    return contracts


@dataclass(frozen=True)
class Layout:
    """What the warehouse's marts lack of this release's contracts (empty: nothing)."""

    recorded: bool  # this release's key is in schema_version: nothing was compared
    built: bool  # any contracted mart exists (an unbuilt warehouse has nothing to upgrade)
    differences: dict[str, str]  # mart -> what differs, e.g. "lacks attempt_order"

    @property
    def stale(self) -> bool:
        return self.built and bool(self.differences)

    def summary(self, limit: int = 3) -> str:
        shown = [f"{mart} {what}" for mart, what in sorted(self.differences.items())[:limit]]
        more = len(self.differences) - limit
        return "; ".join(shown) + (f"; {more} more" if more > 0 else "")


def read_layout(settings: Settings) -> Layout:
    """The marts' layout against this release's contracts; read-only, without the lock."""
    if not warehouse.exists(settings):
        return Layout(recorded=False, built=False, differences={})
    key = layout_key(settings)
    with warehouse.connect(settings, read_only=True) as con:
        raw, marts = con.schemas.raw, con.schemas.marts
        if table_exists(con, raw, LAYOUT_TABLE):
            row = con.execute(f"select 1 from {raw}.{LAYOUT_TABLE} where layout = ? limit 1", [key]).fetchone()
            if row:
                return Layout(recorded=True, built=True, differences={})
        contracts = mart_contracts(settings)
        found = con.execute(
            "select table_name, column_name from information_schema.columns where table_schema = ? "
            "order by table_name, ordinal_position",
            [marts],
        ).fetchall()
    have: dict[str, list[str]] = {}
    for table, column in found:
        have.setdefault(table, []).append(column)
    built = any(mart in have for mart in contracts)
    differences = {}
    for mart, columns in contracts.items():
        present = have.get(mart)
        if present is None:
            differences[mart] = "does not exist"
            continue
        lacks = [column for column in columns if column not in present]
        extra = [column for column in present if column not in columns]
        if lacks or extra:
            differences[mart] = ", ".join(
                part
                for part in (
                    f"lacks {', '.join(lacks)}" if lacks else "",
                    f"has {', '.join(extra)} no longer built" if extra else "",
                )
                if part
            )
    return Layout(recorded=False, built=built, differences=differences)


def layout_problem(settings: Settings) -> str | None:
    """For the read-only commands (`dmf report`, `dmf status`): one line when the marts were built
    by an earlier release, naming what the next run does and what to run now; None when current,
    or when the warehouse cannot be read at all (the command's own read says why, in its words)."""
    try:
        layout = read_layout(settings)
    except warehouse.Error:
        return None
    if not layout.stale:
        return None
    return (
        f"the marts were built by an earlier release of DMF Watch ({layout.summary()}); "
        "the next `dmf run` rebuilds them first, or run `dmf build --full-refresh` now."
    )


def upgrade_warehouse(settings: Settings) -> str | None:
    """Brings the warehouse to this release's layout; the caller holds the warehouse lock.

    Returns the line saying what was done (None: it was current). A rebuild that fails raises a
    one-line DmfError: nothing after it may read marts of two releases.
    """
    try:
        layout = read_layout(settings)
    except warehouse.Error:
        # the warehouse cannot be read at all (a program holds the file, the server refuses): the
        # step that needs it next says so in its own words, not this check
        log.warning("upgrade: the layout could not be read", exc_info=True)
        return None
    if layout.recorded or not warehouse.exists(settings):
        return None
    done = []
    if layout.stale:
        from dmf_watch.transform.build import build

        raw_line = _upgrade_raw(settings)  # the rebuild reads the raw layer as this release lays it out
        if raw_line:
            done.append(raw_line)

        log.info("upgrade: the marts were built by an earlier release (%s); rebuilding them", layout.summary(10))
        outcome = build(settings, full_refresh=True)
        if not outcome.success and not outcome.gate_fired:
            raise DmfError(
                f"the marts of an earlier release could not be rebuilt for this one ({'; '.join(outcome.failures[:2])}); "
                "nothing was loaded: fix that and run `dmf build --full-refresh`."
            )
        done.append(f"marts of an earlier release rebuilt ({layout.summary()}): {outcome.summary()}")
    if layout.built and not read_layout(settings).stale:
        _record(settings)
    if done:
        line = "; ".join(done)
        log.info("upgrade: %s", line)
        return line
    return None


def _upgrade_raw(settings: Settings) -> str | None:
    """The loader's migrations of the raw layer (dlt's own tables and schema): a warehouse from
    before row versions moved into them, columns declared since added; each idempotent."""
    with warehouse.connect(settings, read_only=True) as con:
        if not holds_a_load(con, con.schemas.raw):
            return None
    from dlt.pipeline.exceptions import PipelineStepFailed

    from dmf_watch.pipelines.mfds.contract import migrate_declared_columns
    from dmf_watch.pipelines.mfds.load import mfds_pipeline, migrate_raw_items

    try:
        pipeline = mfds_pipeline(settings)
        moved = migrate_raw_items(settings, pipeline)
        added = migrate_declared_columns(pipeline)
    except PipelineStepFailed as error:
        raise DmfError(
            f"the raw layer of {warehouse.describe(settings)} could not be brought to this release's layout "
            f"({str(error.exception or error).splitlines()[0][:200]}); nothing was loaded."
        ) from error
    parts = [moved] if moved else []
    parts += [f"added {', '.join(names)} to raw {table}" for table, names in added.items()]
    return "; ".join(parts) or None


def _record(settings: Settings) -> None:
    """Records this release's layout key, so that the next check is one query."""
    with warehouse.connect(settings) as con:
        table = f"{con.schemas.raw}.{LAYOUT_TABLE}"
        con.execute(f"create schema if not exists {con.schemas.raw}")
        con.execute(f"create table if not exists {table} (layout varchar, recorded_at timestamp with time zone)")
        con.execute(
            f"insert into {table} (layout, recorded_at) values (?, ?)", [layout_key(settings), datetime.now(UTC)]
        )
        con.commit()
