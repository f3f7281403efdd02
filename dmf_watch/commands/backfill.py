"""`dmf backfill PATH`: import dated dumps of the raw list as loads of their as-of dates, then build.

Why this exists beside `dmf run`: the live API serves only today's list, so the past can only
come from dumps. Each dump goes through the one writer of the raw layer (dmf_watch.pipelines.mfds.load.write_load
over dmf_watch.pipelines.mfds.mfds_dump_source), append-only like any load;
dmf_watch/pipelines/mfds/dumps.py says what is checked instead of a
totalCount. Every dump is read and checked before anything is written: one broken file
refuses the whole import in one line, so a broken dump never becomes a load, events or a
baseline, and nothing already in the warehouse is touched.

Published days never change silently: a dump dated before the warehouse's latest load would
re-sequence the days after it, so it is refused unless the person passes
`--insert-before-published`; after the build, the published days that changed are printed with
their counts before → after (dmf_watch.commands.decisions computes them, as for accept-load).

One build judges every imported day: the gates judge every load of the sequence, and the
gate hook records one rejection per build (the earliest) while dmf_watch.transform.build builds again
until no gate fires, so each day is compared with the loads really accepted before it, as
day-by-day runs would (tests/load/test_backfill.py proves the events equal).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.commands.decisions import changed_days, published_counts
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, today_in_seoul
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.warehouse import table_exists
from dmf_watch.pipelines.mfds import mfds_dump_source
from dmf_watch.pipelines.mfds.dumps import DECISIONS_FILE, Dump, DumpError, find_dumps, read_dump
from dmf_watch.pipelines.mfds.helpers import FetchResult
from dmf_watch.pipelines.mfds.load import new_load_id, ready_pipeline, write_load
from dmf_watch.pipelines.mfds.row_versions import stored_versions
from dmf_watch.transform.build import build

Echo = Callable[[str], None]
INSERT_FLAG = "--insert-before-published"


def check_dumps(path: Path) -> list[Dump]:
    """The CLI's check before the lock: the path, its dated files, no date in the future."""
    return find_dumps(path, today_in_seoul())


def complete_load_of(settings: Settings, as_of: date) -> str | None:
    """The id of a complete load of `as_of` already stored, whatever the gates said of it: a
    dump of a day already loaded is the same day again, so it is skipped, not loaded twice."""
    if latest_load_date(settings) is None:
        return None
    with warehouse.connect(settings, read_only=True) as con:
        row = con.execute(
            f"select load_id from {con.schemas.raw}.load_runs where as_of_date = ? and fetch_status = "
            "'complete' order by finished_at desc limit 1",
            [as_of],
        ).fetchone()
    return row[0] if row else None


def latest_load_date(settings: Settings) -> date | None:
    """The as-of date of the warehouse's latest load attempt, any verdict (None: no load yet)."""
    if not warehouse.exists(settings):
        return None
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.raw, "load_runs"):
            return None
        row = con.execute(f"select max(as_of_date) from {con.schemas.raw}.load_runs").fetchone()
    return row[0] if row else None


def _published(settings: Settings) -> tuple[set[date], dict[date, dict[str, int]]]:
    """The dates published now (an accepted load) and their event counts."""
    if not warehouse.exists(settings):
        return set(), {}
    with warehouse.connect(settings, read_only=True) as con:
        if not table_exists(con, con.schemas.marts, "dmf_loads", "dmf_events"):
            return set(), {}
        days = {
            row[0]
            for row in con.execute(
                f"select distinct as_of_date from {con.schemas.marts}.dmf_loads where verdict = 'accepted'"
            ).fetchall()
        }
        return days, published_counts(con)


def _verdicts(settings: Settings, days: list[date]) -> dict[date, tuple[str, str | None]]:
    with warehouse.connect(settings, read_only=True) as con:
        rows = con.execute(
            f"select as_of_date, verdict, reason from {con.schemas.marts}.dmf_day_decisions where as_of_date in "
            f"({', '.join('?' for _ in days)})",
            days,
        ).fetchall()
    return {row[0]: (row[1], row[2]) for row in rows}


