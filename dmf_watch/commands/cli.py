"""The `dmf` command (SPEC §10). Each subcommand is one step; `run` chains them for cron.

Exit codes: 0 success, 2 an integrity gate (or an incomplete load) rejected the day, 1 any
other failure. A failure is one line on stderr; the details go to state/logs/dmf.log.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from datetime import date

from dmf_watch.core.config import Settings, check_as_of, check_directory, check_paths, load_settings, today_in_seoul
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.faults import classify
from dmf_watch.core.interrupts import RunInterrupted, interruptible
from dmf_watch.simulator.command import add_serve_arguments, serve_command
from dmf_watch.simulator.registry import DEFAULT_SEED

log = logging.getLogger("dmf")

# Commands that write the warehouse (or read it while others may write): one at a time per
# warehouse, through dmf.lock. A new command opts in by adding its name here.
LOCKED_COMMANDS = frozenset(
    {
        "run",
        "load",
        "build",
        "backfill",
        "export-loads",
        "report",
        "demo",
        "accept-load",
        "reject-load",
        "notify",
        "restore",
    }
)
# Commands that never open the warehouse, or rebuild it (restore), or make their own (demo).
NO_DAMAGE_CHECK = frozenset({"sim", "doctor", "seeds", "restore", "demo"})
# Live loads: the API serves only today's list, so they cannot go back before the latest load.
LIVE_LOAD_COMMANDS = frozenset({"run", "load"})
# Commands that need no warehouse or report directory of their own.
NO_WAREHOUSE_COMMANDS = frozenset({"sim", "doctor"})
REPORT_COMMANDS = frozenset({"run", "report", "demo", "notify"})


class _Parser(argparse.ArgumentParser):
    """Bad arguments are one line and exit 1: exit 2 means a rejected load to cron."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(1, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _as_of(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{value}' is not a date; use YYYY-MM-DD") from None


