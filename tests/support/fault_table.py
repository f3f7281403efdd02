"""A pytest plugin that prints the fault suite's table: one row a case, from the tests marked
`@pytest.mark.fault("case")` that ran (`pytest --fault-table`, or tests/fault_suite.py).

A case passes only when every test marked with it passed. Works under pytest-xdist: each test
carries its case and the first line of its docstring in its reports' user properties, which the
workers send to the controller with the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

OPTION = "--fault-table"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, action="store_true", help="print one row per fault case (tests marked fault)")


@dataclass
class Case:
    tests: set[str] = field(default_factory=set)
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)


class FaultTable:
    def __init__(self) -> None:
        self.cases: dict[str, Case] = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        marker = item.get_closest_marker("fault")
        if marker is None or not marker.args:
            return
        item.user_properties.append(("fault", str(marker.args[0])))
        doc = (getattr(item, "function", None).__doc__ or "").strip().splitlines()
        if doc:
            item.user_properties.append(("fault_shows", doc[0]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        if "fault" not in properties:
            return
        case = self.cases.setdefault(properties["fault"], Case())
        case.tests.add(report.nodeid)
        if "fault_shows" in properties and properties["fault_shows"] not in case.shown:
            case.shown.append(properties["fault_shows"])
        if report.when == "call" and report.passed:
            case.passed += 1
        elif report.failed or (report.when == "call" and report.skipped):
            case.failed.append(report.nodeid.split("::", 1)[-1])

    def failing(self) -> int:
        return sum(1 for case in self.cases.values() if case.failed or case.passed != len(case.tests))

    def table(self) -> str:
        lines = ["| case | tests | verdict | what the tests show |", "|---|---|---|---|"]
        for name, case in sorted(self.cases.items()):
            verdict = (
                "pass" if case.passed == len(case.tests) and not case.failed else f"FAIL ({', '.join(case.failed)})"
            )
            lines.append(f"| {name} | {case.passed}/{len(case.tests)} | {verdict} | {'; '.join(case.shown) or '—'} |")
        return "\n".join(lines)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        terminalreporter.write_line("")
        for line in self.table().splitlines():
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"{len(self.cases)} fault cases, {self.failing()} failing")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(OPTION):
        config.pluginmanager.register(FaultTable(), "fault-table")
