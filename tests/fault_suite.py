"""The fault suite: runs every test marked `@pytest.mark.fault("case")` and prints one table row a case.

Each row is one way a morning can go wrong (a renamed API field, two overlapping runs, a full
disk, a hostile base URL, …); the tests behind it are real runs against the simulator on
loopback. A case passes only when every test marked with it passed (support/fault_table.py;
`pytest --fault-table` prints the same table after any run, the whole suite's included).

    .venv/bin/python tests/fault_suite.py [pytest args, e.g. -x, -n auto --dist loadfile]
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if __name__ == "__main__":
    tests_dir = Path(__file__).resolve().parent
    sys.exit(
        pytest.main(["-m", "fault", "-q", "-p", "no:cacheprovider", "--fault-table", str(tests_dir), *sys.argv[1:]])
    )
