"""A green `dmf seeds check` means a green seed layer in `dmf build`, and a red one a red one.

Every constrained column of every seed (its type, `not_null`, `unique`, `accepted_values`,
`relationships` in seeds/_seeds.yml) is mutated the ways analysts' edits go wrong: a value not
allowed, spaces around a value, another case, an empty cell, a duplicate. Each mutation becomes
its own copy of the seed, with the seed's tests, in one temporary dbt project; one real `dbt
build` loads and tests them all, and the verdict of each copy is held against `check_seed`'s.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dmf_watch.core.config import PROJECT_DIR
from dmf_watch.transform.seed_check import check_seed, seed_references, seed_rules

pytestmark = pytest.mark.e2e  # one dbt build: the slow tier

# Where the check is deliberately stricter than dbt, which would load a changed value silently.
STRICTER = {
    "a fraction": "dbt rounds 1.5 to 2 in an integer column; the check asks for a whole number",
    "slashes": "DuckDB reads 2026/01/05 as a date; the check asks for ISO YYYY-MM-DD, as the docs do",
}

# A valid row for seeds that ship without one (the alias queue starts empty).
BASE_ROWS = {"ingredient_aliases": {"alias": "암로디핀", "approved_by": "tester", "approved_on": "2026-01-05"}}


def _read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, header, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")


def _variants(rule: dict, kind: str, value: str, other: str) -> list[tuple[str, str]]:
    """(what, mutated value) for one cell whose valid value is `value` (`other`: another row's)."""
    out = [("empty", ""), ("spaces only", "   ")]
    if value:
        out += [("trailing space", value + " "), ("leading space", " " + value)]
        flipped = value.lower() if value != value.lower() else value.upper()
        if flipped != value:
            out.append(("other case", flipped))
    if kind == "integer":
        out += [("not a number", "abc"), ("a fraction", "1.5")]
    elif kind == "boolean":
        out += [("not a boolean", "maybe"), ("yes", "yes")]
    elif kind == "date":
        out += [("slashes", "2026/01/05"), ("no such day", "2026-02-30")]
    if rule.get("values") is not None:
        out.append(("not allowed", "NOT_ALLOWED"))
    if rule.get("relationship") is not None:
        out.append(("unknown reference", "없는관심용어"))
    if rule.get("unique") and other:
        out.append(("duplicate", other))
    return out


def _mutations(seeds: Path, rules: dict[str, dict]) -> list[tuple[str, str, str, list[str], list[dict]]]:
    """(copy name, seed, what, header, rows) for every constrained column of every seed."""
    out = []
    for seed, rule_set in rules.items():
        header, rows = _read(seeds / f"{seed}.csv")
        if seed in BASE_ROWS:
            watched = _read(seeds / "watchlist.csv")[1][0]["term"]
            rows = [dict.fromkeys(header, "") | BASE_ROWS[seed] | {"watch_term": watched}]
        rows = rows[:3]
        out.append((f"{seed}__m{len(out):03d}", seed, f"{seed}: a row of empty cells", header, [*rows, {}]))
        out.append((f"{seed}__m{len(out):03d}", seed, f"{seed}: saved with Excel's BOM and CRLF", header, rows))
        for column in header:
            rule = rule_set["columns"].get(column, {})
            kind = rule_set["types"].get(column, "varchar")
            if not (rule.get("not_null") or rule.get("unique") or rule.get("values") or rule.get("relationship")) and (
                kind == "varchar"
            ):
                continue
            other = rows[1][column] if len(rows) > 1 else ""
            for what, value in _variants(rule, kind, rows[0][column], other):
                mutated = [dict(row) for row in rows]
                mutated[0][column] = value
                out.append((f"{seed}__m{len(out):03d}", seed, f"{seed}.{column}: {what} {value!r}", header, mutated))
    return out


def _dbt_verdicts(project: Path, names: list[str]) -> dict[str, str]:
    """'red' or 'green' for each seed copy, from one `dbt build` and its artefacts."""
    env = dict(os.environ, DMF_DUCKDB_PATH=str(project / "seeds.duckdb"), DBT_SEND_ANONYMOUS_USAGE_STATS="false")
    dbt = Path(sys.executable).with_name("dbt")
    subprocess.run(
        # a project of seeds only: no load to build from, which the project's first hook would refuse
        [str(dbt), "build", "--project-dir", str(project), "--profiles-dir", str(project), "--threads", "2", "-q"]
        + ["--vars", "{without_loads: true}"],
        env=env,
        capture_output=True,
        check=False,
        timeout=600,
    )
    manifest = json.loads((project / "target" / "manifest.json").read_text())
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    verdicts = dict.fromkeys(names, "green")
    for result in results:
        node = manifest["nodes"][result["unique_id"]]
        if result["status"] in ("success", "pass"):
            continue
        seeds = [dep.split(".")[-1] for dep in node.get("depends_on", {}).get("nodes", [])] or [node["name"]]
        copies = [seed for seed in seeds if "__m" in seed]  # a relationship fails on its child copy
        for seed in copies or seeds:
            if seed in verdicts:
                verdicts[seed] = "red"
    return verdicts


@pytest.mark.fault("seeds edited as analysts do (spaces, case, empty cells, duplicates)")
def test_seeds_check_and_the_dbt_seed_layer_agree_on_every_mutation(tmp_path, capsys):
    project = tmp_path / "project"
    shutil.copytree(PROJECT_DIR / "macros", project / "macros")
    shutil.copytree(PROJECT_DIR / "tests" / "dbt" / "generic", project / "tests" / "dbt" / "generic")
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy(PROJECT_DIR / name, project / name)
    (project / "models").mkdir()
    seeds = project / "seeds"
    shutil.copytree(PROJECT_DIR / "seeds", seeds)
    rules = seed_rules(seeds / "_seeds.yml")
    spec = yaml.safe_load((seeds / "_seeds.yml").read_text(encoding="utf-8"))
    by_name = {entry["name"]: entry for entry in spec["seeds"]}

    mutations = _mutations(seeds, rules)
    for name, seed, what, header, rows in mutations:
        _write(seeds / f"{name}.csv", header, rows)
        if what.endswith("Excel's BOM and CRLF"):
            text = (seeds / f"{name}.csv").read_text(encoding="utf-8")
            (seeds / f"{name}.csv").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
        spec["seeds"].append(copy.deepcopy(by_name[seed]) | {"name": name})
    (seeds / "_seeds.yml").write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False), encoding="utf-8")

    dbt = _dbt_verdicts(project, [name for name, *_ in mutations] + list(rules))
    disagreements = []
    for name, seed, what, _, _ in mutations:
        problems = check_seed(seeds / f"{name}.csv", rules[seed], project, seed_references(seeds, rules[seed]))
        checked = "red" if problems else "green"
        if checked == "red" and dbt[name] == "green" and any(what.split(": ")[1].startswith(k) for k in STRICTER):
            continue
        if checked != dbt[name]:
            disagreements.append(f"{what}: seeds check {checked}, dbt {dbt[name]}")
    stricter = sum(1 for _, _, what, _, _ in mutations if any(what.split(": ")[1].startswith(k) for k in STRICTER))
    with capsys.disabled():
        print(
            f"\n{len(mutations)} mutations, {len(mutations) - len(disagreements)} agreements "
            f"({stricter} where the check is stricter by design)"
        )
    assert not disagreements, "\n".join(disagreements)
    assert {seed: dbt[seed] for seed in rules} == dict.fromkeys(rules, "green")
    assert [check_seed(seeds / f"{seed}.csv", rules[seed], project) for seed in rules] == [[]] * len(rules)
    assert not disagreements, "\n".join(disagreements)
