"""The `dmf` command: the list of commands, and what each gets around its `run`.

Each command is declared in the module that implements it (commands/command.py says what a
declaration holds: its arguments, whether it takes the warehouse lock, what it needs). Around
every command this module checks the settings, the directories and the inputs, refuses a damaged
warehouse, takes the lock and the run deadline when the command declares it, and turns a failure
into one line.

Exit codes: 0 success, 2 an integrity gate (or an incomplete load) rejected the day, 1 any
other failure. A failure is one line on stderr; the details go to state/logs/dmf.log.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import traceback
from collections.abc import Iterable

from dmf_watch.commands.backup import warehouse_problem
from dmf_watch.commands.command import Command, command_line, scrub
from dmf_watch.commands.load_dates import check_live_load
from dmf_watch.core import warehouse
from dmf_watch.core.config import Settings, check_as_of, check_directory, check_paths, load_settings, today_in_seoul
from dmf_watch.core.errors import ConfigError, DmfError
from dmf_watch.core.faults import classify
from dmf_watch.core.interrupts import RunInterrupted, interruptible
from dmf_watch.core.lock import warehouse_lock
from dmf_watch.core.url_policy import base_url_problem

log = logging.getLogger("dmf")

# Each command, by the module that declares it. Only the module of the command being run is
# imported: cron's `dmf run` loads nothing of the other commands (the simulator, the backfill).
COMMAND_MODULES = {
    "demo": "dmf_watch.commands.demo",
    "run": "dmf_watch.commands.run",
    "load": "dmf_watch.commands.load",
    "build": "dmf_watch.commands.build",
    "enrich": "dmf_watch.commands.enrich",
    "report": "dmf_watch.commands.report",
    "doctor": "dmf_watch.commands.doctor",
    "accept-load": "dmf_watch.commands.decisions",
    "reject-load": "dmf_watch.commands.decisions",
    "backfill": "dmf_watch.commands.backfill",
    "export-loads": "dmf_watch.commands.export_loads",
    "restore": "dmf_watch.commands.backup",
    "seeds": "dmf_watch.commands.seeds",
    "history": "dmf_watch.commands.history",
    "registry": "dmf_watch.commands.registry",
    "evidence": "dmf_watch.commands.evidence",
    "changes": "dmf_watch.commands.changes",
    "status": "dmf_watch.commands.status",
    "explain-anomaly": "dmf_watch.commands.enrich",
    "proposals": "dmf_watch.commands.proposals",
    "notify": "dmf_watch.commands.notify",
    "sim": "dmf_watch.commands.sim",
}


class _Parser(argparse.ArgumentParser):
    """Bad arguments are one line and exit 1: exit 2 means a rejected load to cron."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(1, f"{self.prog}: {message} (see {self.prog} --help)\n")


def declared(name: str) -> Command:
    module = importlib.import_module(COMMAND_MODULES[name])
    return next(command for command in module.COMMANDS if command.name == name)


def parser(names: Iterable[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    top = _Parser(prog="dmf", description="Watch the MFDS Drug Master File registry.")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for name in names:
        command = declared(name)
        command.arguments(commands.add_parser(name, help=command.help))
    return top


def _parse(argv: list[str] | None) -> tuple[argparse.Namespace, Command]:
    argv = sys.argv[1:] if argv is None else argv
    # `dmf --help`, no command or an unknown one: every command, so that argparse can list them
    named = argv[:1] if argv[:1] and argv[0] in COMMAND_MODULES else COMMAND_MODULES
    args = parser(named).parse_args(argv)
    return args, declared(args.command)


def check_base_url(settings: Settings) -> None:
    """Refuse a base URL the loader must not connect to, before anything connects."""
    problem = base_url_problem(settings.api_base_url, settings.api_allowed_hosts)
    if problem:
        raise ConfigError(f"{problem}.")


def _validate(args: argparse.Namespace, command: Command, settings: Settings) -> None:
    """Every input a command uses, refused in one line before anything connects or writes."""
    if getattr(args, "as_of", None) is not None:
        check_as_of(args.as_of, future_allowed=command.future_dates, live_load=command.live_load)
    if command.live_load:
        check_base_url(settings)
    if command.check:
        command.check(args, settings)


def _run(args: argparse.Namespace, command: Command, settings: Settings) -> int:
    _validate(args, command, settings)
    if command.checks_damage:
        damage = warehouse_problem(settings)
        if damage:
            raise DmfError(damage)
    if not command.locks_warehouse:
        return command.run(args, settings)
    target = command.lock_target(settings) if command.lock_target else settings
    with (
        interruptible(settings.run_deadline_s),
        warehouse.interruptible_waits(target),
        warehouse_lock(target, command_line(args), settings.lock_wait_s),
    ):
        if command.live_load:
            explicit = getattr(args, "as_of", None)
            today = today_in_seoul()
            check_live_load(settings, explicit or today, today, explicit=explicit is not None)
        return command.run(args, settings)


def _setup(command: Command) -> Settings:
    """Settings read and their directories checked before logging can touch them."""
    settings = load_settings()
    check_paths(settings, warehouse=command.opens_warehouse, reports=command.writes_reports)
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
        record.msg, record.args = scrub(record.getMessage()), None
        if record.exc_info:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
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
    args, command = _parse(argv)
    try:
        settings = _setup(command)
    except DmfError as error:
        print(f"dmf: {scrub(str(error))}", file=sys.stderr)
        return error.exit_code
    code = _main(args, command, settings)
    # the last line of every command in dmf.log: what cron saw, beside the lines of its steps
    log.info("%s exit %d", command_line(args), code)
    return code


def _main(args: argparse.Namespace, command: Command, settings: Settings) -> int:
    """The command, its failure as one line on stderr (and in dmf.log), and its exit code."""
    log_dir = settings.state_dir / "logs"
    try:
        return _run(args, command, settings)
    except DmfError as error:
        if command.on_failure:
            command.on_failure(args, settings, error)
        fault = classify(error, settings)
        line = scrub(fault.line if fault else str(error))
        log.error("%s %s", command_line(args), " ".join(line.splitlines()))
        print(f"dmf: {line}", file=sys.stderr)
        return 1 if fault else error.exit_code
    except RunInterrupted as stopped:
        day = getattr(args, "as_of", None)
        line = stopped.sentence(day.isoformat() if day else None)
        log.error("%s %s", command_line(args), line)
        print(f"dmf: {line}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dmf: interrupted", file=sys.stderr)
        return 1
    except Exception as error:  # the user gets one line; the log keeps the traceback
        log.error(scrub(traceback.format_exc()))
        if command.on_failure:
            command.on_failure(args, settings, error)
        fault = classify(error, settings)
        if fault:  # the warehouse's own fault (file held, server down, login, disk, privilege), named
            log.error("%s %s", command_line(args), scrub(fault.line))
            print(f"dmf: {scrub(fault.line)}", file=sys.stderr)
            return 1
        damage = warehouse_problem(settings, error)
        if damage:  # a damaged block the check before the run could not see
            print(f"dmf: {damage}", file=sys.stderr)
            return 1
        print(
            f"dmf: unexpected {type(error).__name__}: {scrub(str(error)).splitlines()[0] if str(error) else ''} "
            f"(details in {log_dir / 'dmf.log'})",
            file=sys.stderr,
        )
        return 1


def entry() -> None:
    """The `dmf` command."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
