"""The fault suite: runs every test marked `@pytest.mark.fault("case")` and prints one table row a case.

Each row is one way a morning can go wrong (a renamed API field, two overlapping runs, a full
disk, a hostile base URL, …); the tests behind it are real runs against the simulator on
loopback. A case passes only when every test marked with it passed.

    .venv/bin/python tests/fault_suite.py [pytest args, e.g. -x]
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest


@dataclass
class Case:
    tests: list[str] = field(default_factory=list)
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    seconds: float = 0.0


class FaultTable:
    """A pytest plugin that groups the outcomes of marked tests by their case."""

    def __init__(self) -> None:
        self.cases: dict[str, Case] = {}
        self._case_of: dict[str, str] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # After -m/-k deselection: only the tests that will run make up a case.
        for item in session.items:
            marker = item.get_closest_marker("fault")
            if marker is None or not marker.args:
                continue
            case = str(marker.args[0])
            self._case_of[item.nodeid] = case
            self.cases.setdefault(case, Case()).tests.append(item.nodeid)
            doc = (getattr(item, "function", None).__doc__ or "").strip().splitlines()
            if doc:
                self.cases[case].shown.append(doc[0])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        case = self._case_of.get(report.nodeid)
        if case is None:
            return
        entry = self.cases[case]
        entry.seconds += report.duration
        if report.when == "call" and report.passed:
            entry.passed += 1
        elif report.failed or (report.when == "call" and report.skipped):
            entry.failed.append(report.nodeid.split("::", 1)[-1])


def table(cases: dict[str, Case]) -> str:
    lines = ["| case | tests | verdict | what the tests show |", "|---|---|---|---|"]
    for name, case in cases.items():
        verdict = "pass" if case.passed == len(case.tests) and not case.failed else f"FAIL ({', '.join(case.failed)})"
        shown = "; ".join(dict.fromkeys(case.shown)) or "—"
        lines.append(f"| {name} | {case.passed}/{len(case.tests)} | {verdict} | {shown} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    tests_dir = Path(__file__).resolve().parent
    plugin = FaultTable()
    started = time.monotonic()
    code = pytest.main(["-m", "fault", "-q", "-p", "no:cacheprovider", str(tests_dir), *argv], plugins=[plugin])
    print()
    print(table(plugin.cases))
    failing = sum(1 for case in plugin.cases.values() if case.failed or case.passed != len(case.tests))
    print(f"\n{len(plugin.cases)} cases, {failing} failing, {time.monotonic() - started:.0f} s")
    if not plugin.cases:
        print("no test is marked @pytest.mark.fault", file=sys.stderr)
        return 1
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
