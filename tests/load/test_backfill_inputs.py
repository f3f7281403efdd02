"""`dmf backfill PATH` refuses a missing path, undated or future files and broken dumps in one
line, exit 1, before anything is written; the API-pages form reads exactly like the JSON Lines
form of the same day (both through the live parser and key audit)."""

from __future__ import annotations

import json
import math
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from dmf_watch.core.config import today_in_seoul
from dmf_watch.pipelines.mfds.dumps import Dump, date_in_name, read_dump
from dmf_watch.simulator.replay import write_replay
from support.cli import refused
from support.mfds import SERVICE_KEY, small_registry

DAY = date(2026, 11, 2)


def _items(count: int = 5) -> list[dict]:
    return small_registry(1200, DAY).items_for(1)[:count]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _lines(items: list[dict]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def _assert_nothing_written(env: Path) -> None:
    assert not (env / "data" / "dmf.duckdb").exists()
    assert not (env / "state" / "dlt").exists()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{not json\n", ":1: not JSON"),
        (None, ":3: not JSON"),  # a broken line in the middle
        (None, ":6: the last line ends in the middle of a record; the file is truncated"),
        ('["a list"]\n', ":1: a JSON list, not an object"),
        ("", ": holds no record"),
        (None, ":2: the items do not fit the declared schema (unknown dmfPermitNo"),
    ],
)
def test_a_broken_jsonl_dump_is_refused_naming_the_file_and_line_and_nothing_is_written(
    env, no_network, capsys, text, named
):
    items = _items()
    if text is None and "middle" in named:
        text = _lines(items) + json.dumps(items[0], ensure_ascii=False)[:40]
    elif text is None and "schema" in named:
        text = _lines([items[0], {"dmfPermitNo": "x", **{k: v for k, v in items[1].items() if k != "DMF_PERMIT_NO"}}])
    elif text is None:
        text = _lines(items[:2]) + "{oops\n" + _lines(items[2:])
    good = env / "dumps" / "2026-11-01.jsonl"
    _write(good, _lines(items))
    _write(env / "dumps" / "2026-11-02.jsonl", text)
    err = refused(capsys, ["backfill", str(env / "dumps")])
    assert "2026-11-02.jsonl" + named in err, err
    _assert_nothing_written(env)
    assert no_network == []


@pytest.mark.parametrize(
    ("setup", "named"),
    [
        (lambda root: root / "missing", "does not exist"),
        (lambda root: _write(root / "d" / "notes.jsonl", "{}\n").parent, "holds no dated dump"),
        (lambda root: _write(root / "d" / "latest.jsonl", "{}\n"), "the file name carries no date"),
        (
            lambda root: _write(root / "d" / "20261345.jsonl", "{}\n").parent,
            "'20261345' in the file name is not a date",
        ),
        (
            lambda root: _write(root / "d" / f"{today_in_seoul() + timedelta(days=1):%Y%m%d}.jsonl", "{}\n").parent,
            "is after today in Seoul",
        ),
        (
            lambda root: (
                [_write(root / "d" / "2026-11-01.jsonl", "{}\n"), _write(root / "d" / "20261101.json", "[]")][0].parent
            ),
            "are both dated 2026-11-01",
        ),
    ],
)
def test_a_path_without_usable_dated_dumps_is_refused_in_one_line(env, no_network, capsys, setup, named):
    err = refused(capsys, ["backfill", str(setup(env))])
    assert named in err, err
    _assert_nothing_written(env)


def test_the_first_date_of_a_file_name_is_the_as_of_date_in_either_spelling() -> None:
    assert date_in_name("dmf_2026-03-01_export_2026-03-02.jsonl") == date(2026, 3, 1)
    assert date_in_name("mfds-20260301.json") == date(2026, 3, 1)
    assert date_in_name("dump_202603011200.jsonl") is None  # 12 digits: not a date
    assert date_in_name("tail_A_2026-09-23.jsonl") == date(2026, 9, 23)


