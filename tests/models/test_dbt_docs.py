"""dbt YAML explains instead of copying: a column description is written once.

A wording shared by several columns lives in a doc block (`models/docs.md`) and the YAML points
at it with `{{ doc('name') }}`; a copied wording drifts (one copy said signals take their
severity from the severity rules, which score events only). Run as a script to print the
figures for any checkout: `python tests/models/test_dbt_docs.py [PROJECT_DIR]`.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

PROJECT_DIR = Path(__file__).resolve().parents[2]
DOC_REF = re.compile(r"^\s*\{\{\s*doc\(\s*['\"]([a-z0-9_]+)['\"]\s*\)\s*\}\}\s*$")
DOC_BLOCK = re.compile(r"\{%-?\s*docs\s+([a-z0-9_]+)\s*-?%\}")


@dataclass(frozen=True)
class Column:
    yml: str
    owner: str
    name: str
    description: str


@dataclass(frozen=True)
class Figures:
    columns: int
    copies: int  # columns whose literal wording stands on another column too
    copied_texts: int  # distinct wordings standing on more than one column
    doc_refs: int  # columns pointing at a doc block


def described_columns(project_dir: Path) -> list[Column]:
    """Every column of every model and source table in the models' YAML files."""
    found = []
    for path in sorted((project_dir / "models").rglob("_*.yml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        owners = list(document.get("models") or [])
        for source in document.get("sources") or []:
            owners += source.get("tables") or []
        for owner in owners:
            for column in owner.get("columns") or []:
                found.append(
                    Column(
                        str(path.relative_to(project_dir)),
                        owner["name"],
                        column["name"],
                        str(column.get("description") or "").strip(),
                    )
                )
    return found


def figures(columns: list[Column]) -> Figures:
    literal = Counter(c.description for c in columns if c.description and not DOC_REF.match(c.description))
    return Figures(
        columns=len(columns),
        copies=sum(n for n in literal.values() if n > 1),
        copied_texts=sum(1 for n in literal.values() if n > 1),
        doc_refs=sum(1 for c in columns if DOC_REF.match(c.description)),
    )


def doc_blocks(project_dir: Path) -> Counter:
    return Counter(
        name
        for path in (project_dir / "models").rglob("*.md")
        for name in DOC_BLOCK.findall(path.read_text(encoding="utf-8"))
    )


def test_no_column_description_is_a_copy_of_another():
    columns = described_columns(PROJECT_DIR)
    by_text: dict[str, list[str]] = {}
    for c in columns:
        if c.description and not DOC_REF.match(c.description):
            by_text.setdefault(c.description, []).append(f"{c.owner}.{c.name}")
    copies = {text[:80]: owners for text, owners in by_text.items() if len(owners) > 1}
    assert copies == {}, "put the shared wording in a doc block (models/docs.md): " + repr(copies)


def test_every_doc_reference_has_exactly_one_block():
    blocks = doc_blocks(PROJECT_DIR)
    referenced = {
        DOC_REF.match(c.description).group(1) for c in described_columns(PROJECT_DIR) if DOC_REF.match(c.description)
    }
    assert referenced, "no column uses a doc block"
    assert sorted(name for name in referenced if blocks[name] != 1) == []
    assert sorted(set(blocks) - referenced - {OVERVIEW}) == [], "doc blocks nobody references"


OVERVIEW = "__overview__"  # the block dbt docs opens on instead of its stock "Welcome!" page


def test_dbt_docs_open_on_a_front_page_that_walks_the_lineage_to_the_exposures():
    assert doc_blocks(PROJECT_DIR)[OVERVIEW] == 1
    text = (PROJECT_DIR / "models" / "overview.md").read_text(encoding="utf-8")
    exposures = yaml.safe_load((PROJECT_DIR / "models" / "marts" / "_marts__exposures.yml").read_text())["exposures"]
    for exposure in exposures:
        assert f"`{exposure['name']}`" in text, exposure["name"]
        assert not str(exposure.get("url", "")).startswith("file://"), "a file:// URL leads nowhere from the docs site"
    for landmark in ("Source `mfds`", "Staging", "Intermediate", "Marts", "gates", "int_loads_accepted"):
        assert landmark in text, landmark


def test_signal_severity_is_described_as_the_catalogs_not_the_severity_rules():
    columns = {(c.owner, c.name): c.description for c in described_columns(PROJECT_DIR)}
    text = (PROJECT_DIR / "models" / "docs.md").read_text(encoding="utf-8")
    block = re.search(r"\{% docs signal_severity %\}(.*?)\{% enddocs %\}", text, re.S).group(1)
    for owner in ("dmf_signals", "int_load_signals", "stg_mfds__rejected_load_signals"):
        assert columns[(owner, "severity")] == "{{ doc('signal_severity') }}"
    assert "seed signal_catalog" in block and "not decided by seeds/severity_rules.csv" in block


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else PROJECT_DIR
    f = figures(described_columns(root))
    print(
        f"{root}: {f.columns} column descriptions; {f.copies} are copies of another column's "
        f"wording ({f.copied_texts} distinct wordings); {f.doc_refs} use a doc block"
    )
