"""`dmf seeds check`: the analysts' seed CSVs checked against seeds/_seeds.yml, every problem
with its file and line (dmf_watch.transform.seed_check), before a build would stop on the first."""

from __future__ import annotations

import argparse
from pathlib import Path

from dmf_watch.commands.command import Command
from dmf_watch.core.config import Settings
from dmf_watch.core.errors import DmfError
from dmf_watch.transform.seed_check import check_seeds


def _seeds(args: argparse.Namespace, settings: Settings) -> int:
    # The dbt project one stands in (an analyst's checkout), else this installation's.
    here = Path.cwd()
    problems = check_seeds(here if (here / "dbt_project.yml").is_file() else settings.project_dir)
    for problem in problems:
        print(problem)
    if problems:
        raise DmfError(f"{len(problems)} problem(s) in the seeds; fix them and run `dmf seeds check` again.")
    print("seeds: every file matches seeds/_seeds.yml.")
    return 0


COMMANDS = (
    Command(
        "seeds",
        "check the analysts' seed CSVs (file, line, value, what is allowed)",
        _seeds,
        locks_warehouse=False,  # it reads CSV files, never the warehouse
        arguments=lambda parser: parser.add_argument("action", choices=["check"]),
        checks_damage=False,
    ),
)
