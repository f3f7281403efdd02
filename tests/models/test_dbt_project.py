"""The dbt project as data engineers use it: documented, and strict about analysts' seed edits.

dbt parses a project once per path and content here (support/shared_manifest.py keeps the last
four parses), so the tests that edit the project share one copy of it, put back after each test:
an edit several tests make (a severity not allowed, an analyst's watchlist row) is parsed once,
and so is the copy as the repository has it. The tests of the repository's own project come
first, so that the copies' parses do not push its parse out before they are done. The seed-layer
and logging tests read one sequence of builds (`seed_edits`) instead of building each their own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import pytest
import yaml

from dmf_watch.transform.build import SEED_ONLY_MODELS, BuildOutcome, build, invoke_dbt
from support.mfds import SERVICE_KEY, read_jsonl
from support.scenarios import DaysSource, run_days
from support.worlds import REAL_TAILS

pytestmark = pytest.mark.e2e  # runs dbt or a whole day: the slow tier

DAY_1, DAY_2 = date(2026, 9, 25), date(2026, 10, 8)
PROJECT_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def replayed(shelf, tmp_path_factory):
    """A warehouse holding two replayed real days, built by the real pipeline."""
    with shelf.copied(REAL_TAILS, tmp_path_factory.mktemp("replayed"), agy_binary="/nonexistent/agy") as settings:
        yield settings


@pytest.fixture(scope="module")
def documented(replayed) -> tuple:
    """`dbt docs generate` on the replayed warehouse, once: the process, and the manifest and
    catalog it wrote, read before any other command of the module writes to the same target."""
    process = invoke_dbt(replayed, "docs generate")
    target = replayed.state_dir / "dbt" / "target"
    written = [target / "manifest.json", target / "catalog.json"]
    return process, *(json.loads(path.read_text()) if path.is_file() else {} for path in written)


@pytest.fixture(scope="module")
def project_copy(replayed, tmp_path_factory) -> Path:
    """The dbt project with its singular tests, without the checkout's other tests and state."""
    project = tmp_path_factory.mktemp("edited") / "project"
    shutil.copytree(
        replayed.project_dir,
        project,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "target", "logs", "data", "state", "reports", "tests", "__pycache__", "*.egg-info"
        ),
    )
    shutil.copytree(replayed.project_dir / "tests" / "dbt", project / "tests" / "dbt")
    return project


@contextmanager
def _put_back(project: Path) -> Iterator[Path]:
    """`project`, every file of it put back afterwards as it is now (a file added is removed)."""
    files = {path: path.read_bytes() for path in project.rglob("*") if path.is_file()}
    try:
        yield project
    finally:
        for path in [path for path in project.rglob("*") if path.is_file() and path not in files]:
            path.unlink()
        for path, content in files.items():
            if not path.is_file() or path.read_bytes() != content:
                path.write_bytes(content)


@pytest.fixture
def project(project_copy) -> Iterator[Path]:
    """The module's copy of the project as the repository has it: a test may edit it."""
    with _put_back(project_copy):
        yield project_copy


def test_every_model_seed_macro_and_column_is_described(documented):
    process, manifest, catalog = documented
    assert process.returncode == 0, process.output[-2000:]

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


def test_lineage_runs_from_source_to_report_exposure(documented):
    process, manifest, _ = documented
    assert process.returncode == 0, process.output[-2000:]
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


# --- the marts people query: contracts and grains ---------------------------------------------

MARTS_DIR = PROJECT_DIR / "models" / "marts"
# models/marts and every folder in it (reporting/, evidence/, ...): a new folder of marts is held to the same rules
MART_DIRS = (MARTS_DIR, *sorted(path for path in MARTS_DIR.iterdir() if path.is_dir()))
DUPLICATED_MARTS = ("dmf_signals", "dmf_event_field_changes", "dmf_registration_history")


