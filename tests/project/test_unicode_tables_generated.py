"""macros/cross_db/unicode_tables.sql is what its generator, scripts/generate_unicode_tables.py,
writes by asking the installed DuckDB about every code point: a hand edit fails here, and so does
a DuckDB upgrade, since the file's header names the DuckDB version that wrote it. After an upgrade
this test fails until the generator is rerun, whether or not DuckDB's Unicode moved: the rerun is
how anyone learns whether it did (the check says whether the tables or only the header differ)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import duckdb

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "generate_unicode_tables.py"


def _load_generator():
    """The generator imported by path: scripts/ holds scripts, not a package. Registered in
    sys.modules before it runs, since dataclasses looks its module up there."""
    spec = importlib.util.spec_from_file_location("generate_unicode_tables", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generator = _load_generator()


def _changed_copy(tmp_path: Path, old: str, new: str) -> Path:
    committed = generator.TABLES_PATH.read_text(encoding="utf-8")
    changed = committed.replace(old, new, 1)
    assert changed != committed, f"{old!r} is no longer in the committed file"
    copy = tmp_path / "unicode_tables.sql"
    copy.write_text(changed, encoding="utf-8")
    return copy


def test_the_committed_tables_are_what_duckdb_gives():
    assert generator.TABLES_PATH.read_text(encoding="utf-8") == generator.generate()
    result = generator.check(generator.TABLES_PATH)
    assert result.same, result.message


def test_the_check_fails_on_a_table_entry_changed_by_hand(tmp_path):
    """À lowercased to á instead of à: one code point of the translate's target, the kind of edit
    a reviewer would not see among 1,407."""
    copy = _changed_copy(tmp_path, "'\\\\00e0\\\\00e1", "'\\\\00e1\\\\00e1")

    result = generator.check(copy)

    assert not result.same
    assert len(result.message.splitlines()) == 1
    assert str(copy) in result.message
    assert "its tables differ" in result.message


def test_the_check_fails_when_a_punctuation_code_point_is_missing(tmp_path):
    """U+00A1 (¡) gone from the class: PostgreSQL would keep it where DuckDB strips it."""
    copy = _changed_copy(tmp_path, "\\\\u00a1-\\\\u00a9", "\\\\u00a2-\\\\u00a9")

    result = generator.check(copy)

    assert not result.same
    assert "its tables differ" in result.message


def test_the_check_fails_on_tables_written_by_another_duckdb(tmp_path):
    """Tables as an older DuckDB would have left them, identical but for the header's version: what
    the check sees right after an upgrade, before anyone has rerun the generator."""
    copy = _changed_copy(tmp_path, f"from DuckDB {duckdb.__version__},", "from DuckDB 0.0.0,")

    result = generator.check(copy)

    assert not result.same
    assert "only its header differs" in result.message
