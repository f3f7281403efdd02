"""Docstrings, comments and docs name modules that exist: a map that points at a module renamed
since sends its reader nowhere, and nothing else fails when a rename leaves one behind.

Two forms are held to the tree, the ones a reader can follow: a dotted name from the top
(`dmf_watch.enrich.daily_briefing.enrich_day`, its module found by `importlib.util.find_spec`, a
name after it looked up in that module's source) and a path (`dmf_watch/notify/ledger.py`, or
`notify/ledger.py` from the package). A short dotted name (`notify.alerts`) is not checked: it is
as often a table or a TOML section as a module, so maps write the dotted name in full."""

from __future__ import annotations

import ast
import functools
import importlib.util
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "dmf_watch"
STAGES = sorted(path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py"))

DOTTED = re.compile(rf"\b{PACKAGE}(?:\.\w+)+(?![\w-])")
PACKAGE_PATH = re.compile(rf"(?<![\w/.-]){PACKAGE}(?:/[\w.-]+)+/?")
# From inside the package (`enrich/drift.py`); only .py, since `reports/out/` is the top-level folder.
STAGE_PATH = re.compile(rf"(?<![\w/.-])(?:{'|'.join(STAGES)})/(?:[\w-]+/)*\w+\.py\b")


@functools.cache
def _top_level_names(origin: str) -> frozenset[str]:
    """What a module defines or imports at its top level, read without importing it (importing
    every module a docstring names would import dlt and dbt)."""
    names: set[str] = set()
    statements = list(ast.parse(Path(origin).read_text(encoding="utf-8")).body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.If | ast.Try):
            statements += node.body + node.orelse + getattr(node, "finalbody", [])
            statements += [child for handler in getattr(node, "handlers", []) for child in handler.body]
    return frozenset(names)


@functools.cache
def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(2, len(parts) + 1):
        spec = importlib.util.find_spec(".".join(parts[:end]))
        if spec is None:  # not a module: a name the package's __init__ defines, or nothing
            package = importlib.util.find_spec(".".join(parts[: end - 1]))
            return parts[end - 1] in _top_level_names(package.origin)
        if spec.submodule_search_locations is None:  # a module: what follows is one of its names
            return end == len(parts) or parts[end] in _top_level_names(spec.origin)
    return True


def dangling_names(text: str, *, from_inside: bool = True) -> list[str]:
    """The module names and package paths in `text` that point at nothing in the tree;
    `from_inside`: also paths written from inside the package (`enrich/drift.py`)."""
    found = [name for name in DOTTED.findall(text) if not _resolves(name)]
    paths = [path.rstrip(".") for path in PACKAGE_PATH.findall(text)]
    found += [path for path in paths if not (ROOT / path).exists()]
    if from_inside:
        found += [path for path in STAGE_PATH.findall(text) if not (ROOT / PACKAGE / path).exists()]
    return found


def _docstrings_and_comments(path: Path) -> Iterator[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield node.body[0].lineno, docstring
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def test_the_finder_flags_renamed_modules_and_missing_paths_only() -> None:
    text = """Entry points: dmf_watch.enrich.daily.enrich_day (renamed), dmf_watch.enrich.daily_briefing.enrich_day,
    dmf_watch.notify.ledger, dmf_watch.core.config.Settings, dmf_watch.core.config.Setings.
    Files: enrich/store.py, notify/ledger.py, dmf_watch/notify/config.py, dmf_watch/enrich/agy.toml,
    dmf_watch/reports/. Not ours to check: notify.alerts, tests/commands/test_run_log.py, reports/out/."""
    assert dangling_names(text) == [
        "dmf_watch.enrich.daily.enrich_day",
        "dmf_watch.core.config.Setings",
        "dmf_watch/notify/config.py",
        "enrich/store.py",
    ]


def test_every_docstring_and_comment_of_the_package_names_modules_that_exist() -> None:
    # Parsing every module is most of the time; a file whose whole text names nothing dangling
    # has no docstring or comment that does.
    suspects = [
        path for path in sorted((ROOT / PACKAGE).rglob("*.py")) if dangling_names(path.read_text(encoding="utf-8"))
    ]
    dangling = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in suspects
        for line, text in _docstrings_and_comments(path)
        for name in dangling_names(text)
    ]
    assert dangling == [], "name the module that does the job now, or drop the sentence:\n" + "\n".join(dangling)


def test_the_docs_name_modules_and_package_files_that_exist() -> None:
    """Only the forms from the top: the docs name test files from tests/ (`commands/test_run_log.py`)."""
    docs = [ROOT / "README.md", ROOT / "AGENTS.md", *sorted((ROOT / "docs").glob("*.md"))]
    dangling = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in docs
        for name in dangling_names(path.read_text(encoding="utf-8"), from_inside=False)
    ]
    assert dangling == [], "name the module that does the job now, or drop the sentence:\n" + "\n".join(dangling)
