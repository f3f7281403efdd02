"""Real change has a way through the plausibility cap: MFDS merging a list triples the registry
overnight; the loader refuses it as implausible in one line naming `dmf accept-load --list-size`,
`dmf status` names the same command, and after a person checked the size and recorded it (who,
why, in the raw layer) the next morning loads and publishes the whole list. Real runs of `dmf`'s
command line over loopback HTTP from the simulator, with real dlt and dbt."""

from __future__ import annotations

from datetime import date

import pytest

from dmf_watch.commands.cli import main
from dmf_watch.simulator.server import SimulatorServer
from support.mfds import SERVICE_KEY, small_registry
from support.scenarios import DaysSource, point_dmf_at, query

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2, DAY_3 = date(2026, 11, 29), date(2026, 11, 30), date(2026, 12, 1)
SIZE = 600


def merged_list(items: list[dict]) -> list[dict]:
    """The list after MFDS merged two more lists of the same size into it: every record of today,
    then twice as many registrations it never listed (numbers of their own)."""
    merged = [dict(item) for item in items]
    for copy in (1, 2):
        for index, item in enumerate(items):
            merged.append(
                dict(
                    item,
                    DMF_PERMIT_NO=f"2026112{copy}-{900 + index}-I-{index}-0{copy}",
                    INGR_KOR_NAME=f"{item.get('INGR_KOR_NAME') or ''} 통합{copy}",
                )
            )
    return merged


@pytest.fixture
def tripled(tmp_path, monkeypatch):
    base = small_registry(SIZE).items_for(1)
    source = DaysSource({DAY_1: base, DAY_2: merged_list(base), DAY_3: merged_list(base)})
    with SimulatorServer(source, service_key=SERVICE_KEY) as server:
        point_dmf_at(monkeypatch, tmp_path, MFDS_API_BASE_URL=server.base_url)
        yield server, tmp_path


@pytest.mark.fault("the registry triples overnight")
def test_a_tripled_registry_is_refused_naming_the_command_then_loaded_after_an_audited_acceptance(tripled, capsys):
    """exit 2 naming `dmf accept-load --list-size 1800`, as status does; accepted by a person (recorded with who/why), the next morning publishes 1,800 records, 1,200 NEW"""
    server, root = tripled
    command = f"dmf accept-load --as-of {DAY_2} --by NAME --reason TEXT --list-size {3 * SIZE}"
    server.set_day(DAY_1)
    assert main(["run", "--as-of", str(DAY_1)]) == 0
    capsys.readouterr()

    server.set_day(DAY_2)
    code = main(["run", "--as-of", str(DAY_2)])

    out, _ = capsys.readouterr()
    assert code == 2
    load_line = next(line for line in out.splitlines() if "  load  " in line)
    assert "the MFDS API reported 1,800 records, more than the 1,600 it can plausibly hold" in load_line
    assert command in load_line, load_line
    rejected = next(line for line in out.splitlines() if "REJECTED" in line)
    assert command in rejected, rejected

    assert main(["status", "--as-of", str(DAY_2), "--days", "2"]) == 0
    status, _ = capsys.readouterr()
    assert f"{DAY_2}  check the list's size on the MFDS site; if it lists 1,800 registrations: {command}" in status

    assert main(["accept-load", "--as-of", str(DAY_1), "--by", "kim", "--reason", "x", "--list-size", "1800"]) == 1
    assert "was not refused by the plausibility cap" in capsys.readouterr().err
    assert main(["accept-load", "--as-of", str(DAY_2), "--by", "kim", "--reason", "x", "--list-size", "1000"]) == 1
    assert "more than the 1,000 given" in capsys.readouterr().err
    code = main(
        [
            "accept-load",
            "--as-of",
            str(DAY_2),
            "--by",
            "kim",
            "--reason",
            "MFDS merged the API and GMP lists (notice of 2026-11-30); 1,800 on the site",
            "--list-size",
            "1800",
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    assert f"{DAY_2}  list size 1,800 accepted by kim: MFDS merged the API and GMP lists" in out
    assert "loads now believe a totalCount up to 3,600" in out
    ((by, reason, size, reported),) = query(
        _settings(root), "select decided_by, reason, list_size, reported_count from mfds_raw.list_size_decisions"
    )
    assert (by, size, reported) == ("kim", 1800, 1800) and reason.startswith("MFDS merged")

    server.set_day(DAY_3)  # the next honest morning: the same merged list
    code = main(["run", "--as-of", str(DAY_3)])

    out, _ = capsys.readouterr()
    assert code == 0, out
    assert "complete, 1,800 records" in out
    ((verdict,),) = query(_settings(root), "select verdict from marts.dmf_day_decisions where as_of_date = ?", [DAY_3])
    assert verdict == "accepted"
    events = dict(
        query(
            _settings(root),
            "select event_type, count(*) from marts.dmf_events where as_of_date = ? group by 1",
            [DAY_3],
        )
    )
    assert events == {"NEW": 2 * SIZE}, events  # every merged registration NEW, nothing withdrawn or changed
    assert main(["status", "--as-of", str(DAY_3), "--days", "1"]) == 0
    assert "Nothing to do" in capsys.readouterr().out


def _settings(root):
    from dmf_watch.core.config import load_settings

    return load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state"
    )
