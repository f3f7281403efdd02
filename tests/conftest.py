"""Shared fixtures: a real MFDS simulator on loopback, a temporary Settings, the real sample data.

Everything here is real: the HTTP server is the project's simulator on 127.0.0.1, the warehouse
is a DuckDB file in the test's tmp dir, and dlt's working dir lives in that tmp dir too.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import httpx
import pytest

from dmf_watch.core.config import Settings, load_settings
from dmf_watch.pipelines.mfds.settings import RetryPolicy
from dmf_watch.simulator.faults import Faults
from dmf_watch.simulator.server import SimulatorServer

# The packages come from the editable install (README: `pip install -e '.[test]'`), never from
# sys.path edits: a test imports exactly what a user's `dmf` imports.
from dmf_watch.transform import build as build_module
from support import replays
from support.first_mornings import SMALL_FIRST_MORNING, placed
from support.mfds import REAL_DATA_DIR, SERVICE_KEY, START_DATE, read_jsonl, small_registry
from support.replays import Replays
from support.scenarios import query
from support.shared_manifest import sharing
from support.worlds import Shelf, shelf_folder

# `pytest --module-costs`: seconds and dbt commands per module; `--fault-table`: the fault suite's
# table (docs/tests-and-benchmarks.md).
pytest_plugins = ("support.module_costs", "support.fault_table")

SERVER_FIXTURES = frozenset({"start_simulator", "simulator", "sim_settings"})


def pytest_configure(config: pytest.Config) -> None:
    """One dbt parse per process for the same project and target (support/shared_manifest.py).

    pytest-xdist hands out the modules with the most tests first unless told not to; the order
    that counts here is time, which `pytest_collection_modifyitems` below sets (a 60-day module
    holds one test)."""
    build_module.invoke_dbt = sharing(build_module.invoke_dbt)
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker per core and one more. Part of every worker's time is spent waiting (a
    child `dmf` process, a slow or silent server, a lock or connect timeout, PostgreSQL's own
    processes), and a third worker on two cores fills those waits: in `.ci/run` on fresh clones of
    this 2-core machine the suite took 1,686 s with three workers against 1,888 s with two."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that starts the simulator makes real dlt loads over HTTP: the integration tier.

    Marked by the fixtures it asks for, so a new loader test cannot land in the fast tier
    (`pytest -m "not e2e and not integration"`, unit tests only, under a minute) by mistake.
    """
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.integration)
    # pytest-xdist (`-n auto --dist loadfile`) hands whole modules to its workers in this order:
    # the longest module first and the e2e tier next, so that the short modules fill the end of
    # the run instead of one worker starting a half-hour module when the others are done.
    items.sort(key=lambda item: (item.get_closest_marker("longest") is None, item.get_closest_marker("e2e") is None))


