"""Running `dmf`'s entry point in-process as cron would, and reading its one-line refusals."""

from __future__ import annotations

from dmf_watch.commands.cli import main


def refused(capsys, argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and err.startswith("dmf: "), err
    assert "Traceback" not in err and "bug" not in err
    return err
