"""The dbt project as data engineers use it: documented, and strict about analysts' seed edits."""
from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import date

import pytest

from dmf.build import build, invoke_dbt
from conftest import SERVICE_KEY, read_jsonl
from scenarios import DaysSource, run_days

DAY_1, DAY_2 = date(2026, 9, 25), date(2026, 10, 8)


@pytest.fixture(scope="module")
def replayed(real_data_dir, tmp_path_factory):
    """A warehouse holding two replayed real days, built by the real pipeline."""
    from settings.config import load_settings

    root = tmp_path_factory.mktemp("replayed")
    settings = load_settings({}).with_paths(
        duckdb_path=root / "dmf.duckdb", reports_dir=root / "reports", state_dir=root / "state",
    )
    settings = dataclasses.replace(settings, agy_binary="/nonexistent/agy")
    tail_a = [r for r in read_jsonl(real_data_dir / "tail_A_2026-09-23.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    tail_b = [r for r in read_jsonl(real_data_dir / "tail_B_2026-10-08.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]
    run_days(settings, DaysSource({DAY_1: tail_a, DAY_2: tail_b}), [(DAY_1, None), (DAY_2, None)], SERVICE_KEY)
    return settings


def test_every_model_seed_macro_and_column_is_described(replayed):
    process = invoke_dbt(replayed, "docs generate")
    assert process.returncode == 0, process.stdout[-2000:]
    target = replayed.state_dir / "dbt" / "target"
    manifest = json.loads((target / "manifest.json").read_text())
    catalog = json.loads((target / "catalog.json").read_text())

    undescribed = []
    for unique_id, node in manifest["nodes"].items():
        if node["package_name"] != "dmf_watch" or node["resource_type"] not in {"model", "seed"}:
            continue
        if not node["description"].strip():
            undescribed.append(unique_id)
        documented = {name: col["description"] for name, col in node["columns"].items()}
        actual = catalog["nodes"].get(unique_id, {}).get("columns", {})
        assert actual, f"{unique_id} is missing from the catalog"
        for column in actual:
            if not documented.get(column.lower(), "").strip():
                undescribed.append(f"{unique_id}.{column}")
    for unique_id, macro in manifest["macros"].items():
        if macro["package_name"] == "dmf_watch" and not macro["description"].strip():
            undescribed.append(unique_id)
    assert undescribed == []


def test_lineage_runs_from_source_to_report_exposure(replayed):
    manifest = json.loads((replayed.state_dir / "dbt" / "target" / "manifest.json").read_text())
    parents = manifest["parent_map"]

    def ancestors(node: str) -> set[str]:
        seen, todo = set(), [node]
        while todo:
            for parent in parents.get(todo.pop(), []):
                if parent not in seen:
                    seen.add(parent)
                    todo.append(parent)
        return seen

    lineage = ancestors("exposure.dmf_watch.daily_report")
    assert {"source.dmf_watch.mfds.dmf_load_items", "source.dmf_watch.mfds.dmf_item_versions"} <= lineage
    assert "model.dmf_watch.stg_mfds__items" in lineage
    assert "model.dmf_watch.dmf_events" in lineage


@pytest.mark.parametrize(
    ("seed", "edit", "failing_test"),
    [
        ("severity_rules.csv", lambda text: text.replace(",INFO,Another new", ",URGENT,Another new"), "accepted_values_severity_rules_severity"),
        ("severity_rules.csv", lambda text: text.replace("160,CHANGED,countries", "150,CHANGED,countries"), "unique_severity_rules_priority"),
        ("severity_rules.csv", lambda text: "\n".join(l for l in text.splitlines() if not l.startswith(("150,", "999,"))) + "\n", "assert_every_field_change_has_a_severity"),
    ],
)
def test_a_malformed_seed_edit_fails_the_build_with_a_named_test(replayed, tmp_path, seed, edit, failing_test):
    project = tmp_path / "project"
    shutil.copytree(replayed.project_dir, project, ignore=shutil.ignore_patterns(
        ".git", ".venv", "target", "logs", "data", "state", "reports", "tests", "__pycache__", "*.egg-info",
    ))
    shutil.copytree(replayed.project_dir / "tests" / "dbt", project / "tests" / "dbt")
    seed_path = project / "seeds" / seed
    seed_path.write_text(edit(seed_path.read_text(encoding="utf-8")), encoding="utf-8")
    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    settings = dataclasses.replace(replayed, project_dir=project, duckdb_path=warehouse, state_dir=tmp_path / "state")

    outcome = build(settings, check_seeds=False)  # dbt's own tests, without the seed pre-check

    assert not outcome.success
    assert any(failure.startswith(failing_test) for failure in outcome.failures), outcome.failures