def mart_properties() -> dict[str, dict]:
    """The YAML properties of every model whose SQL file sits in models/marts or a folder in it."""
    sql = {path.stem for folder in MART_DIRS for path in folder.glob("*.sql")}
    found = {}
    for folder in MART_DIRS:
        for path in folder.glob("_*__models.yml"):
            for model in yaml.safe_load(path.read_text(encoding="utf-8"))["models"]:
                found[model["name"]] = model
    assert sql <= set(found), f"marts without YAML: {sorted(sql - set(found))}"
    return {name: found[name] for name in sorted(sql)}


def test_every_mart_has_an_enforced_contract_with_a_type_per_column():
    untyped = {
        name: [c["name"] for c in model["columns"] if not c.get("data_type")]
        for name, model in mart_properties().items()
    }
    unenforced = [
        name
        for name, model in mart_properties().items()
        if not model.get("config", {}).get("contract", {}).get("enforced")
    ]
    assert unenforced == []
    assert {name: cols for name, cols in untyped.items() if cols} == {}


def test_every_mart_has_a_grain_test():
    def grain(model: dict) -> bool:
        compound = any(
            "unique_combination_of_columns" in test for test in model.get("data_tests", []) if isinstance(test, dict)
        )
        return compound or any("unique" in (c.get("data_tests") or []) for c in model["columns"])

    assert [name for name, model in mart_properties().items() if not grain(model)] == []


def _results(settings) -> dict[str, str]:
    results = json.loads((settings.state_dir / "dbt" / "target" / "run_results.json").read_text())
    return {r["unique_id"].split(".")[2]: r["status"] for r in results["results"] if r["unique_id"].startswith("test.")}


def test_grain_tests_pass_on_built_marts_and_fail_on_a_duplicated_row(replayed, tmp_path):
    process = invoke_dbt(replayed, "test", "--select", "test_name:unique_combination_of_columns")
    passed = _results(replayed)
    assert process.returncode == 0, process.output[-2000:]
    # 13 marts (models/marts/registry and evidence included), int_registration_versions,
    # int_registration_versions_watched and int_event_evidence
    assert len(passed) == 16 and set(passed.values()) == {"pass"}

    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    with duckdb.connect(str(warehouse)) as con:  # the tables dbt built and tested (publish_marts copies them)
        for mart in DUPLICATED_MARTS:
            assert con.execute(f"select count(*) from marts_build.{mart}").fetchone()[0] > 0, mart
            con.execute(f"insert into marts_build.{mart} select * from marts_build.{mart} limit 1")
    duplicated = dataclasses.replace(replayed, duckdb_path=warehouse, state_dir=tmp_path / "state")

    process = invoke_dbt(
        duplicated,
        "test",
        "--select",
        *[f"{mart},test_name:unique_combination_of_columns" for mart in DUPLICATED_MARTS],
    )

    assert process.returncode != 0
    failed = _results(duplicated)
    assert sorted(failed.values()) == ["fail"] * len(DUPLICATED_MARTS)
    assert {
        mart
        for mart in DUPLICATED_MARTS
        for name in failed
        if name.startswith(f"unique_combination_of_columns_{mart}_")
    } == set(DUPLICATED_MARTS)


def test_a_key_test_fails_on_a_null_key_and_on_a_key_held_twice(replayed, tmp_path):
    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    settings = dataclasses.replace(replayed, duckdb_path=warehouse, state_dir=tmp_path / "state")
    selected = ("--select", "int_loads_sequenced,test_name:primary_key")
    assert invoke_dbt(settings, "test", *selected).returncode == 0
    assert set(_results(settings).values()) == {"pass"} and len(_results(settings)) == 2  # load_id, load_seq

    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "insert into intermediate.int_loads_sequenced "
            "select * replace (null as load_id) from intermediate.int_loads_sequenced limit 1"
        )
    process = invoke_dbt(settings, "test", *selected)

    assert process.returncode != 0
    # the null load_id, and the load_seq the copied row now shares
    assert sorted(_results(settings).values()) == ["fail", "fail"]
    with duckdb.connect(str(warehouse)) as con:
        con.execute("delete from intermediate.int_loads_sequenced where load_id is null")
    assert invoke_dbt(settings, "test", *selected).returncode == 0


