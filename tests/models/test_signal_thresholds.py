"""A threshold has one home, the dbt var: the texts the report shows are rendered from it.

Real parts: the simulator over HTTP, dlt into DuckDB, `dbt build` with and without `--vars`, the
daily xlsx read back with openpyxl."""

from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import openpyxl
import pytest

from dmf_watch.reports.daily_report import SIGNALS, render_daily
from dmf_watch.transform.build import invoke_dbt
from support.mfds import SERVICE_KEY, small_registry
from support.report_warehouse import rendered_catalog
from support.scenarios import query, run_days

pytestmark = pytest.mark.e2e

START = date(2026, 11, 2)
DAYS = [START, START + timedelta(days=1)]
SIGNAL_TEXTS = (
    "select signal_id, description, description_ko, what_to_check_ko from marts.dmf_signals "
    "where as_of_date = ? order by signal_id"
)


def _report_signal_text(settings, as_of: date, signal_id: str) -> str:
    """The '설명과 확인할 것' cell of a signal's row on the report's signal sheet."""
    sheet = openpyxl.load_workbook(render_daily(settings, as_of), read_only=True)[SIGNALS]
    rows = [row for row in sheet.iter_rows(values_only=True) if any(cell is not None for cell in row)]
    header = next(row for row in rows if "신호 ID" in row and "설명과 확인할 것" in row)
    id_col, text_col = header.index("신호 ID"), header.index("설명과 확인할 것")
    return next(row[text_col] for row in rows if row[id_col] == signal_id)


@pytest.fixture(scope="module")
def two_days(tmp_path_factory):
    root = tmp_path_factory.mktemp("thresholds")
    from dmf_watch.core.config import load_settings

    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb",
        reports_dir=root / "reports",
        state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    outcomes = run_days(settings, small_registry(300, START), [(day, None) for day in DAYS], SERVICE_KEY)
    assert [o.exit_code for o in outcomes] == [0, 0]
    return settings


def test_a_threshold_given_with_vars_changes_the_report_text_and_the_mart(two_days):
    settings = two_days
    assert "97% 미만" in _report_signal_text(settings, DAYS[1], "total_count_drop")

    built = invoke_dbt(settings, "build", "--vars", "{total_count_drop_ratio: 0.9, http_retry_max: 4}")
    assert built.returncode == 0, built.output[-2000:]

    text = _report_signal_text(settings, DAYS[1], "total_count_drop")
    assert "90% 미만" in text and "97%" not in text and "{" not in text
    assert "HTTP 재시도가 4회를" in _report_signal_text(settings, DAYS[1], "http_retry_surge")
    # the report test fixture renders the seed by the same rule as the dbt macro
    by_id = {row["signal_id"]: row for row in rendered_catalog({"total_count_drop_ratio": 0.9, "http_retry_max": 4})}
    for signal_id, description, description_ko, what_to_check_ko in query(settings, SIGNAL_TEXTS, [DAYS[1]]):
        expected = by_id[signal_id]
        assert description.startswith(expected["description"] + ". " + expected["what_to_check"])
        assert (description_ko, what_to_check_ko) == (expected["description_ko"], expected["what_to_check_ko"])
