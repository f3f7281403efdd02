"""A real dump served by the simulator loads with every field value byte-for-byte as in the file."""

from __future__ import annotations

import duckdb

from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES, SOURCE_FIELDS
from dmf_watch.simulator.replay import ReplaySource
from support.mfds import SERVICE_KEY, START_DATE, pointed_at


def test_real_sample_loads_with_every_value_identical(
    tmp_settings, start_simulator, fast_policy, real_data_dir, real_sample
):
    assert len(real_sample) == 367
    server = start_simulator(ReplaySource(real_data_dir / "sample_2026-10-08.jsonl", start_date=START_DATE))
    outcome = load_day(pointed_at(tmp_settings, server), START_DATE, service_key=SERVICE_KEY, retry_policy=fast_policy)
    assert outcome.fetch_status == "complete", outcome.reason
    assert (outcome.total_count, outcome.distinct_count, outcome.duplicate_count) == (367, 367, 0)

    with duckdb.connect(str(tmp_settings.duckdb_path)) as con:
        rows = con.execute(
            f"select item_position, {', '.join(COLUMN_NAMES)} from mfds_raw.dmf_items order by item_position"
        ).fetchall()
    assert [row[0] for row in rows] == list(range(367))
    loaded = [dict(zip(SOURCE_FIELDS, row[1:])) for row in rows]
    expected = [{name: record[name] for name in SOURCE_FIELDS} for record in real_sample]
    mismatches = [(i, a, b) for i, (a, b) in enumerate(zip(loaded, expected)) if a != b]
    assert mismatches == []

    # The quirks that a careless loader would "fix" are all still there.
    values = [value for record in loaded for value in record.values()]
    assert sum("\r\n" in v for v in values if v) == 9
    assert any(v.endswith("Germany  ") for v in values if v)
    assert "우주산업주식회사 " in values
    assert sum(v == "" for v in values) == 1