def _pages(simulator_url: str, rows: int) -> list[dict]:
    """The simulator's own JSON answers of getMdcDmfList01, page by page."""
    pages = []
    with httpx.Client() as client:
        page_no, last = 1, 1
        while page_no <= last:
            answer = client.get(
                f"{simulator_url}/getMdcDmfList01",
                params={"serviceKey": SERVICE_KEY, "pageNo": page_no, "numOfRows": rows, "type": "json"},
            ).json()
            last = math.ceil(answer["response"]["body"]["totalCount"] / rows)
            pages.append(answer)
            page_no += 1
    return pages


def test_the_api_pages_form_reads_exactly_like_the_jsonl_form_of_the_same_day(tmp_path, simulator):
    pages = _pages(simulator.base_url, 500)
    assert len(pages) == 3
    _write(tmp_path / "2026-11-29.json", json.dumps(pages, ensure_ascii=False))
    write_replay(tmp_path / "lines", {date(2026, 11, 29): small_registry(1200).items_for(1)})
    from_pages = read_dump(Dump(tmp_path / "2026-11-29.json", date(2026, 11, 29)))
    from_lines = read_dump(Dump(tmp_path / "lines" / "2026-11-29.jsonl", date(2026, 11, 29)))
    assert from_pages.status == "complete" and from_pages.total_count == 1200
    assert from_pages.rows == from_lines.rows  # positions, pages, repeat counts and every value


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda pages: pages[:2], "2 page(s) with 1,000 items, but totalCount 1,200 needs 3 page(s)"),
        (lambda pages: [pages[0], pages[2], pages[1]], "page 2 says pageNo 3"),
        (
            lambda pages: [
                pages[0],
                {
                    **pages[1],
                    "response": {
                        **pages[1]["response"],
                        "body": {
                            **pages[1]["response"]["body"],
                            "items": {"item": pages[1]["response"]["body"]["items"]["item"][:499]},
                        },
                    },
                },
                pages[2],
            ],
            "page 2 holds 499 of its 500 items",
        ),
        (lambda pages: [pages[0], {"response": {"header": {"resultCode": "22"}, "body": {}}}, pages[2]], "page 2: "),
        (
            lambda pages: [
                pages[0],
                {
                    **pages[1],
                    "response": {**pages[1]["response"], "body": {**pages[1]["response"]["body"], "totalCount": 1201}},
                },
                pages[2],
            ],
            "the totalCount differs between pages",
        ),
    ],
)
def test_a_broken_api_pages_dump_is_refused_naming_the_file_and_page(env, capsys, start_simulator, damage, named):
    pages = _pages(start_simulator().base_url, 500)
    assert pages[1]["response"]["body"]["items"]["item"]  # the simulator's default items shape
    _write(env / "dumps" / "2026-11-02.json", json.dumps(damage(pages), ensure_ascii=False))
    err = refused(capsys, ["backfill", str(env / "dumps")])
    assert "2026-11-02.json" in err and named in err, err
    _assert_nothing_written(env)


def test_a_real_dump_is_stored_by_the_live_writer_with_every_value_byte_for_byte(
    tmp_settings, real_data_dir, real_sample
):
    """The import step of `dmf backfill` (read_dump, then the live writer) on the real sample."""
    import duckdb

    from dmf_watch.pipelines.mfds import mfds_dump_source
    from dmf_watch.pipelines.mfds.dumps import find_dumps
    from dmf_watch.pipelines.mfds.load import new_load_id, ready_pipeline, write_load
    from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES, SOURCE_FIELDS

    (dump,) = find_dumps(real_data_dir / "sample_2026-10-08.jsonl", today_in_seoul())
    assert dump.as_of == date(2026, 10, 8)
    result, load_id, results = read_dump(dump), new_load_id(), []
    source = mfds_dump_source(as_of=dump.as_of, load_id=load_id, read=lambda: result, on_result=results.append)
    outcome = write_load(tmp_settings, ready_pipeline(tmp_settings, dump.as_of), source, results, dump.as_of, load_id)
    assert (outcome.fetch_status, outcome.total_count, outcome.distinct_count) == ("complete", 367, 367)
    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        rows = con.execute(
            f"select {', '.join(COLUMN_NAMES)} from mfds_raw.dmf_items where load_id = ? order by item_position",
            [load_id],
        ).fetchall()
    assert [dict(zip(SOURCE_FIELDS, row)) for row in rows] == [
        {name: record[name] for name in SOURCE_FIELDS} for record in real_sample
    ]