def _add_as_of(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--as-of",
        type=_as_of,
        default=None,
        metavar="YYYY-MM-DD",
        help="logical date of the load (default: today in Asia/Seoul)",
    )


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="dmf", description="Watch the MFDS Drug Master File registry.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    demo = commands.add_parser("demo", help="simulate several days end to end on a local MFDS simulator")
    demo.add_argument("--days", type=int, default=5, help="how many consecutive days (default 5)")
    demo.add_argument(
        "--start",
        type=_as_of,
        default=None,
        metavar="YYYY-MM-DD",
        help="first simulated day (default: so that the last day is today)",
    )
    demo.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the synthetic registry")

    run = commands.add_parser("run", help="the daily job: load, build with gates, enrich, report")
    _add_as_of(run)
    load = commands.add_parser("load", help="load the whole MFDS list into the raw layer")
    _add_as_of(load)
    load.add_argument("--force", action="store_true", help="load again although the date already has a complete load")
    build = commands.add_parser("build", help="dbt build: models, integrity gates, data and unit tests")
    # The build always covers every load; --as-of (the same flag as the other steps, so a
    # cron chain can pass it to each) names the day whose verdict is printed after it.
    build.add_argument(
        "--as-of",
        type=_as_of,
        default=None,
        metavar="YYYY-MM-DD",
        help="also print that day's verdict once built (the build covers every load)",
    )
    build.add_argument("--full-refresh", action="store_true", help="rebuild every table from the raw loads")
    enrich = commands.add_parser("enrich", help="ask agy for the day's Korean briefing (optional, never fatal)")
    _add_as_of(enrich)
    report = commands.add_parser("report", help="render the day's xlsx report from the warehouse")
    _add_as_of(report)
    report.add_argument("--weekly", action="store_true", help="render the weekly report ending on that date")
    doctor = commands.add_parser(
        "doctor", help="check the whole setup: service key, API, warehouse, reports directory, then agy"
    )
    doctor.add_argument(
        "--fix",
        action="store_true",
        help="create the batch workspace, merge the permission deny block into agy's settings "
        "and close the AI circuit a missing agy opened once agy runs",
    )

    for verb, help_text in (
        ("accept", "publish a complete load a gate rejected, after checking it against the MFDS site"),
        ("reject", "withdraw a published day found bad later (the next day compares with the one before)"),
    ):
        decide = commands.add_parser(f"{verb}-load", help=help_text)
        decide.add_argument(
            "--as-of", type=_as_of, required=True, metavar="YYYY-MM-DD", help="the day whose latest load is decided on"
        )
        decide.add_argument("--by", required=True, metavar="NAME", help="who decides (recorded)")
        decide.add_argument("--reason", required=True, metavar="TEXT", help="why (recorded, shown on the day's report)")
        if verb == "accept":
            decide.add_argument(
                "--list-size",
                type=int,
                metavar="N",
                help="let through a list the plausibility cap refused: the size checked on the MFDS site (recorded)",
            )

    backfill = commands.add_parser("backfill", help="import dated dumps of the raw list as past loads, then build")
    backfill.add_argument(
        "path",
        metavar="PATH",
        help="a dump or a folder of them: YYYY-MM-DD.jsonl (one raw item a line) or "
        "YYYY-MM-DD.json (the API's response pages)",
    )
    backfill.add_argument(
        "--insert-before-published",
        action="store_true",
        help="also import days before the latest load (changes published days; prints which and how)",
    )

    export = commands.add_parser(
        "export-loads",
        help="write every stored day as a dated dump (and people's decisions) for `dmf backfill` elsewhere",
    )
    export.add_argument("folder", metavar="DIR", help="an empty folder (created if missing)")

    restore = commands.add_parser(
        "restore", help="rebuild the warehouse from a backup (the newest by default); the current file is kept"
    )
    restore.add_argument("copy", nargs="?", default=None, metavar="COPY", help="a backup folder (default: the newest)")

    seeds = commands.add_parser("seeds", help="check the analysts' seed CSVs (file, line, value, what is allowed)")
    seeds.add_argument("action", choices=["check"])

    history = commands.add_parser("history", help="one registration's timeline: every event and field change")
    which = history.add_mutually_exclusive_group(required=True)
    which.add_argument("--ingredient", metavar="TEXT", help="ingredient name (any part of it)")
    which.add_argument("--permit-no", metavar="NO", help="registration number (exact, or its beginning)")
    which.add_argument("--applicant", metavar="TEXT", help="applicant name (any part) or BIZRNO")

    status = commands.add_parser("status", help="the last days at a glance, and what to run next")
    _add_as_of(status)
    status.add_argument("--days", type=int, default=7, help="how many days back from --as-of (default 7)")

    explain = commands.add_parser("explain-anomaly", help="ask agy again to explain a past day's signals")
    _add_as_of(explain)

    proposals = commands.add_parser("proposals", help="review AI proposals (never applied automatically)")
    actions = proposals.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=_Parser)
    listing = actions.add_parser("list", help="list pending proposals")
    listing.add_argument("--all", action="store_true", help="also those already accepted or rejected")
    show = actions.add_parser("show", help="show one proposal")
    show.add_argument("proposal_id")
    for verb in ("accept", "reject"):
        decide = actions.add_parser(verb, help=f"{verb} a proposal (records the decision only)")
        decide.add_argument("proposal_id")
        decide.add_argument("--by", default=os.environ.get("USER", "unknown"), help="who decides")
        decide.add_argument("--note", default="", help="why")

    notify = commands.add_parser("notify", help="send the day's messages and alerts (each only once)")
    notify.add_argument(
        "action", nargs="?", choices=["test"], help="`test`: a test message to every configured destination"
    )
    _add_as_of(notify)
    notify.add_argument("--resend", action="store_true", help="send the day's messages again")

    sim = commands.add_parser("sim", help="the MFDS-compatible simulator")
    sim_commands = sim.add_subparsers(dest="sim_command", required=True, metavar="ACTION", parser_class=_Parser)
    add_serve_arguments(sim_commands.add_parser("serve", help="serve the simulated API on loopback"))
    return top