DECISION_KEYS = ("as_of_date", "decision", "decided_by", "reason", "decided_at")


def read_decisions(path: Path) -> list[dict]:
    """People's decisions exported beside the dumps (none for a single file or a folder without
    them), checked like a dump: one line naming the file and line when one is unusable."""
    file = path / DECISIONS_FILE if path.is_dir() else None
    if file is None or not file.is_file():
        return []
    decisions = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            decision = json.loads(line)
            decision["as_of_date"] = date.fromisoformat(decision["as_of_date"])
            decision["decided_at"] = datetime.fromisoformat(decision["decided_at"])
            missing = [key for key in DECISION_KEYS if not decision.get(key)]
        except (ValueError, KeyError, TypeError):
            missing = ["a JSON object with " + ", ".join(DECISION_KEYS)]
        if missing or decision.get("decision") not in ("accept", "reject"):
            raise DumpError(
                f"{file}:{number}: not a decision as `dmf export-loads` writes it (missing or wrong: "
                f"{', '.join(missing) or 'decision'}); nothing was imported."
            )
        decisions.append(decision)
    return decisions


def _record_decisions(settings: Settings, decisions: list[dict], loads: dict[date, str]) -> int:
    """The exported decisions on the imported days, given to each day's imported load, in their
    order; after a first build (which made the decisions table, and judged the days as the
    gates did before anyone decided), so the next build applies them as they were applied."""
    raw = warehouse.schemas(settings).raw
    kept = [d for d in decisions if d["as_of_date"] in loads]
    with warehouse.connect(settings) as con:
        ((latest,),) = con.execute(f"select max(decision_seq) from {raw}.load_decisions").fetchall()
        con.executemany(
            f"insert into {raw}.load_decisions "
            "(load_id, as_of_date, decision, decided_by, reason, decided_at, decision_seq) values (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    loads[d["as_of_date"]],
                    d["as_of_date"],
                    d["decision"],
                    d["decided_by"],
                    d["reason"],
                    d["decided_at"],
                    seq,
                )
                for seq, d in enumerate(kept, start=(latest or 0) + 1)
            ],
        )
    return len(kept)