def _unit_test_results(settings) -> dict[str, str]:
    results = json.loads((settings.state_dir / "dbt" / "target" / "run_results.json").read_text())
    return {r["unique_id"]: r["status"] for r in results["results"] if r["unique_id"].startswith("unit_test.")}


def test_the_morning_build_leaves_unit_tests_out_and_dmf_build_runs_every_one(replayed, tmp_path):
    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    copied = dataclasses.replace(replayed, duckdb_path=warehouse, state_dir=tmp_path / "state")

    morning = build(copied)
    assert morning.success, morning.failures
    assert _unit_test_results(copied) == {}

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MFDS_", "DMF_"))}
    process = subprocess.run(
        [str(Path(sys.executable).with_name("dmf")), "build"],
        cwd=tmp_path,
        env=dict(env, DMF_DUCKDB_PATH=str(warehouse), DMF_STATE_DIR=str(copied.state_dir)),
        capture_output=True,
        text=True,
    )
    assert process.returncode == 0, process.stderr[-2000:]
    manifest = json.loads((copied.state_dir / "dbt" / "target" / "manifest.json").read_text())
    declared = set(manifest["unit_tests"])
    assert len(declared) >= 10
    assert _unit_test_results(copied) == dict.fromkeys(declared, "pass")


def test_the_morning_build_tests_the_per_record_tables_on_its_new_load_and_dmf_build_on_all_history(
    replayed, real_data_dir, tmp_path
):
    """The per-record tables hold every record of every load, so the morning job's data tests read
    only the loads it builds for the first time: a defect planted in an old load passes it,
    while any other build (here `build()`, as `dmf build` and CI make it) finds it."""
    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    copied = dataclasses.replace(replayed, duckdb_path=warehouse, state_dir=tmp_path / "state")
    with duckdb.connect(str(warehouse)) as con:
        ((old_load,),) = con.execute(
            "select load_id from mfds_raw.load_runs where as_of_date = ? and fetch_status = 'complete'", [DAY_1]
        ).fetchall()
        con.execute(
            "insert into intermediate.int_registrations_keyed "
            "select * from intermediate.int_registrations_keyed where load_id = ? limit 1",
            [old_load],
        )
    day_3 = date(2026, 10, 9)
    tail_b = [r for r in read_jsonl(real_data_dir / "tail_B_2026-10-08.jsonl") if r["DMF_PERMIT_DATE"] >= "2026-07-31"]

    (morning,) = run_days(copied, DaysSource({day_3: tail_b}), [(day_3, None)], SERVICE_KEY)

    assert morning.verdict == "accepted", morning.reason
    results = _results(copied)
    key_test = next(name for name in results if name.startswith("primary_key_int_registrations_keyed_record_id"))
    assert results[key_test] == "pass"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        ((new_load,),) = con.execute("select load_id from mfds_raw.load_runs where as_of_date = ?", [day_3]).fetchall()
    compiled = next((copied.state_dir / "dbt" / "target" / "compiled").rglob(f"{key_test}.sql")).read_text()
    assert f"load_id in ('{new_load}')" in compiled and old_load not in compiled

    everything = build(copied)

    assert not everything.success
    assert any(failure.startswith("primary_key_int_registrations_keyed_record_id") for failure in everything.failures)


def _seed_layer_results(settings) -> set[str]:
    """The seeds and the seed-only models the last build ran."""
    results = json.loads((settings.state_dir / "dbt" / "target" / "run_results.json").read_text())
    ran = {r["unique_id"] for r in results["results"]}
    return {uid.split(".")[2] for uid in ran if uid.startswith("seed.")} | {
        name for name in SEED_ONLY_MODELS if f"model.dmf_watch.{name}" in ran
    }