def dispatch(args: argparse.Namespace, settings: Settings) -> int:
    as_of = getattr(args, "as_of", None) or today_in_seoul()
    if args.command == "demo":
        from dmf_watch.commands.demo import run_demo

        return run_demo(settings, days=args.days, start=args.start, seed=args.seed)
    if args.command == "run":
        from dmf_watch.commands.run import run_day

        outcome = run_day(settings, as_of)
        if outcome.warning:  # published, but degraded (its backup failed): alerted, and said here
            log.warning("%s %s", _command_line(args), outcome.warning)
            print(f"dmf: {_scrub(outcome.warning)}", file=sys.stderr)
        return outcome.exit_code
    if args.command == "load":
        from dmf_watch.commands.upgrade import upgrade_warehouse
        from dmf_watch.pipelines.mfds.load import load_day

        upgraded = upgrade_warehouse(settings)  # the load reads the marts' columns of this release
        if upgraded:
            print(f"{as_of}  upgrade {upgraded}")
        outcome = load_day(settings, as_of, force=args.force)
        print(outcome.summary())
        return {"complete": 0, "skipped": 0, "failed": 1}.get(outcome.fetch_status, 2)
    if args.command == "build":
        from dmf_watch.commands.build import build

        outcome = build(settings, full_refresh=args.full_refresh, unit_tests=True)
        log.info("build %s", outcome.summary())
        print(outcome.summary())
        if args.as_of is not None:
            print(_built_verdict(settings, args.as_of))
        return 0 if outcome.success else (2 if outcome.gate_fired else 1)
    if args.command == "enrich":
        from dmf_watch.enrich.daily_briefing import enrich_day

        print(enrich_day(settings, as_of).summary())
        return 0
    if args.command == "report":
        from dmf_watch.commands.build import unpublishable_reason
        from dmf_watch.commands.upgrade import layout_problem
        from dmf_watch.reports.daily_report import render_daily
        from dmf_watch.reports.weekly_report import render_weekly

        problem = unpublishable_reason(settings, as_of) or layout_problem(settings)
        if problem:
            raise DmfError(problem)
        print((render_weekly if args.weekly else render_daily)(settings, as_of))
        return 0
    if args.command == "doctor":
        from dmf_watch.commands.doctor import BAD, WARN, run_setup_doctor

        if args.fix:
            from dmf_watch.enrich.agy_checks import fix_circuit
            from dmf_watch.enrich.ai_config import load_ai_config
            from dmf_watch.enrich.workspace import install_permission_block, prepare_workspace

            workspace, problem = prepare_workspace(settings)
            print(f"fix  workspace: {problem or workspace}")
            print(f"fix  permissions: {install_permission_block(settings, load_ai_config(settings))[1]}")
            print(f"fix  circuit: {fix_circuit(settings)}")
        checks = run_setup_doctor(settings)
        for check in checks:
            print(check.line)
        bad = sum(check.level == BAD for check in checks)
        warn = sum(check.level == WARN for check in checks)
        print(
            f"{len(checks)} checks: {bad} failed, {warn} warnings" + (" (warnings do not stop a run)" if warn else "")
        )
        return 1 if bad else 0
    if args.command == "seeds":
        from pathlib import Path

        from dmf_watch.commands.seed_check import check_seeds

        # The dbt project one stands in (an analyst's checkout), else this installation's.
        here = Path.cwd()
        problems = check_seeds(here if (here / "dbt_project.yml").is_file() else settings.project_dir)
        for problem in problems:
            print(problem)
        if problems:
            raise DmfError(f"{len(problems)} problem(s) in the seeds; fix them and run `dmf seeds check` again.")
        print("seeds: every file matches seeds/_seeds.yml.")
        return 0
    if args.command == "history":
        from dmf_watch.reports.history import history_text

        print(history_text(settings, ingredient=args.ingredient, permit_no=args.permit_no, applicant=args.applicant))
        return 0
    if args.command == "status":
        from dmf_watch.commands.status import day_statuses, format_table, last_build_failure, open_alerts

        if args.days < 1:
            raise DmfError("--days must be at least 1.")
        from dmf_watch.commands.upgrade import layout_problem
        from dmf_watch.core import warehouse

        alerts = open_alerts(settings)  # from the state folder: shown even when the warehouse is not
        try:
            statuses = day_statuses(settings, args.days, as_of)
        except (DmfError, *warehouse.Error) as error:
            upgrade = layout_problem(settings) if not isinstance(error, DmfError) else None
            if alerts:
                print(alerts)
            if upgrade:  # the days cannot be read from marts of an earlier release: say why, once
                raise DmfError(upgrade) from None
            raise
        print(format_table(statuses, last_build_failure(settings)) + (f"\n\n{alerts}" if alerts else ""))
        upgrade = layout_problem(settings)  # read-only: what the next run does first, in one line
        if upgrade:
            print(f"Upgrade: {upgrade[0].upper()}{upgrade[1:]}")
        return 0
    if args.command == "backfill":
        from pathlib import Path

        from dmf_watch.commands.backfill import backfill

        return backfill(settings, Path(args.path), insert_before_published=args.insert_before_published)
    if args.command == "export-loads":
        from pathlib import Path

        from dmf_watch.commands.export_loads import export_loads

        return export_loads(settings, Path(args.folder))
    if args.command == "restore":
        from pathlib import Path

        from dmf_watch.commands.backup import restore

        return restore(settings, Path(args.copy) if args.copy else None)
    if args.command in ("accept-load", "reject-load"):
        from dmf_watch.commands.decisions import accept_list_size, decide_load

        if getattr(args, "list_size", None) is not None:
            return accept_list_size(settings, args.as_of, args.by, args.reason, args.list_size)
        return decide_load(settings, args.as_of, args.command.split("-")[0], args.by, args.reason)
    if args.command == "explain-anomaly":
        from dmf_watch.enrich.anomaly import explain_anomaly

        print(explain_anomaly(settings, as_of).summary())
        return 0
    if args.command == "proposals":
        return proposals_command(settings, args)
    if args.command == "notify":
        return notify_command(settings, args, as_of)
    if args.command == "sim":
        return serve_command(args)
    raise DmfError(f"unknown command {args.command}")


