"""dlt's working dir is derivable from the warehouse: an unreadable one is set aside with one log
line naming the file, and the load goes on. Real loads over loopback HTTP."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from dmf_watch.pipelines.mfds.load import load_day
from dmf_watch.pipelines.mfds.settings import PIPELINE_NAME
from support.mfds import SERVICE_KEY, START_DATE


@pytest.mark.fault("a corrupted dlt state file")
@pytest.mark.parametrize("broken", ["state.json", "schemas/mfds.schema.json"])
def test_an_unreadable_dlt_state_is_set_aside_in_one_log_line_and_the_next_load_completes(sim_settings, caplog, broken):
    """a corrupted dlt state or schema file: one log line naming it, the next load complete"""
    assert load_day(sim_settings, START_DATE, service_key=SERVICE_KEY).fetch_status == "complete"
    working_dir = sim_settings.state_dir / "dlt" / PIPELINE_NAME
    (working_dir / broken).write_text('{"truncated', encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="dmf_watch.pipelines.mfds.load")

    outcome = load_day(sim_settings, START_DATE + timedelta(days=1), service_key=SERVICE_KEY)

    assert outcome.fetch_status == "complete", outcome.summary()
    lines = [r.getMessage() for r in caplog.records if "could not be read" in r.getMessage()]
    assert len(lines) == 1 and str(working_dir / broken) in lines[0]
    aside = [p for p in working_dir.parent.iterdir() if p.name.startswith(f"{PIPELINE_NAME}.unreadable-")]
    assert len(aside) == 1 and (aside[0] / broken).read_text(encoding="utf-8") == '{"truncated'