@pytest.fixture(autouse=True)
def _fast_tier_runs_no_dbt(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeps the fast tier fast: a test not marked e2e that starts dbt in-process fails at once.

    The tiers below e2e must not build; a dbt run costs seconds, so a new test that
    builds (through `run_days`, `dmf.build.build`, ...) belongs to a module marked
    `pytestmark = pytest.mark.e2e`. `pytest.fail` raises a BaseException, so the day's
    failures-as-values handlers cannot swallow it. dbt started by a child `dmf` process is not
    seen here.
    """
    if request.node.get_closest_marker("e2e") is not None:
        return

    def refuse(*args: object, **kwargs: object) -> None:
        pytest.fail(f"{request.node.nodeid} runs dbt: mark its module `pytestmark = pytest.mark.e2e`")

    monkeypatch.setattr(build_module, "invoke_dbt", refuse)


@pytest.fixture(scope="session")
def postgres() -> Iterator[dict[str, str]]:
    """A PostgreSQL 15 server for the PostgreSQL tier (support/postgres.py: the one `.ci/run`
    started, or a throwaway one for this session), its libpq variables set in the environment."""
    from support.postgres import server

    with server() as variables:
        yield variables


@pytest.fixture(scope="session")
def real_data_dir() -> Path:
    if not REAL_DATA_DIR.is_dir():
        pytest.fail(f"the real MFDS samples must be beside the checkout, at {REAL_DATA_DIR}")
    return REAL_DATA_DIR


@pytest.fixture(scope="session")
def real_sample(real_data_dir: Path) -> list[dict]:
    """The 367 real records of the 2026-10-08 dump, exactly as the API sent them."""
    return read_jsonl(real_data_dir / "sample_2026-10-08.jsonl")


@pytest.fixture
def fast_policy() -> RetryPolicy:
    """Real retry logic with delays small enough for tests."""
    return RetryPolicy(
        max_retries=3,
        base_delay_s=0.01,
        max_delay_s=0.05,
        retry_after_cap_s=1.0,
        connect_timeout_s=1.0,
        read_timeout_s=2.0,
        max_list_attempts=3,
    )


@pytest.fixture
def start_simulator() -> Iterator[Callable[..., SimulatorServer]]:
    """Start a simulator (stopped after the test): `start_simulator(source=None, faults=None, size=1200)`."""
    servers: list[SimulatorServer] = []

    def start(
        source=None,
        *,
        faults: Faults | str | None = None,
        size: int = 1200,
        service_key: str = SERVICE_KEY,
        day: date | int = 1,
    ) -> SimulatorServer:
        server = SimulatorServer(
            source if source is not None else small_registry(size),
            service_key=service_key,
            day=day,
            faults=faults,
        )
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def simulator(start_simulator) -> SimulatorServer:
    """A running simulator with 1,200 records (3 pages) and no faults."""
    return start_simulator()


@pytest.fixture
def tmp_settings(tmp_path: Path) -> Settings:
    """Settings whose warehouse, reports and state all live in the test's tmp dir."""
    return load_settings({}).with_paths(
        duckdb_path=tmp_path / "data" / "dmf.duckdb",
        reports_dir=tmp_path / "reports",
        state_dir=tmp_path / "state",
    )


@pytest.fixture
def sim_settings(tmp_settings: Settings, simulator: SimulatorServer) -> Settings:
    """`tmp_settings` pointed at the running `simulator`."""
    return dataclasses.replace(tmp_settings, api_base_url=simulator.base_url)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("MFDS_API_BASE_URL", "MFDS_API_ALLOWED_HOSTS", "DMF_LOCK_WAIT_S", "DMF_AI_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DMF_DUCKDB_PATH", str(tmp_path / "data" / "dmf.duckdb"))
    monkeypatch.setenv("DMF_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DMF_REPORTS_DIR", str(tmp_path / "reports"))
    monkeypatch.setenv("MFDS_SERVICE_KEY", SERVICE_KEY)
    return tmp_path


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every attempt to connect or to build an HTTP client is recorded and refused."""
    attempts: list[str] = []

    def refuse(what: str):
        def _refuse(*args, **kwargs):
            attempts.append(f"{what}{args[1:2] or args[:1]}")
            raise OSError(f"test forbids {what}")

        return _refuse

    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(httpx.Client, "__init__", refuse("httpx.Client"))
    return attempts


@pytest.fixture(scope="session")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Shelf:
    """The session's named worlds (support/worlds.py), built once, copied for each test:
    `with shelf.copied(REAL_TAILS, tmp_path) as settings: ...`."""
    return Shelf(shelf_folder(tmp_path_factory.getbasetemp()))


@pytest.fixture(scope="session", autouse=True)
def _replayed_days_shared(shelf: Shelf) -> Iterator[None]:
    """`run_days` copies days another test replayed the same way (support/replays.py)."""
    replays.replays = Replays(shelf.folder / "replays")
    yield
    replays.replays = None


@pytest.fixture
def previous_day(tmp_path: Path, shelf: Shelf) -> Iterator[None]:
    """START_DATE as `dmf run --as-of START_DATE` leaves it (the simulator's default registry),
    built once a session and copied where a `dmf` child with this test's folders looks
    (tmp_path/data/dmf.duckdb, state/, reports/): its children run only the later morning the
    test is about (support/first_mornings.py)."""
    with placed(
        shelf,
        SMALL_FIRST_MORNING,
        duckdb_path=tmp_path / "data" / "dmf.duckdb",
        state_dir=tmp_path / "state",
        reports_dir=tmp_path / "reports",
    ):
        settings = load_settings(
            {
                "DMF_DUCKDB_PATH": str(tmp_path / "data" / "dmf.duckdb"),
                "DMF_STATE_DIR": str(tmp_path / "state"),
                "DMF_REPORTS_DIR": str(tmp_path / "reports"),
            }
        )
        assert query(settings, "select as_of_date, verdict from marts.dmf_loads") == [(START_DATE, "accepted")]
        yield