def _built_verdict(settings: Settings, as_of: date) -> str:
    """`dmf build --as-of`: the day's verdict as the marts now say it, or why they cannot."""
    from dmf_watch.commands.build import unpublishable_reason
    from dmf_watch.commands.run import day_verdict

    problem = unpublishable_reason(settings, as_of)
    if problem:
        return f"{as_of}  verdict unknown: {problem}"
    verdict, reason = day_verdict(settings, as_of)
    return f"{as_of}  {verdict}" + (f": {reason}" if reason and verdict != "accepted" else "")


def proposals_command(settings: Settings, args: argparse.Namespace) -> int:
    """Lists and decides AI proposals; a decision is recorded, never applied to a seed."""
    from dmf_watch.enrich import proposals

    if args.action == "list":
        rows = proposals.list_proposals(settings, status=None if args.all else "PENDING")
        if not rows:
            print("No proposals." if args.all else "No pending proposals.")
        for row in rows:
            overdue = "  (pending over 7 days)" if row["is_overdue"] else ""
            print(
                f"{row['proposal_id']}  {row['status']:<8}  {row['watch_term']} → "
                f"{row['candidate_ingredient_name']}  confidence {row['confidence']:.2f}  "
                f"{row['age_days']} d{overdue}"
            )
        return 0
    if args.action == "show":
        row = proposals.show_proposal(settings, args.proposal_id)
        if row is None:
            raise DmfError(f"no proposal {args.proposal_id}; `dmf proposals list --all` shows every id.")
        for key, value in row.items():
            if key != "decisions":
                print(f"{key:>26}: {value}")
        for decision in row["decisions"]:
            print(
                f"{'decision':>26}: {decision['decision']} by {decision['decided_by']} "
                f"at {decision['decided_at']} {decision['note'] or ''}"
            )
        return 0
    outcome = proposals.decide(settings, args.proposal_id, args.action, args.by, args.note)
    if not outcome.ok:
        raise DmfError(outcome.message)
    print(outcome.message)
    return 0