def _on_copy(replayed, project: Path, tmp_path: Path):
    """Settings for a copy of the replayed warehouse, its state in `tmp_path`, and `project` (the
    module's editable copy of the project): a test may edit the project and build."""
    warehouse = tmp_path / "dmf.duckdb"
    shutil.copy(replayed.duckdb_path, warehouse)
    return dataclasses.replace(replayed, project_dir=project, duckdb_path=warehouse, state_dir=tmp_path / "state")


def unknown_severity(text: str) -> str:
    """severity_rules.csv with a severity that is none of the accepted ones: the edit `seed_edits`
    and the malformed-seed test make, so that the module parses it once."""
    return text.replace(",HIGH,", ",URGENT,", 1)


# An analyst's new watched ingredient: the edit `seed_edits` and the upgrade test make, parsed once.
ANALYST_ROW = "ingredient,세파클러,Added by an analyst,\n"


@dataclass(frozen=True)
class Built:
    outcome: BuildOutcome
    seed_layer: set[str]  # the seeds and seed-only models it ran (_seed_layer_results)
    log: str  # what dbt wrote to its log file for it


def _last_dbt_invocation_log(settings) -> str:
    """The lines dbt wrote to its log file for the last command of this state dir."""
    text = (settings.state_dir / "logs" / "dbt.log").read_text(encoding="utf-8")
    return text[text.rindex("Running with dbt=") :]


@pytest.fixture(scope="module")
def seed_edits(replayed, project_copy, tmp_path_factory) -> tuple[dict[str, Built], dict[str, list]]:
    """A copy of the replayed warehouse built as an analyst edits the project: once as `dmf build`
    and CI build (not the morning's way), then mornings: nothing changed; severity_rules given a
    severity that is not allowed (the build fails); the file put back; a watchlist row added;
    nothing changed; a macro edited. Each build, and the added row in the seed and its model.

    The seed-layer and logging tests both read it: the failed morning and the build that is not
    a morning were the logging test's own two builds, on the same files."""
    settings = _on_copy(replayed, project_copy, tmp_path_factory.mktemp("seed_edits"))
    watchlist = project_copy / "seeds" / "watchlist.csv"
    rules = project_copy / "seeds" / "severity_rules.csv"
    macro = project_copy / "macros" / "text_normalization.sql"
    builds: dict[str, Built] = {}

    def built(step: str, **how) -> None:
        outcome = build(settings, **how)
        builds[step] = Built(outcome, _seed_layer_results(settings), _last_dbt_invocation_log(settings))

    with _put_back(project_copy):
        listed, ruled = watchlist.read_text(encoding="utf-8"), rules.read_text(encoding="utf-8")
        built("not a morning")
        built("nothing changed", new_loads_only=True)
        rules.write_text(unknown_severity(ruled), encoding="utf-8")
        built("severity not allowed", check_seeds=False, new_loads_only=True)
        rules.write_text(ruled, encoding="utf-8")  # the files are those of the last good build again
        built("rules put back", new_loads_only=True)
        watchlist.write_text(listed + ANALYST_ROW, encoding="utf-8")
        built("watchlist row added", new_loads_only=True)
        with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
            added = {
                "seed": con.execute("select count(*) from seeds.watchlist where term = '세파클러'").fetchall(),
                "model": con.execute(
                    "select count(*) from intermediate.int_watchlist_terms where watch_term = '세파클러'"
                ).fetchall(),
            }
        built("nothing changed again", new_loads_only=True)
        macro.write_text(macro.read_text(encoding="utf-8") + "\n{# an edit #}\n", encoding="utf-8")
        built("macro edited", new_loads_only=True)
    return builds, added


