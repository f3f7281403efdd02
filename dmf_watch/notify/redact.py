"""Keep destination credentials out of everything we write (logs, rows, the report, stderr).

A destination URL is a secret as a whole, and so are its parts: the password, the user, and the
path or query tokens that services such as Slack or Teams put in the URL itself. Apprise's own
messages may quote a URL in another form (privacy-masked, re-encoded), so on top of removing
the known parts every `scheme://...` run in a text is replaced as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, unquote, urlsplit

MASK = "***"
_ANY_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://\S+")
_SPLIT = re.compile(r"[:/@?&=#,;+\s]+")
#: parts of a URL too common to be secrets (hiding them would make errors unreadable)
_HARMLESS = {
    "mailto",
    "mailtos",
    "json",
    "jsons",
    "http",
    "https",
    "insecure",
    "starttls",
    "ssl",
    "localhost",
    "127.0.0.1",
    "mode",
    "smtp",
    "port",
    "from",
    "to",
}
MIN_SECRET_PART = 6


def secret_parts(urls: Iterable[str]) -> list[str]:
    """Every form of every secret piece of the URLs, longest first (so replacements nest)."""
    parts: set[str] = set()
    for url in urls:
        if not url:
            continue
        parts.add(url)
        try:
            split = urlsplit(url)
            pieces = [split.password, split.username]
        except ValueError:
            pieces = []
        pieces += _SPLIT.split(url.split("://", 1)[-1])
        for piece in pieces:
            if piece and len(piece) >= MIN_SECRET_PART and piece.lower() not in _HARMLESS:
                parts.add(piece)
    forms: set[str] = set()
    for part in parts:
        forms |= {part, unquote(part), quote(part, safe=""), quote(unquote(part), safe="")}
    return sorted((f for f in forms if len(f) >= MIN_SECRET_PART), key=len, reverse=True)


class Scrubber:
    """Removes the given URLs' secrets from a text; cheap to call on every line we store."""

    def __init__(self, urls: Iterable[str]) -> None:
        self._parts = secret_parts(urls)

    def __call__(self, text: object) -> str:
        out = "" if text is None else str(text)
        out = _ANY_URL.sub("<url>", out)
        for part in self._parts:
            out = out.replace(part, MASK)
        return out