def notify_command(settings: Settings, args: argparse.Namespace, as_of: date) -> int:
    """`dmf notify test` prints one line per destination (its name, never its URL)."""
    from dmf_watch.notify.day import notify_day, notify_test, unconfigured

    if args.action == "test":
        results = notify_test(settings)
        if not results:
            skipped = ", ".join(unconfigured(settings))
            raise DmfError(
                "no notification destination is configured: set DMF_NOTIFY_URLS or "
                "DMF_NOTIFY_URL_<NAME> for a destination of dmf_watch/notify/notify.toml"
                + (f" ({skipped})" if skipped else "")
                + "."
            )
        for name, owner, ok, error in results:
            serves = f"{owner}'s items" if owner else "everything"
            print(f"{name} ({serves}): {'ok' if ok else 'failed'}{'  ' + error if error else ''}")
        return 0 if all(ok for _, _, ok, _ in results) else 1
    outcome = notify_day(settings, as_of, resend=args.resend)
    print(f"{as_of}  notify  {outcome.summary()}")
    if outcome.recorded:
        from dmf_watch.reports.daily_report import render_daily

        render_daily(settings, as_of)  # its operations sheet lists the new alerts and deliveries
    return 0


def _scrub(text: str) -> str:
    key = os.environ.get("MFDS_SERVICE_KEY")
    return text.replace(key, "***") if key else text


def check_base_url(settings: Settings) -> None:
    """Refuse a base URL the loader must not connect to, before anything connects."""
    from dmf_watch.core.url_policy import base_url_problem

    problem = base_url_problem(settings.api_base_url, settings.api_allowed_hosts)
    if problem:
        raise ConfigError(f"{problem}.")


def _validate(args: argparse.Namespace, settings: Settings) -> None:
    """Every input a command uses, refused in one line before anything connects or writes."""
    if getattr(args, "as_of", None) is not None:
        check_as_of(args.as_of, future_allowed=args.command == "reject-load")
    if args.command in LIVE_LOAD_COMMANDS:
        check_base_url(settings)
    if args.command == "backfill":
        from pathlib import Path

        from dmf_watch.commands.backfill import check_dumps

        check_dumps(Path(args.path))


def _lock_target(args: argparse.Namespace, settings: Settings) -> Settings:
    if args.command == "demo":
        from dmf_watch.commands.demo import demo_settings

        return demo_settings(settings)
    return settings


def _command_line(args: argparse.Namespace) -> str:
    as_of = getattr(args, "as_of", None)
    return f"dmf {args.command}" + (f" --as-of {as_of.isoformat()}" if as_of else "")


def _run(args: argparse.Namespace, settings: Settings) -> int:
    _validate(args, settings)
    if args.command not in NO_DAMAGE_CHECK:
        from dmf_watch.commands.backup import warehouse_problem

        damage = warehouse_problem(settings)
        if damage:
            raise DmfError(damage)
    if args.command not in LOCKED_COMMANDS:
        return dispatch(args, settings)
    from dmf_watch.commands.lock import warehouse_lock
    from dmf_watch.core import warehouse

    target = _lock_target(args, settings)
    with (
        interruptible(settings.run_deadline_s),
        warehouse.interruptible_waits(target),
        warehouse_lock(target, _command_line(args), settings.lock_wait_s),
    ):
        if args.command in LIVE_LOAD_COMMANDS:
            from dmf_watch.commands.load_dates import check_live_load

            explicit = getattr(args, "as_of", None)
            today = today_in_seoul()
            check_live_load(settings, explicit or today, today, explicit=explicit is not None)
        return dispatch(args, settings)