def test_the_morning_build_loads_the_seeds_again_only_when_their_files_changed_or_the_last_build_failed(
    seed_edits,
):
    """Seeds the latest successful build loaded, and the models that read only them, are kept as
    they are; an edited seed file or macro, or a seed a failed build may have loaded and its
    tests refused, is loaded (and tested) again with those models."""
    builds, added = seed_edits

    assert builds["not a morning"].outcome.success
    assert builds["nothing changed"].outcome.success
    assert builds["nothing changed"].seed_layer == set()

    assert not builds["severity not allowed"].outcome.success
    assert builds["rules put back"].outcome.success
    assert "severity_rules" in builds["rules put back"].seed_layer

    assert builds["watchlist row added"].outcome.success
    assert {"watchlist", "int_watchlist_terms"} <= builds["watchlist row added"].seed_layer
    assert added == {"seed": [(1,)], "model": [(1,)]}

    assert builds["nothing changed again"].outcome.success
    assert builds["nothing changed again"].seed_layer == set()
    assert builds["macro edited"].outcome.success
    assert "int_watchlist_terms" in builds["macro edited"].seed_layer


def test_an_upgrade_that_adds_seed_columns_builds_on_a_warehouse_of_the_old_columns(replayed, project, tmp_path):
    """A warehouse built before severity_rules had rationale_ko and the watchlist had owner: the
    morning build after `git pull` loads the new columns instead of failing the seeds' insert."""
    settings = _on_copy(replayed, project, tmp_path)
    with duckdb.connect(str(settings.duckdb_path)) as con:
        con.execute("alter table seeds.severity_rules drop column rationale_ko")
        con.execute("alter table seeds.watchlist drop column owner")
    # The seed files changed with the release. Any change of them reloads every seed (one digest
    # covers them all, build.seed_layer_digest), so the analyst's row stands for the release's edit.
    watchlist = project / "seeds" / "watchlist.csv"
    watchlist.write_text(watchlist.read_text(encoding="utf-8") + ANALYST_ROW, encoding="utf-8")
    assert build(settings, new_loads_only=True).success
    assert {"severity_rules", "watchlist"} <= _seed_layer_results(settings)
    with duckdb.connect(str(settings.duckdb_path), read_only=True) as con:
        assert con.execute("select count(*) from seeds.severity_rules where rationale_ko is null").fetchall() == [(0,)]
        assert con.execute("select count(owner) from seeds.watchlist").fetchall()[0][0] > 0


def test_the_morning_build_logs_each_result_and_failure_but_not_each_statement(seed_edits):
    """dmf run's build writes dbt's log file at info level (dmf_watch/transform/build.py _build): an operator still
    reads there what ran, how long it took and which test failed with its message; the SQL each
    statement ran is left to the target dir, and any other build logs it as dbt does (debug)."""
    builds, _ = seed_edits
    morning = builds["severity not allowed"]  # a morning whose severity_rules holds a severity not allowed

    assert not morning.outcome.success
    log = morning.log
    (failed,) = [failure.split(":")[0] for failure in morning.outcome.failures]
    assert failed.startswith("accepted_values_severity_rules")
    assert f"FAIL 1 {failed} " in log and f"Failure in test {failed} " in log
    assert "OK created sql incremental model intermediate.int_registration_links" in log
    assert "SQL status" not in log and "create temporary table" not in log

    assert builds["not a morning"].outcome.success
    assert "SQL status" in builds["not a morning"].log


