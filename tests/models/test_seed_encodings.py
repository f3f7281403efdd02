"""`dmf seeds check` on seed files as analysts' editors save them: UTF-8 with or without Excel's
BOM is read; Korean Excel's CP949 is refused in one line naming the file, the encoding and how to
save it as UTF-8 (dbt reads seeds as UTF-8), instead of an unexpected UnicodeDecodeError."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dmf_watch.core.config import PROJECT_DIR
from dmf_watch.transform.seed_check import check_seeds


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(PROJECT_DIR / "seeds", tmp_path / "seeds")
    return tmp_path


def watchlist_text(project: Path) -> str:
    return (project / "seeds" / "watchlist.csv").read_text(encoding="utf-8")


@pytest.mark.fault("a watchlist saved by Korean Excel (CP949)")
def test_a_watchlist_saved_by_korean_excel_as_cp949_is_refused_in_one_line_that_says_how_to_save_it(project):
    text = watchlist_text(project)
    (project / "seeds" / "watchlist.csv").write_bytes(text.replace("\n", "\r\n").encode("cp949"))

    problems = [str(problem) for problem in check_seeds(project)]

    assert len(problems) == 1
    assert problems[0].startswith("seeds/watchlist.csv line 2: the file is saved as CP949/EUC-KR")
    assert "'CSV UTF-8 (쉼표로 분리)'" in problems[0]


def test_a_watchlist_in_utf8_with_excels_bom_and_crlf_passes(project):
    text = watchlist_text(project)
    (project / "seeds" / "watchlist.csv").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))

    assert check_seeds(project) == []


def test_bytes_that_are_no_known_encoding_are_named_as_such(project):
    (project / "seeds" / "watchlist.csv").write_bytes(
        watchlist_text(project).encode("utf-8") + b"ingredient,\xff\xfe\xff,x\n"
    )

    (problem,) = [str(problem) for problem in check_seeds(project)]

    assert "neither UTF-8 nor CP949/EUC-KR" in problem and "line 11" in problem
