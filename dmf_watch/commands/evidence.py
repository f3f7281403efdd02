"""`dmf evidence`: one registration's events with the raw records, loads and decisions behind each,
and a SHA-256 manifest, written into a new folder (dmf_watch/reports/evidence.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.core.config import Settings
from dmf_watch.pipelines.mfds.row_versions import row_hash
from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES, PAGE_SIZE, SOURCE_FIELDS, VERSIONS_TABLE
from dmf_watch.reports.evidence import RawRecords, check_out, write_evidence

# How the loader stores a record, for the files that reproduce it.
RAW_RECORDS = RawRecords(SOURCE_FIELDS, COLUMN_NAMES, VERSIONS_TABLE, row_hash, PAGE_SIZE)


def _arguments(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--permit-no", metavar="NO", help="registration number (exact; any number it ever had)")
    which.add_argument("--dmf-key", metavar="KEY", help="the registration's dmf_key (as `dmf history` shows it)")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="a new or empty folder")


def _check(args: argparse.Namespace, settings: Settings) -> None:
    check_out(args.out)


def _evidence(args: argparse.Namespace, settings: Settings) -> int:
    evidence = write_evidence(settings, RAW_RECORDS, args.out, permit_no=args.permit_no, dmf_key=args.dmf_key)
    events = len({name.split("/")[0] for name in evidence.files if "/" in name})
    print(
        f"{args.out}: {len(evidence.files)} files for {events} event(s) of dmf_key {evidence.dmf_key}; "
        f"check them with `cd {args.out} && sha256sum -c SHA256SUMS`"
    )
    return 0


COMMANDS = (
    Command(
        "evidence",
        "one registration's events with the raw records, loads and decisions behind them, and a manifest",
        _evidence,
        # read-only, but its files must come from one complete build: it reads the published marts
        locks_warehouse=False,
        arguments=_arguments,
        check=_check,
    ),
)