def backfill(
    settings: Settings,
    path: Path,
    *,
    insert_before_published: bool = False,
    echo: Echo = print,
    progress: bool | None = None,
) -> int:
    """Imports the dumps at `path`, builds once (judging each day), says what was published.

    Returns the exit code: 0 every imported day published, 2 a gate rejected one of them."""
    dumps = check_dumps(path)
    for dump in dumps:  # every file checked before anything is written
        read_dump(dump)
    decisions = read_decisions(path)
    skipped = {dump.as_of: complete_load_of(settings, dump.as_of) for dump in dumps}
    todo = [dump for dump in dumps if skipped[dump.as_of] is None]
    for dump in dumps:
        if skipped[dump.as_of] is not None:
            echo(f"{dump.as_of}  skip    a complete load ({skipped[dump.as_of]}) is already in the warehouse")
    if not todo:
        echo(f"backfill: nothing to import; all {len(dumps)} day(s) at {path} are already loaded.")
        return 0
    latest = latest_load_date(settings)
    earlier = [dump.as_of for dump in todo if latest is not None and dump.as_of < latest]
    if earlier and not insert_before_published:
        raise ConfigError(
            f"{len(earlier)} dump(s) at {path} ({earlier[0]}{' … ' + str(earlier[-1]) if len(earlier) > 1 else ''}) "
            f"are dated before the latest load in the warehouse ({latest}); importing them would change "
            f"the published days after them: pass {INSERT_FLAG} to do it and see which days changed."
        )
    published_before, counts_before = _published(settings)

    pipeline = ready_pipeline(settings, todo[0].as_of)
    imported: dict[date, str] = {}
    bar = _ProgressBar(len(todo), enabled=sys.stdout.isatty() if progress is None else progress)
    with bar:
        for number, dump in enumerate(todo, start=1):
            result = read_dump(dump)
            load_id = new_load_id()
            results: list[FetchResult] = []
            source = mfds_dump_source(
                as_of=dump.as_of,
                load_id=load_id,
                read=lambda result=result: result,
                on_result=results.append,
                known_versions=lambda hashes: stored_versions(settings, hashes),
            )
            outcome = write_load(settings, pipeline, source, results, dump.as_of, load_id)
            if outcome.fetch_status != "complete":  # the contract refused it: recorded, never built on
                raise DmfError(
                    f"{dump.path}: {outcome.reason}; {number - 1} earlier day(s) were imported, nothing was built."
                )
            imported[dump.as_of] = load_id
            echo(
                f"{dump.as_of}  load    [{number}/{len(todo)}] {dump.path.name}: {outcome.distinct_count:,} records "
                f"(load {load_id})"
            )
            bar.advance(f"{dump.as_of} imported")

    echo(f"backfill: {len(todo)} day(s) imported; building (every day is judged by the gates in turn)")
    built = build(settings)
    echo(f"backfill: build   {built.summary()}")
    if not built.success and not built.gate_fired:
        raise DmfError(f"the dumps are imported but dbt build failed: {'; '.join(built.failures[:3])}.")
    if decisions and (recorded := _record_decisions(settings, decisions, imported)):
        echo(f"backfill: {recorded} decision(s) on the imported days recorded as exported; building again")
        built = build(settings)
        echo(f"backfill: build   {built.summary()}")
        if not built.success and not built.gate_fired:
            raise DmfError(f"the decisions are recorded but dbt build failed: {'; '.join(built.failures[:3])}.")

    verdicts = _verdicts(settings, [dump.as_of for dump in todo])
    rejected = [day for day, (verdict, _) in sorted(verdicts.items()) if verdict != "accepted"]
    for day in rejected:
        echo(f"{day}  REJECTED  {verdicts[day][1]}")
    published_after, counts_after = _published(settings)
    before = {day: counts_before.get(day, {}) for day in published_before}
    after = {day: counts_after.get(day, {}) if day in published_after else {} for day in published_before}
    lines = changed_days(before, after)
    for line in lines or ["no day published before this backfill changed"]:
        echo(f"published  {line}")
    if lines:
        echo(
            f"re-render the changed days' reports with `dmf report --as-of D` "
            f"({', '.join(line.split()[0] for line in lines)})."
        )
    echo(
        f"backfill: {len(todo) - len(rejected)} of {len(todo)} imported day(s) published"
        + (f", {len(rejected)} rejected by a gate (see `dmf status`)" if rejected else "")
        + (f", {len(dumps) - len(todo)} skipped" if len(dumps) > len(todo) else "")
        + "."
    )
    return 2 if rejected else 0


class _ProgressBar:
    """rich's progress bar on a terminal (rich comes with dlt); nothing in a log or a test."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self._progress = None
        self._task = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("importing dumps"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                transient=True,
            )
            self._task = self._progress.add_task("", total=total)

    def __enter__(self) -> _ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, text: str) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, description=text)


def _check_path(args: argparse.Namespace) -> None:
    check_dumps(Path(args.path))


def _backfill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        metavar="PATH",
        help="a dump or a folder of them: YYYY-MM-DD.jsonl (one raw item a line) or "
        "YYYY-MM-DD.json (the API's response pages)",
    )
    parser.add_argument(
        INSERT_FLAG,
        action="store_true",
        help="also import days before the latest load (changes published days; prints which and how)",
    )


COMMANDS = (
    Command(
        "backfill",
        "import dated dumps of the raw list as past loads, then build",
        lambda args, settings: backfill(
            settings, Path(args.path), insert_before_published=args.insert_before_published
        ),
        locks_warehouse=True,
        arguments=_backfill_arguments,
        check=lambda args, settings: _check_path(args),
    ),
)
