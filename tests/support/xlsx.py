"""Reading the reports back as a person sees them: an event sheet's rows by header, and the
cell an internal link points at."""

from __future__ import annotations

import re

EVENT_HEADER_ROW = 4  # 1-based row of the header on event sheets (title, note, blank, header)


def table(ws) -> list[dict]:
    """Rows of an event-style sheet as dicts keyed by header."""
    headers = [c.value for c in ws[EVENT_HEADER_ROW]]
    rows = []
    for cells in ws.iter_rows(min_row=EVENT_HEADER_ROW + 1):
        if all(c.value is None for c in cells):
            break  # the end of the main table (another section may follow)
        if cells[0].value == "해당 없음":
            continue
        rows.append({h: c for h, c in zip(headers, cells) if h})
    return rows


def resolve(wb, target: str):
    """An internal link 'sheet'!A7 → the cell it points at (KeyError if the sheet is missing)."""
    match = re.fullmatch(r"'?(?P<sheet>[^'!]+)'?!(?P<cell>[A-Z]+\d+)", target)
    assert match, target
    return wb[match["sheet"]][match["cell"]]
