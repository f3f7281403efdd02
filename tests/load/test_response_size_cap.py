"""A page's body is bounded once decompressed: a gzip body that expands to GiBs is refused after
the first 64 MiB, in one line, long before the server got its body onto the wire. Real loads over
loopback HTTP from the simulator (its gzip_bomb fault), through `dmf load`'s command line."""

from __future__ import annotations

import zlib
from datetime import timedelta

import pytest

from dmf_watch.commands.cli import main
from dmf_watch.pipelines.mfds.settings import MAX_PAGE_BYTES
from dmf_watch.simulator.faults import Faults, gzip_bomb
from support.mfds import START_DATE
from support.scenarios import point_dmf_at

BOMB_MIB = 16 * 1024  # 16 GiB once decompressed, about 16 MiB on the wire


def test_the_gzip_bomb_fault_is_a_valid_gzip_stream_of_the_size_it_names():
    length, parts = gzip_bomb(b'{"response": {}}', 3)
    body = b"".join(parts)

    assert len(body) == length
    assert zlib.decompress(body, 31) == b'{"response": {}}' + b" " * 3 * 2**20
    assert Faults.parse("gzip_bomb:3").spec() == "gzip_bomb:3" and Faults.parse("gzip_bomb").gzip_bomb_mib == 2048


@pytest.mark.fault("a gzip body that expands to GiBs")
def test_a_gzip_bomb_is_refused_in_one_line_before_its_body_is_read(tmp_path, monkeypatch, capsys, start_simulator):
    """exit 1, one line naming the 64 MiB bound; the simulator got under 1/4 of the body out; next morning loads"""
    server = start_simulator(size=700, faults=f"gzip_bomb:{BOMB_MIB}")
    point_dmf_at(monkeypatch, tmp_path, MFDS_API_BASE_URL=server.base_url)

    code = main(["load", "--as-of", str(START_DATE)])

    out, err = capsys.readouterr()
    assert code == 1
    line = out.strip()
    assert "\n" not in line and err == ""
    assert f"page 1 of the MFDS API grew past {MAX_PAGE_BYTES // 2**20} MiB once decompressed" in line, line
    assert "refused without reading the rest" in line
    assert server.requests == 1  # not retried: the same answer would only cost the same memory again
    sent, total = server.bomb_bytes
    # a bounded read: the client hung up after about 64 KiB of the 16 MiB compressed body (socket
    # buffers take some more); reading it whole would have meant 16 GiB in memory
    assert total > 16 * 2**20 and sent < total // 4, (sent, total)

    server.set_faults(None)  # the next honest morning
    server.set_day(2)
    code = main(["load", "--as-of", str(START_DATE + timedelta(days=1))])

    out, _ = capsys.readouterr()
    assert code == 0 and "complete, 700 records" in out, out
