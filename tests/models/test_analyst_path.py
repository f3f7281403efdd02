"""The analysts guide's steps (docs/analysts.md), run verbatim on a copy of the project whose warehouse sits where
`dmf demo` puts it (data/demo/dmf.duckdb), built by the real pipeline: the check command shows
every row, a seed edit is one command away from its effect, and malformed edits fail with one
line naming the file, the line, the value and what is allowed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from support.mfds import SERVICE_KEY
from support.real_days import DAY_1, DAY_2, two_days
from support.scenarios import DaysSource, run_days, settings_in

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
ANALYSTS_GUIDE = PROJECT / "docs" / "analysts.md"


def analyst_block() -> str:
    text = ANALYSTS_GUIDE.read_text(encoding="utf-8")
    start = text.index("To change a rule and see its effect")
    return re.search(r"```\n(.*?)```", text[start:], re.S).group(1)


def more_kinds(days: dict) -> dict:
    """The action-list days plus an unwatched NEW (INFO) and a case-only change (COSMETIC), so
    the check query has more rows than dbt show prints by default."""
    day_2 = [dict(r) for r in days[DAY_2]]
    for record in day_2:
        if record["DMF_PERMIT_NO"] == "20050831-18-C-97-02":
            record["MNFCTR_NAME"] = (record["MNFCTR_NAME"] or "x").upper()
    day_2.append(
        dict(
            day_2[2],
            DMF_PERMIT_NO="20261009-14-B-9002",
            DMF_PERMIT_DATE="2026-10-09",
            ENTP_NAME="(주)다른신청인",
            BIZRNO="9998887775",
            INGR_KOR_NAME="테스트성분염산염",
        )
    )
    return {DAY_1: days[DAY_1], DAY_2: day_2}


@pytest.fixture(scope="module")
def project(real_data_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("analyst")
    for name in ("models", "macros", "seeds", "snapshots", "tests", "dbt_project.yml", "profiles.yml"):
        source = PROJECT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, root / name)
    (root / ".venv").symlink_to(PROJECT / ".venv")
    (root / "data" / "demo").mkdir(parents=True)
    mp = pytest.MonkeyPatch()
    mp.setenv("DMF_AI_DISABLED", "1")
    try:
        build_root = tmp_path_factory.mktemp("analyst_build")
        settings = settings_in(build_root)
        run_days(settings, DaysSource(more_kinds(two_days(real_data_dir))), [(DAY_1, None), (DAY_2, None)], SERVICE_KEY)
    finally:
        mp.undo()
    shutil.copy(settings.duckdb_path, root / "data" / "demo" / "dmf.duckdb")
    return root


def run_block(project: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    return subprocess.run(
        ["bash", "-ec", analyst_block()], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )


def groups(project: Path) -> list[tuple]:
    with duckdb.connect(str(project / "data" / "demo" / "dmf.duckdb"), read_only=True) as con:
        return con.execute(
            "select severity, event_type, count(*) from marts.dmf_events group by all order by all"
        ).fetchall()


def shown_rows(stdout: str) -> list[tuple]:
    rows = []
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[2].isdigit():
            rows.append((cells[0], cells[1], int(cells[2])))
    return rows


def test_the_guide_analyst_steps_run_verbatim_and_show_every_row(project):
    result = run_block(project)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "seeds: every file matches" in result.stdout
    assert shown_rows(result.stdout) == groups(project)
    assert len(groups(project)) > 5  # more than dbt show's default limit


def test_a_rule_edit_is_one_command_from_its_effect(project):
    rules = project / "seeds" / "severity_rules.csv"
    original = rules.read_text(encoding="utf-8")
    rules.write_text(original.replace("40,WITHDRAWN,,,,,HIGH,", "40,WITHDRAWN,,,,,MEDIUM,"), encoding="utf-8")
    try:
        result = run_block(project)
        assert result.returncode == 0, result.stdout[-2000:]
        shown = shown_rows(result.stdout)
        assert ("MEDIUM", "WITHDRAWN", 1) in shown and not [r for r in shown if r[:2] == ("HIGH", "WITHDRAWN")]
    finally:
        rules.write_text(original, encoding="utf-8")


MALFORMED = [
    (
        "severity_rules.csv",
        "40,WITHDRAWN,,,,,HIGH,",
        "40,WITHDRAWN,,,,,URGENT,",
        "seeds/severity_rules.csv line {line}: severity 'URGENT' is not allowed; use one of CRITICAL, HIGH, MEDIUM, INFO, COSMETIC",
    ),
    (
        "severity_rules.csv",
        "150,NEW,,,,,INFO,",
        "fifteen,NEW,,,,,INFO,",
        "seeds/severity_rules.csv line {line}: priority 'fifteen' is not a whole number",
    ),
    (
        "severity_rules.csv",
        "40,WITHDRAWN,,,,,HIGH,",
        "40,WITHDRAWN,,,,,HIGH ,",
        "seeds/severity_rules.csv line {line}: severity 'HIGH ' has spaces before or after it; remove them",
    ),
    (
        "severity_rules.csv",
        "150,NEW,,,,,INFO,Another new registration.,새 등록입니다.",
        "150,NEW,,,,,INFO,Another new registration.,",
        "seeds/severity_rules.csv line {line}: rationale_ko is empty; it is required",
    ),
    (
        "watchlist.csv",
        "manufacturer,Zhejiang Huahai,",
        "company,Zhejiang Huahai,",
        "seeds/watchlist.csv line {line}: term_kind 'company' is not allowed; use one of ingredient, applicant, manufacturer",
    ),
]


def editor_line(text: str, fragment: str) -> int:
    """The line an editor shows for the line holding `fragment` (1 = the header)."""
    return next(n for n, line in enumerate(text.splitlines(), start=1) if fragment in line)


# `dmf build` of this installation, on the copied project (its seeds are the ones edited).
BUILD_ON_COPY = """
import dataclasses, sys
from pathlib import Path
from dmf_watch.commands import cli
settings = cli.load_settings()
cli.load_settings = lambda: dataclasses.replace(settings, project_dir=Path(sys.argv[1]))
raise SystemExit(cli.main(["build"]))
"""


@pytest.mark.parametrize("seed,before,after,message", MALFORMED)
def test_a_malformed_seed_edit_is_one_line_in_seeds_check_build_and_the_log(
    project, tmp_path, seed, before, after, message
):
    path = project / "seeds" / seed
    original = path.read_text(encoding="utf-8")
    assert before in original
    message = message.format(line=editor_line(original, before))
    path.write_text(original.replace(before, after), encoding="utf-8")
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
        check = subprocess.run(
            [str(project / ".venv" / "bin" / "dmf"), "seeds", "check"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert check.returncode == 1
        assert check.stdout.strip() == message

        env.update(DMF_STATE_DIR=str(tmp_path / "state"), DMF_DUCKDB_PATH=str(tmp_path / "dmf.duckdb"))
        build = subprocess.run(
            [str(project / ".venv" / "bin" / "python"), "-c", BUILD_ON_COPY, str(project)],
            cwd=PROJECT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert build.returncode == 1
        assert build.stderr.count("\n") == 1 and build.stderr.startswith(f"dmf: {message}"), build.stderr
        assert message in (tmp_path / "state" / "logs" / "dmf.log").read_text(encoding="utf-8")
    finally:
        path.write_text(original, encoding="utf-8")