def _setup(args: argparse.Namespace) -> Settings:
    """Settings read and their directories checked before logging can touch them."""
    settings = load_settings()
    check_paths(
        settings,
        warehouse=args.command not in NO_WAREHOUSE_COMMANDS,
        reports=args.command in REPORT_COMMANDS,
    )
    check_directory("DMF_STATE_DIR (its logs directory)", settings.state_dir / "logs")
    # A log line that cannot be written (disk full) must not print a traceback to stderr.
    logging.raiseExceptions = False
    logging.basicConfig(
        filename=settings.state_dir / "logs" / "dmf.log",
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    _dlt_logs_to_the_log(settings)
    return settings


class _Scrubbed(logging.Filter):
    """A record with its traceback formatted and the service key replaced, before any handler
    writes it (dlt's tracebacks can hold a request's URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = _scrub(record.getMessage()), None
        if record.exc_info:
            record.exc_text = _scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def _dlt_logs_to_the_log(settings: Settings) -> None:
    """dlt's own log (its logger "dlt") into dmf.log, not onto stderr: dlt logs each failed load
    job with its traceback, 887 lines on stderr for a role that may not write, where a user must
    see one line. dlt keeps a handler the "dlt" logger already has (it adds a stderr one only
    when there is none), so one set here first is the one it writes to."""
    dlt_log = logging.getLogger("dlt")
    for earlier in [h for h in dlt_log.handlers if any(isinstance(f, _Scrubbed) for f in h.filters)]:
        dlt_log.removeHandler(earlier)  # a second main() in one process (tests) writes one copy
        earlier.close()
    handler = logging.FileHandler(settings.state_dir / "logs" / "dmf.log", encoding="utf-8")
    handler.addFilter(_Scrubbed())
    dlt_log.addHandler(handler)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        settings = _setup(args)
    except DmfError as error:
        print(f"dmf: {_scrub(str(error))}", file=sys.stderr)
        return error.exit_code
    code = _main(args, settings)
    # the last line of every command in dmf.log: what cron saw, beside the lines of its steps
    log.info("%s exit %d", _command_line(args), code)
    return code


def _main(args: argparse.Namespace, settings: Settings) -> int:
    """The command, its failure as one line on stderr (and in dmf.log), and its exit code."""
    log_dir = settings.state_dir / "logs"
    try:
        return _run(args, settings)
    except DmfError as error:
        _alert_failed_morning(args, settings, error)
        fault = classify(error, settings)
        line = _scrub(fault.line if fault else str(error))
        log.error("%s %s", _command_line(args), " ".join(line.splitlines()))
        print(f"dmf: {line}", file=sys.stderr)
        return 1 if fault else error.exit_code
    except RunInterrupted as stopped:
        day = getattr(args, "as_of", None)
        line = stopped.sentence(day.isoformat() if day else None)
        log.error("%s %s", _command_line(args), line)
        print(f"dmf: {line}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dmf: interrupted", file=sys.stderr)
        return 1
    except Exception as error:  # the user gets one line; the log keeps the traceback
        log.error(_scrub(traceback.format_exc()))
        _alert_failed_morning(args, settings, error)
        fault = classify(error, settings)
        if fault:  # the warehouse's own fault (file held, server down, login, disk, privilege), named
            log.error("%s %s", _command_line(args), _scrub(fault.line))
            print(f"dmf: {_scrub(fault.line)}", file=sys.stderr)
            return 1
        from dmf_watch.commands.backup import warehouse_problem

        damage = warehouse_problem(settings, error)
        if damage:  # a damaged block the check before the run could not see
            print(f"dmf: {damage}", file=sys.stderr)
            return 1
        print(
            f"dmf: unexpected {type(error).__name__}: {_scrub(str(error)).splitlines()[0] if str(error) else ''} "
            f"(details in {log_dir / 'dmf.log'})",
            file=sys.stderr,
        )
        return 1


def _alert_failed_morning(args: argparse.Namespace, settings: Settings, error: BaseException) -> None:
    """A `dmf run` that the warehouse stopped before its day began (the file held by another
    program, the server down or refusing the login, a full disk, another run holding the lock too
    long) still raises the morning's alert; one run_day raised already is not repeated. A refused
    input (a date, a URL) is the caller's to fix and stays a line only."""
    if args.command != "run":
        return
    from dmf_watch.commands.lock import WarehouseBusy
    from dmf_watch.commands.run import alert_failed_run

    if isinstance(error, WarehouseBusy) or classify(error, settings) is not None:
        alert_failed_run(settings, getattr(args, "as_of", None) or today_in_seoul(), error, echo=print)


def entry() -> None:
    """The `dmf` command."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
