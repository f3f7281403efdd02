"""`dmf proposals`: review what agy proposed (watch-term aliases); a decision is recorded, never
applied to a seed: an analyst edits the seed."""

from __future__ import annotations

import argparse
import os

from dmf_watch.commands.command import Command
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.enrich import proposals


def _arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=type(parser))
    listing = actions.add_parser("list", help="list pending proposals")
    listing.add_argument("--all", action="store_true", help="also those already accepted or rejected")
    show = actions.add_parser("show", help="show one proposal")
    show.add_argument("proposal_id")
    for verb in ("accept", "reject"):
        decide = actions.add_parser(verb, help=f"{verb} a proposal (records the decision only)")
        decide.add_argument("proposal_id")
        decide.add_argument("--by", default=os.environ.get("USER", "unknown"), help="who decides")
        decide.add_argument("--note", default="", help="why")


def _list(settings: Settings, everything: bool) -> None:
    rows = proposals.list_proposals(settings, status=None if everything else "PENDING")
    if not rows:
        print("No proposals." if everything else "No pending proposals.")
    for row in rows:
        overdue = "  (pending over 7 days)" if row["is_overdue"] else ""
        print(
            f"{row['proposal_id']}  {row['status']:<8}  {row['watch_term']} → "
            f"{row['candidate_ingredient_name']}  confidence {row['confidence']:.2f}  "
            f"{row['age_days']} d{overdue}"
        )


def _show(settings: Settings, proposal_id: str) -> None:
    row = proposals.show_proposal(settings, proposal_id)
    if row is None:
        raise DmfError(f"no proposal {proposal_id}; `dmf proposals list --all` shows every id.")
    for key, value in row.items():
        if key != "decisions":
            print(f"{key:>26}: {value}")
    for decision in row["decisions"]:
        print(
            f"{'decision':>26}: {decision['decision']} by {decision['decided_by']} "
            f"at {decision['decided_at']} {decision['note'] or ''}"
        )


def _proposals(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "list":
        _list(settings, args.all)
    elif args.action == "show":
        _show(settings, args.proposal_id)
    else:
        outcome = proposals.decide(settings, args.proposal_id, args.action, args.by, args.note)
        if not outcome.ok:
            raise DmfError(outcome.message)
        print(outcome.message)
    return 0


COMMANDS = (
    Command(
        "proposals",
        "review AI proposals (never applied automatically)",
        _proposals,
        locks_warehouse=True,  # a decision is written to the enrichment tables
        arguments=_arguments,
    ),
)
