"""`dmf evidence`: the raw records, loads and decisions behind every event of one registration.

One small world of four real days (the 367-record MFDS sample): record X (a real record whose
manufacturer text ends in CR/LF) is absent on day 1, listed on day 2 (NEW), changed and renumbered
on day 3 (CHANGED), gone on day 4 (WITHDRAWN) with four other records, so the withdrawn_share gate
rejects day 4 and a person accepts it with `dmf accept-load`. The files are checked against what
the simulator served and against the raw tables read here, never against the command's own output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from dmf_watch.pipelines.mfds.row_versions import row_hash
from dmf_watch.pipelines.mfds.settings import COLUMN_NAMES, SOURCE_FIELDS
from support.mfds import REAL_DATA_DIR, SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, run_days, settings_in

pytestmark = pytest.mark.e2e  # runs dbt and whole days: the slow tier

PROJECT = Path(__file__).resolve().parents[2]
DAYS = [date(2026, 10, 5), date(2026, 10, 6), date(2026, 10, 7), date(2026, 10, 8)]
X_INDEX = 12  # 20050831-18-C-99-04: MNFCTR_NAME and MNFCTR_PLACE end in "\r\n"
ALSO_WITHDRAWN_ON_DAY_4 = (300, 301, 302, 303)  # 5 of 367 withdrawn > 1%: the gate fires
ACCEPTED_BY = "김검토"
RENUMBERED = "20261007-18-C-901-04"  # day 3 gives X a new number along with the manufacturer edit


def served_days() -> dict[date, list[dict]]:
    sample = read_jsonl(REAL_DATA_DIR / "sample_2026-10-08.jsonl")
    x = sample[X_INDEX]
    changed = dict(x, DMF_PERMIT_NO=RENUMBERED, MNFCTR_NAME="Sterling Pharma Ringaskiddy Limited\r\n")
    day_1 = [r for i, r in enumerate(sample) if i != X_INDEX]
    day_2 = list(sample)
    day_3 = [changed if i == X_INDEX else r for i, r in enumerate(sample)]
    day_4 = [r for i, r in enumerate(sample) if i != X_INDEX and i not in ALSO_WITHDRAWN_ON_DAY_4]
    return dict(zip(DAYS, (day_1, day_2, day_3, day_4), strict=True))


def dmf(settings, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    env.update(
        DMF_DUCKDB_PATH=str(settings.duckdb_path),
        DMF_STATE_DIR=str(settings.state_dir),
        DMF_REPORTS_DIR=str(settings.reports_dir),
        DMF_AI_DISABLED="1",
        MFDS_SERVICE_KEY=SERVICE_KEY,
    )
    return subprocess.run(
        [sys.executable, "-m", "dmf_watch.commands.cli", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence")
    settings = settings_in(root)
    days = served_days()
    saved = os.environ.get("DMF_AI_DISABLED")
    os.environ["DMF_AI_DISABLED"] = "1"
    try:
        outcomes = run_days(settings, DaysSource(days), [(day, None) for day in DAYS], SERVICE_KEY)
    finally:
        if saved is None:
            os.environ.pop("DMF_AI_DISABLED")
        else:
            os.environ["DMF_AI_DISABLED"] = saved
    assert [o.exit_code for o in outcomes] == [0, 0, 0, 2], [(o.verdict, o.reason) for o in outcomes]
    accepted = dmf(settings, "accept-load", "--as-of", str(DAYS[3]), "--by", ACCEPTED_BY, "--reason", "식약처 확인")
    assert accepted.returncode == 0, accepted.stderr
    out = root / "evidence_out"
    ran = dmf(settings, "evidence", "--permit-no", days[DAYS[1]][X_INDEX]["DMF_PERMIT_NO"], "--out", str(out))
    assert ran.returncode == 0, ran.stderr
    return settings, days, out, ran


def raw_record(settings, as_of: date, permit_no: str) -> tuple:
    """X's 9 fields as the raw layer holds them for that day's load, read here on its own."""
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        rows = con.execute(
            f"select {', '.join('v.' + c for c in COLUMN_NAMES)}, m.item_position, m.page_no "
            "from mfds_raw.dmf_load_items m join mfds_raw.dmf_item_versions v on v.row_hash = m.row_hash "
            "join mfds_raw.load_runs r on r.load_id = m.load_id "
            "where m.as_of_date = ? and v.dmf_permit_no = ? and r.fetch_status = 'complete'",
            [as_of, permit_no],
        ).fetchall()
    assert len(rows) == 1, rows
    return rows[0]


def independent_json(values) -> bytes:
    return (json.dumps(dict(zip(SOURCE_FIELDS, values)), ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def test_one_folder_per_event_with_its_records_loads_and_decision(world):
    _, _, out, ran = world
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            f"{DAYS[1]}_NEW",
            f"{DAYS[2]}_CHANGED",
            f"{DAYS[3]}_WITHDRAWN",
            "README.txt",
            "SHA256SUMS",
            "check_row_hash.py",
        ]
    )
    common = {"event.json", "decision.json"}
    assert {p.name for p in (out / f"{DAYS[1]}_NEW").iterdir()} == common | {"record_after.json", "load_after.json"}
    assert {p.name for p in (out / f"{DAYS[2]}_CHANGED").iterdir()} == common | {
        "record_after.json",
        "load_after.json",
        "record_before.json",
        "load_before.json",
    }
    assert {p.name for p in (out / f"{DAYS[3]}_WITHDRAWN").iterdir()} == common | {
        "record_before.json",
        "load_before.json",
    }
    readme = (out / "README.txt").read_text(encoding="utf-8")
    assert "sha256sum -c SHA256SUMS" in readme and "검증" in readme and "How to check" in readme
    assert "sha256sum -c SHA256SUMS" in ran.stdout


def test_the_manifest_verifies_with_sha256sum_and_catches_an_edit(world, tmp_path):
    _, _, out, _ = world
    listed = [line.split("  ", 1)[1] for line in (out / "SHA256SUMS").read_text(encoding="utf-8").splitlines()]
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.name != "SHA256SUMS")
    assert sorted(listed) == on_disk
    checked = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count(": OK") == len(on_disk)
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    record = edited / f"{DAYS[2]}_CHANGED" / "record_after.json"
    record.write_bytes(record.read_bytes().replace(b"Sterling", b"Sterlinq"))
    tampered = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=edited, capture_output=True, text=True)
    assert tampered.returncode != 0 and "record_after.json: FAILED" in tampered.stdout


def test_every_record_file_is_the_raw_layers_record_as_served(world):
    settings, days, out, _ = world
    expected = {
        (f"{DAYS[1]}_NEW", "after"): (DAYS[1], days[DAYS[1]][X_INDEX]),
        (f"{DAYS[2]}_CHANGED", "before"): (DAYS[1], days[DAYS[1]][X_INDEX]),
        (f"{DAYS[2]}_CHANGED", "after"): (DAYS[2], days[DAYS[2]][X_INDEX]),
        (f"{DAYS[3]}_WITHDRAWN", "before"): (DAYS[2], days[DAYS[2]][X_INDEX]),
    }
    for (folder, side), (as_of, served) in expected.items():
        data = (out / folder / f"record_{side}.json").read_bytes()
        *values, position, page = raw_record(settings, as_of, served["DMF_PERMIT_NO"])
        assert data == independent_json(values), (folder, side)
        # the served record, key order, CR/LF and all
        assert list(json.loads(data).items()) == list(served.items()), (folder, side)
        load = json.loads((out / folder / f"load_{side}.json").read_text(encoding="utf-8"))
        assert load["row_hash"] == row_hash(tuple(json.loads(data).values())) == row_hash(tuple(values))
        assert load["as_of_date"] == str(as_of)
        assert (load["item_position"], load["page_no"]) == (position, page) == (X_INDEX, 1)
        assert load["fetch_started_at"] <= load["fetch_finished_at"]
    assert (
        "\r\n" in json.loads((out / f"{DAYS[1]}_NEW" / "record_after.json").read_text(encoding="utf-8"))["MNFCTR_NAME"]
    )


def test_the_row_hash_check_shipped_in_the_folder_recomputes_and_fails_on_an_edit(world, tmp_path):
    _, _, out, _ = world
    checked = subprocess.run([sys.executable, "check_row_hash.py"], cwd=out, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("OK  ") == 4
    edited = tmp_path / "edited"
    shutil.copytree(out, edited)
    record = edited / f"{DAYS[1]}_NEW" / "record_after.json"
    record.write_bytes(record.read_bytes().replace(b"\\r\\n", b"", 1))  # a CR/LF dropped: another record
    bad = subprocess.run([sys.executable, "check_row_hash.py"], cwd=edited, capture_output=True, text=True)
    assert bad.returncode == 1 and f"BAD {DAYS[1]}_NEW/record_after.json" in bad.stdout


def test_no_file_holds_the_service_key_and_the_request_names_the_page(world):
    _, _, out, _ = world
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SERVICE_KEY.encode() not in data and b"serviceKey" not in data, path
    request = json.loads((out / f"{DAYS[1]}_NEW" / "load_after.json").read_text(encoding="utf-8"))["request"]
    assert request["url"].startswith("http://127.0.0.1:")
    assert request["url"].endswith("/getMdcDmfList01?pageNo=1&numOfRows=500&type=json")


def test_the_decision_says_automatic_for_gate_passed_days_and_names_who_accepted_the_gated_day(world):
    settings, _, out, _ = world
    for folder in (f"{DAYS[1]}_NEW", f"{DAYS[2]}_CHANGED"):
        decision = json.loads((out / folder / "decision.json").read_text(encoding="utf-8"))
        assert decision["verdict"] == "accepted"
        assert decision["published_by"].startswith("automatic")
        assert decision["gates"] and not any(g["fired"] for g in decision["gates"])
    decision = json.loads((out / f"{DAYS[3]}_WITHDRAWN" / "decision.json").read_text(encoding="utf-8"))
    assert decision["verdict"] == "accepted"
    assert decision["published_by"]["decided_by"] == ACCEPTED_BY
    assert decision["published_by"]["decision"] == "accept"
    assert decision["published_by"]["reason"] == "식약처 확인"
    assert [g["signal_id"] for g in decision["gates"] if g["fired"]] == ["withdrawn_share"]
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        ((load_id,),) = con.execute(
            "select load_id from mfds_raw.load_decisions where as_of_date = ? and decided_by = ?",
            [DAYS[3], ACCEPTED_BY],
        ).fetchall()
    assert decision["event_load_id"] == load_id


def test_refusals_are_one_line_and_write_nothing(world, tmp_path):
    settings, days, out, _ = world
    before = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())).hexdigest()
    permit_no = days[DAYS[1]][X_INDEX]["DMF_PERMIT_NO"]
    again = dmf(settings, "evidence", "--permit-no", permit_no, "--out", str(out))
    assert again.returncode == 1 and len(again.stderr.strip().splitlines()) == 1 and "not empty" in again.stderr
    after = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())).hexdigest()
    assert before == after
    for args in (["--permit-no", "19990101-000-X-0"], ["--dmf-key", "no-such-key"]):
        target = tmp_path / "new"
        refused = dmf(settings, "evidence", *args, "--out", str(target))
        assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert not target.exists()
        assert not [p for p in tmp_path.iterdir()]


def test_the_registration_is_found_by_its_old_and_its_new_number_and_by_its_dmf_key(world, tmp_path):
    settings, days, out, _ = world
    first = json.loads((out / f"{DAYS[1]}_NEW" / "event.json").read_text(encoding="utf-8"))
    assert first["permit_no"] == days[DAYS[1]][X_INDEX]["DMF_PERMIT_NO"] != RENUMBERED
    for args in (["--permit-no", RENUMBERED], ["--dmf-key", first["dmf_key"]]):
        again = tmp_path / args[0].strip("-")
        ran = dmf(settings, "evidence", *args, "--out", str(again))
        assert ran.returncode == 0, ran.stderr
        assert (again / "SHA256SUMS").read_bytes() == (out / "SHA256SUMS").read_bytes()
