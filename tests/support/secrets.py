"""Finding the test's service key in bytes, in every form a URL or a log could give it."""

from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import quote, quote_plus

from support.mfds import SERVICE_KEY

KEY_FORMS = {SERVICE_KEY, quote(SERVICE_KEY, safe=""), quote_plus(SERVICE_KEY), "9f3b1c7e"}


def key_leaks(data: bytes) -> list[str]:
    return [form for form in KEY_FORMS if form.encode() in data]


def file_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        try:
            data += gzip.decompress(data)
        except OSError:
            pass
    return data
