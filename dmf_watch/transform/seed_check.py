"""Check the analysts' seed CSVs before dbt loads them, and say what is wrong in one line.

dbt reports a malformed seed as a failed test name, or as a DuckDB cast error with no line at
all ("Could not convert string 'abc' to INT32"). An analyst needs the file, the line as their
editor counts it, the value and what is allowed. The rules are read from `seeds/_seeds.yml`
(column types, `not_null`, `unique`, `accepted_values`), so they have one home: the YAML dbt
tests with. dbt's own tests still run afterwards and stay the authority.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import yaml

# What DuckDB and PostgreSQL both read as a boolean (case-insensitive); anything else fails the load.
BOOLEAN_WORDS = ("true", "false", "t", "f", "yes", "no", "y", "n", "1", "0")
_REF = re.compile(r"ref\(\s*['\"](\w+)['\"]\s*\)")


@dataclass(frozen=True)
class SeedProblem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path} line {self.line}: {self.message}"


def seed_rules(seeds_yml: Path) -> dict[str, dict]:
    spec = yaml.safe_load(seeds_yml.read_text(encoding="utf-8")) or {}
    out = {}
    for seed in spec.get("seeds", []):
        columns = {}
        for column in seed.get("columns", []):
            tests = column.get("data_tests") or column.get("tests") or []
            rule: dict = {
                "not_null": False,
                "unique": False,
                "values": None,
                "trimmed": False,
                "relationship": None,
                "optional": bool((column.get("meta") or {}).get("optional")),
            }
            for test in tests:
                if test == "not_null":
                    rule["not_null"] = True
                elif test == "trimmed":
                    rule["trimmed"] = True
                elif test == "unique" or (isinstance(test, dict) and "unique" in test):
                    rule["unique"] = True
                elif isinstance(test, dict) and "accepted_values" in test:
                    body = test["accepted_values"] or {}
                    rule["values"] = (body.get("arguments") or body).get("values")
                elif isinstance(test, dict) and "relationships" in test:
                    body = test["relationships"] or {}
                    body = body.get("arguments") or body
                    parent = _REF.search(str(body.get("to", "")))
                    if parent:
                        rule["relationship"] = (parent.group(1), body.get("field"))
            columns[column["name"]] = rule
        types = (seed.get("config") or {}).get("column_types") or {}
        out[seed["name"]] = {"columns": columns, "types": types}
    return out


def _type_problem(kind: str, value: str) -> str | None:
    if kind == "integer":
        try:
            int(value)
        except ValueError:
            return "a whole number"
    elif kind == "boolean" and value.lower() not in BOOLEAN_WORDS:
        return "true, false or empty"
    elif kind == "date":
        try:
            date.fromisoformat(value)
        except ValueError:
            return "a date YYYY-MM-DD"
    return None


def _exact(rule: dict) -> bool:
    """A text column whose values dbt compares exactly, spaces and all."""
    return bool(rule.get("trimmed") or rule.get("values") is not None or rule.get("relationship"))


def check_seed(
    path: Path, rules: dict, project_dir: Path, references: dict[tuple[str, str], set[str]] | None = None
) -> list[SeedProblem]:
    """The problems of one seed file; `references` holds the values of the columns its
    `relationships` tests point at ((seed, column) -> values), when they are known."""
    shown = str(path.relative_to(project_dir)) if path.is_relative_to(project_dir) else str(path)
    problems: list[SeedProblem] = []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return [SeedProblem(shown, 0, f"cannot be read ({exc.strerror})")]
    text, encoding_problem = _decoded(raw)
    if encoding_problem:
        return [SeedProblem(shown, _first_bad_line(raw), encoding_problem)]
    with io.StringIO(text, newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        expected = list(rules["types"]) or list(rules["columns"])
        required = [name for name in expected if not rules["columns"].get(name, {}).get("optional")]
        if header not in (expected, required):
            wanted = repr(",".join(expected)) + (f" or {','.join(required)!r}" if required != expected else "")
            return [SeedProblem(shown, 1, f"the header is {','.join(header or [])!r}; it must be {wanted}")]
        seen: dict[str, dict[str, int]] = {name: {} for name, r in rules["columns"].items() if r["unique"]}
        start = reader.line_num + 1
        for cells in reader:
            line = start
            start = reader.line_num + 1
            if not cells or cells == [""]:  # a blank line; a row of empty cells is a row of nulls
                continue
            if len(cells) != len(header):
                problems.append(
                    SeedProblem(
                        shown,
                        line,
                        f"{len(cells)} values for {len(header)} columns "
                        f"({','.join(header)}); check the commas and quotes",
                    )
                )
                continue
            for name, value in zip(header, cells):
                rule = rules["columns"].get(name, {})
                kind = rules["types"].get(name, "varchar")
                if value and not value.strip() and (kind != "varchar" or _exact(rule) or rule.get("not_null")):
                    problems.append(SeedProblem(shown, line, f"{name} holds only spaces; leave the cell empty"))
                    continue
                if value != value.strip() and (kind == "boolean" or (kind == "varchar" and _exact(rule))):
                    # dbt loads the cell as it is: 'HIGH ' then fails accepted_values in the build
                    problems.append(
                        SeedProblem(shown, line, f"{name} {value!r} has spaces before or after it; remove them")
                    )
                    continue
                value = value.strip()  # numbers and dates are read without their spaces
                if not value:
                    if rule.get("not_null"):
                        problems.append(SeedProblem(shown, line, f"{name} is empty; it is required"))
                    continue
                wanted = _type_problem(rules["types"].get(name, "varchar"), value)
                if wanted:
                    problems.append(SeedProblem(shown, line, f"{name} {value!r} is not {wanted}"))
                    continue
                allowed = rule.get("values")
                if allowed is not None and value not in [str(v) for v in allowed]:
                    problems.append(
                        SeedProblem(
                            shown, line, f"{name} {value!r} is not allowed; use one of {', '.join(map(str, allowed))}"
                        )
                    )
                parent = rule.get("relationship")
                if parent and references is not None and parent in references and value not in references[parent]:
                    problems.append(
                        SeedProblem(
                            shown,
                            line,
                            f"{name} {value!r} is not a {parent[1]} of seeds/{parent[0]}.csv; add it there first",
                        )
                    )
                if name in seen:
                    if value in seen[name]:
                        problems.append(
                            SeedProblem(
                                shown,
                                line,
                                f"{name} {value!r} is already on line {seen[name][value]}; it must be unique",
                            )
                        )
                    else:
                        seen[name][value] = line
    return problems


def _decoded(raw: bytes) -> tuple[str, str | None]:
    """The file's text as dbt will read it (UTF-8, with or without Excel's BOM), or why it cannot be."""
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    try:
        raw.decode("cp949")
    except UnicodeDecodeError:
        found = "neither UTF-8 nor CP949/EUC-KR"
    else:
        found = "CP949/EUC-KR (what Korean Excel's 'CSV (쉼표로 분리)' writes)"
    return "", (
        f"the file is saved as {found}, and dbt reads seeds as UTF-8: in Excel save it again as "
        "'CSV UTF-8 (쉼표로 분리)' (or convert it: iconv -f cp949 -t utf-8)"
    )


def _first_bad_line(raw: bytes) -> int:
    for number, line in enumerate(raw.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return number
    return 1


def check_seeds(project_dir: Path) -> list[SeedProblem]:
    """Every problem of every seed described in seeds/_seeds.yml, in file and line order."""
    seeds_dir = project_dir / "seeds"
    problems: list[SeedProblem] = []
    rules = seed_rules(seeds_dir / "_seeds.yml")
    for name, seed in rules.items():
        problems += check_seed(seeds_dir / f"{name}.csv", seed, project_dir, seed_references(seeds_dir, seed))
    return problems


def seed_references(seeds_dir: Path, rules: dict) -> dict[tuple[str, str], set[str]]:
    """The values of every column the seed's `relationships` tests point at (unreadable: none)."""
    out: dict[tuple[str, str], set[str]] = {}
    for rule in rules["columns"].values():
        parent = rule.get("relationship")
        if not parent or parent in out:
            continue
        try:
            text, problem = _decoded((seeds_dir / f"{parent[0]}.csv").read_bytes())
        except OSError:
            continue
        if problem is None:
            out[parent] = {row.get(parent[1]) or "" for row in csv.DictReader(io.StringIO(text, newline=""))}
    return out


def seed_error(problems: list[SeedProblem]) -> str:
    """The one line `dmf build` prints: the first problem, and how many more there are."""
    more = f" (and {len(problems) - 1} more; `dmf seeds check` lists them)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}. Fix the file and run the command again."
