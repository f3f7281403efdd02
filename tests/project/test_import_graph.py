"""Imports run the way data flows: the stages of `dmf_watch` import only `core` and the stages
before them, only `commands` (the `dmf` command) imports them all, and no two stages import
each other.
The layout drawing of docs/architecture.md names exactly the packages the tree holds."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "dmf_watch"
PACKAGES = ("core", "simulator", "pipelines", "transform", "enrich", "reports", "notify", "commands")

# What each package may import, besides itself: the data's direction, never back.
ALLOWED = {
    "core": set(),
    "simulator": {"core"},
    "pipelines": {"core"},
    "transform": {"core", "pipelines"},
    "enrich": {"core", "pipelines"},
    "reports": {"core", "enrich"},
    "notify": {"core", "reports"},
    "commands": set(PACKAGES) - {"commands"},
}


def package_imports(root: Path = ROOT) -> dict[str, dict[str, set[str]]]:
    """{package: {imported package: {module that imports it}}}, lazy imports included."""
    graph: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for package in PACKAGES:
        for path in sorted((root / PACKAGE / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    continue
                for name in names:
                    parts = name.split(".")
                    target = parts[1] if parts[0] == PACKAGE and len(parts) > 1 else None
                    if target in PACKAGES and target != package:
                        graph[package][target].add(module)
    return graph


def cycles(graph: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    found: list[list[str]] = []

    def walk(node: str, path: list[str]) -> None:
        for target in sorted(graph.get(node, {})):
            if target == path[0]:
                found.append(path + [target])
            elif target not in path and target > path[0]:
                walk(target, path + [target])

    for start in sorted(graph):
        walk(start, [start])
    return found


def test_no_two_packages_import_each_other_even_through_others() -> None:
    assert cycles(package_imports()) == []


def test_the_cycle_finder_finds_a_cycle_through_a_third_package() -> None:
    graph = {"a": {"b": {"a.x"}}, "b": {"c": {"b.y"}}, "c": {"a": {"c.z"}}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_what_comes_before_it_in_the_data_flow(package: str) -> None:
    imports = package_imports()[package]
    wrong = {target: sorted(modules) for target, modules in imports.items() if target not in ALLOWED[package]}
    assert wrong == {}, (
        f"{package} imports {wrong}: move the shared piece to dmf_watch/core/ or the call to dmf_watch/commands/"
    )


def test_the_architecture_drawing_names_every_package_and_folder_of_the_tree() -> None:
    guide = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    drawing = guide.split("```")[1]
    drawn = {match.split("/")[0] for match in re.findall(r"^([a-z_]+/(?:[a-z_]+/)*)", drawing, re.MULTILINE)}
    drawn_stages = set(re.findall(r"^  ([a-z_]+)/", drawing, re.MULTILINE))
    stages = {path.parent.name for path in (ROOT / PACKAGE).glob("*/__init__.py")}
    assert {path.parent.name for path in ROOT.glob("*/__init__.py")} == {PACKAGE}, "one top-level package"
    assert stages == set(PACKAGES), f"the import rules above know {sorted(PACKAGES)}, the tree holds {sorted(stages)}"
    assert stages <= drawn_stages, f"not drawn: {sorted(stages - drawn_stages)}"
    assert all((ROOT / name).is_dir() for name in drawn), (
        f"drawn but absent: {sorted(n for n in drawn if not (ROOT / n).is_dir())}"
    )
    assert all((ROOT / PACKAGE / name).is_dir() for name in drawn_stages)
