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


#: Latin-script words a Korean reader is expected to read as they are: names of things (the
#: product, the agency, the tools) and abbreviations Korean documents write in Latin letters.
LATIN_ALLOWED = {
    "DMF", "MFDS", "Watch", "API", "AI", "agy", "dbt", "SQL", "ID", "KST", "UTC", "HTTP", "URL",
    "YYYY-MM-DD", "xlsx", "totalCount", "BIZRNO",
}  # fmt: skip
#: The codes the seeds and marts use, shown in parentheses beside their Korean word.
CODE_IN_PARENTHESES = re.compile(
    r"\((?:NEW|REINSTATED|CHANGED|WITHDRAWN|CRITICAL|HIGH|MEDIUM|INFO|COSMETIC|ACTION_REQUIRED)\b[^)]*\)"
)
#: A command a person types: `dmf history --permit-no <등록번호>`, `dmf proposals accept|reject`.
COMMAND = re.compile(r"`?\bdmf(?:[ ]+(?:--?[a-z][a-z-]*|[a-z][a-z-]*(?:\|[a-z-]+)*))+`?")
#: A token: letters, digits and the joiners of codes and paths ('209-J', 'UTF-8', 'a/b.toml').
LATIN_WORD = re.compile(r"(?=[A-Za-z0-9_./\-]*[A-Za-z])[A-Za-z0-9_][A-Za-z0-9_./\-]*[A-Za-z0-9_]|[A-Za-z]")
#: Headers of table columns that hold identifiers or values as received (a header is a cell of
#: a row with at least three labels: a table's header row, not a label beside its value).
CODE_HEADERS = ("ID", "dmf_key", "코드", "모델", "대상(이름)", "원문", "오류")


def latin_words(wb, names: set[str]) -> list[tuple[str, str, str]]:
    """(sheet!cell, word, text) of every Latin-script word a reader meets that is neither a name
    (`names`: the registry's and the seeds' own words), an allowed word, an identifier (a word
    with a digit, an underscore or a slash: load IDs, table and signal ids, paths), a code in parentheses, a
    command, a unit (%p) nor in a column of identifiers."""
    found = []
    for ws in wb.worksheets:
        code_columns: set[tuple[int, int]] = set()  # (header row, column)
        for row in ws.iter_rows():
            labels = [c for c in row if isinstance(c.value, str) and len(c.value) <= 20]
            if len(labels) >= 3:
                code_columns |= {(c.row, c.column) for c in labels if any(h in c.value for h in CODE_HEADERS)}
            for cell in row:
                value = cell.value
                if not isinstance(value, str):
                    continue
                if any(col == cell.column and top < cell.row for top, col in code_columns):
                    continue
                text = COMMAND.sub(" ", CODE_IN_PARENTHESES.sub(" ", value)).replace("%p", "%")  # %p: a unit
                for word in LATIN_WORD.findall(text):
                    if word in LATIN_ALLOWED or word in names or re.search(r"[\d_/]", word):
                        continue
                    found.append((f"{ws.title}!{cell.coordinate}", word, value[:100]))
    return found


def registry_words(con, queries: list[str]) -> set[str]:
    """The Latin-script words of the values `queries` return: names as the registry wrote them."""
    words: set[str] = set()
    for sql in queries:
        for row in con.execute(sql).fetchall():
            for value in row:
                if value is not None:
                    words.update(LATIN_WORD.findall(str(value)))
    return words
