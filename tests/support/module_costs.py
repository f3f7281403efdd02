"""A pytest plugin that says where the suite's time goes: seconds and dbt commands per module.

`pytest --module-costs` prints one row a test module after the run: the seconds its tests took
(setup, call and teardown, module fixtures included) and the dbt commands it ran in-process
(`dbt build`, and the rest: parse, run, test, seed, docs). dbt started by a child `dmf` process is
not counted (the child's own interpreter runs it); the column says so. Works under pytest-xdist:
each worker sends its counts to the controller when it ends.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from dmf_watch.transform import build as build_module

OPTION = "--module-costs"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, action="store_true", help="print seconds and in-process dbt commands per test module")


class ModuleCosts:
    def __init__(self) -> None:
        self.module: str | None = None
        self.dbt: dict[str, Counter] = defaultdict(Counter)  # module -> dbt command -> count
        self.seconds: Counter = Counter()
        self.tests: Counter = Counter()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        # Module fixtures run inside the protocol of the module's first test: their dbt counts too.
        self.module = item.nodeid.split("::", 1)[0]
        return (yield)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = report.nodeid.split("::", 1)[0]
        self.seconds[module] += report.duration
        if report.when == "call":
            self.tests[module] += 1

    def counting(self, invoke):
        def invoke_dbt(settings, command, *extra, **kwargs):
            self.dbt[self.module or "?"][command.split()[0]] += 1
            return invoke(settings, command, *extra, **kwargs)

        return invoke_dbt

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: hand the counts to the controller
            workeroutput["module_dbt"] = {module: dict(counts) for module, counts in self.dbt.items()}

    def pytest_testnodedown(self, node, error) -> None:
        for module, counts in getattr(node, "workeroutput", {}).get("module_dbt", {}).items():
            self.dbt[module].update(counts)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        write = terminalreporter.write_line
        rows = sorted(self.seconds.items(), key=lambda row: -row[1])
        write("")
        write("| module | tests | seconds | dbt build | other dbt commands (in-process) |")
        write("|---|---:|---:|---:|---|")
        for module, seconds in rows:
            counts = self.dbt.get(module, Counter())
            other = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()) if name != "build") or "—"
            write(f"| {module} | {self.tests[module]} | {seconds:.1f} | {counts.get('build', 0)} | {other} |")
        builds = sum(counts.get("build", 0) for counts in self.dbt.values())
        write(f"| all | {sum(self.tests.values())} | {sum(self.seconds.values()):.1f} | {builds} | |")


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption(OPTION):
        return
    costs = ModuleCosts()
    # Wrapped where every caller looks it up (the build module's global, and the tests' imports,
    # which happen after this): a count of the commands, nothing else changes.
    build_module.invoke_dbt = costs.counting(build_module.invoke_dbt)
    config.pluginmanager.register(costs, "module-costs")
