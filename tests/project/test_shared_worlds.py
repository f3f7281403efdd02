"""The worlds the suite shares (support/worlds.py) are copied, never written: a test that writes
to one instead of its copy fails, whoever runs it (root included, whom file modes do not stop)."""

from __future__ import annotations

import duckdb
import pytest

from support.shelved import SharedWorldWritten
from support.worlds import Shelf, World

BUILDS: list[str] = []


def _tiny(root):
    BUILDS.append(root.name)
    root.mkdir(parents=True)
    with duckdb.connect(str(root / "dmf.duckdb")) as con:
        con.execute("create table events as select 1 as id")


TINY = World("tiny", _tiny, "one table of one row")


def _rows(path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("select id from events order by id").fetchall()


def test_each_test_gets_its_own_copy_of_a_world_built_once(tmp_path):
    shelf = Shelf(tmp_path / "shelf")
    with shelf.copied(TINY, tmp_path / "first") as first:
        with duckdb.connect(str(first.duckdb_path)) as con:
            con.execute("insert into events values (2)")  # a copy is the test's to write
    with shelf.copied(TINY, tmp_path / "second") as second:
        assert _rows(second.duckdb_path) == [(1,)]
    assert _rows(first.duckdb_path) == [(1,), (2,)]
    assert BUILDS.count("tiny.building") == 1


def test_a_test_that_writes_to_the_shared_world_fails(tmp_path):
    shelf = Shelf(tmp_path / "shelf")
    shared = shelf.path(TINY) / "dmf.duckdb"
    with pytest.raises((SharedWorldWritten, PermissionError, duckdb.Error)) as raised:
        with shelf.copied(TINY, tmp_path / "copy"):
            with duckdb.connect(str(shared)) as con:  # the shared file, not the copy
                con.execute("insert into events values (3)")
    if isinstance(raised.value, SharedWorldWritten):  # root: the digest caught it
        assert "'tiny' was written by a test (changed: dmf.duckdb)" in str(raised.value)