def test_the_seed_only_models_are_the_models_that_read_only_seeds_and_no_var(documented):
    """The morning build may keep SEED_ONLY_MODELS as they are only because the seeds' digest
    covers all they are built from: seeds, macros, their own files. A model that reads only
    seeds but renders a var (int_signal_catalog_rendered) is built every time: `dbt build --vars`
    changes it without changing a file.

    The graph is the manifest `docs generate` wrote (the documentation tests read it too): the
    project as dbt parsed it, without a parse of its own."""
    process, manifest, _ = documented
    assert process.returncode == 0, process.output[-2000:]
    models = {node["name"]: node for node in manifest["nodes"].values() if node["resource_type"] == "model"}
    reads_only_seeds: set[str] = set()  # seeds, or models that read only seeds, all the way up
    while True:
        found = {
            name
            for name, node in models.items()
            if node["depends_on"]["nodes"]
            and all(
                parent.startswith("seed.") or parent.split(".")[-1] in reads_only_seeds
                for parent in node["depends_on"]["nodes"]
            )
        }
        if found == reads_only_seeds:
            break
        reads_only_seeds = found
    macros = manifest["macros"]

    def macro_sql(unique_ids: list[str]) -> Iterator[str]:
        for unique_id in unique_ids:
            if unique_id in macros:
                yield macros[unique_id]["macro_sql"]
                yield from macro_sql(macros[unique_id]["depends_on"]["macros"])

    reads_a_var = {
        name
        for name in reads_only_seeds
        if any("var(" in sql for sql in (models[name]["raw_code"], *macro_sql(models[name]["depends_on"]["macros"])))
    }

    assert set(SEED_ONLY_MODELS) == reads_only_seeds - reads_a_var
    assert reads_a_var == {"int_signal_catalog_rendered"}


@pytest.mark.parametrize(
    ("seed", "edit", "failing_test"),
    [
        (
            "severity_rules.csv",
            unknown_severity,  # the edit of the seed-layer tests above: parsed once
            "accepted_values_severity_rules_severity",
        ),
        (
            "severity_rules.csv",
            lambda text: text.replace("160,CHANGED,countries", "150,CHANGED,countries"),
            "unique_severity_rules_priority",
        ),
        (
            "severity_rules.csv",
            lambda text: "\n".join(line for line in text.splitlines() if not line.startswith(("150,", "999,"))) + "\n",
            "assert_every_field_change_has_a_severity",
        ),
    ],
)
def test_a_malformed_seed_edit_fails_the_build_with_a_named_test(replayed, project, tmp_path, seed, edit, failing_test):
    seed_path = project / "seeds" / seed
    seed_path.write_text(edit(seed_path.read_text(encoding="utf-8")), encoding="utf-8")
    settings = _on_copy(replayed, project, tmp_path)

    outcome = build(settings, check_seeds=False)  # dbt's own tests, without the seed pre-check

    assert not outcome.success
    assert any(failure.startswith(failing_test) for failure in outcome.failures), outcome.failures


def test_a_mart_whose_sql_breaks_its_contract_fails_the_build(replayed, project, tmp_path):
    marts_yml = project / "models" / "marts" / "_marts__models.yml"
    text = marts_yml.read_text(encoding="utf-8")
    typed = "  - name: watch_term\n    data_type: varchar\n"
    assert typed in text
    marts_yml.write_text(text.replace(typed, "  - name: watch_term\n    data_type: integer\n"), encoding="utf-8")
    settings = _on_copy(replayed, project, tmp_path)

    process = invoke_dbt(settings, "run", "--select", "dmf_watchlist_unmatched")

    assert process.returncode != 0
    assert "enforced contract that failed" in process.output
    assert "watch_term" in process.output


def test_a_null_in_a_published_key_column_fails_the_mart_and_leaves_the_published_table(replayed, project, tmp_path):
    """The marts' not-null columns are contract constraints, which DuckDB enforces while the new
    table is filled: a null never reaches a published table (a not_null test would have run on
    the table already replaced)."""
    model = project / "models" / "marts" / "dmf_loads.sql"
    sql = model.read_text(encoding="utf-8")
    model.write_text(
        f"select * replace (cast(null as varchar) as verdict) from (\n{sql}\n) as built\n", encoding="utf-8"
    )
    settings = _on_copy(replayed, project, tmp_path)
    warehouse = settings.duckdb_path
    published = "select load_id, verdict from marts.dmf_loads order by load_id"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        before = con.execute(published).fetchall()

    process = invoke_dbt(settings, "run", "--select", "dmf_loads")

    assert process.returncode != 0
    assert "NOT NULL constraint failed" in process.output and "verdict" in process.output
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute(published).fetchall() == before
    assert before and all(verdict for _, verdict in before)
