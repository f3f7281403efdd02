"""String quarantine on both sides of the model.

Inbound (`for_prompt`): registry text is written by third parties (manufacturer names and site
addresses are free text filed by companies), so before it enters a prompt we take away what
could pass for an instruction: control characters, every invisible/format character
(`strip_invisible`: the whole Cf category, variation selectors, Hangul fillers), code fences, look-alikes of our
data fences, and we make classic injection phrases *visible* (kept, but tagged) so the model
sees them as quoted data and a human can find them.

Outbound (`for_output`): model text ends up in xlsx cells, logs and proposal files, so it must
never start a formula (= + - @ tab CR), and links and markup are removed.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Characters that render as nothing yet a model reads: invisible instructions (TAG characters
# spell ASCII), reordered text (bidi controls), split words that dodge the injection check
# (soft hyphen, zero-width). Every format character (category Cf, which holds all bidi, TAG,
# zero-width and U+061C/U+180E/U+00AD) goes, and so do the non-Cf ones listed here.
_VARIATION_SELECTORS = frozenset(chr(c) for c in (*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)))
_INVISIBLE_NOT_CF = (
    frozenset(
        {
            "\u115f",
            "\u1160",
            "\u3164",
            "\uffa0",  # Hangul fillers (render as blank)
            "\u034f",  # combining grapheme joiner
            "\u17b4",
            "\u17b5",  # Khmer inherent vowels (invisible)
            "\u180b",
            "\u180c",
            "\u180d",
            "\u180f",  # Mongolian free variation selectors
        }
    )
    | _VARIATION_SELECTORS
)


def _is_invisible(ch: str) -> bool:
    return ch in _INVISIBLE_NOT_CF or unicodedata.category(ch) in ("Cf", "Cs")


def strip_invisible(text: str) -> str:
    """Remove every format/invisible character (see above); ASCII text is returned as is."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if not _is_invisible(ch))


_FENCE = re.compile(r"`{3,}|~{3,}")
_FAKE_MARKER = re.compile(r"<{2,}\s*/?\s*(?:DATA|END)\b[^>\n]{0,80}>{2,}", re.IGNORECASE)
_ANGLE_RUN = re.compile(r"<{3,}|>{3,}")
_INJECTION = re.compile(
    r"(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier)"
    r"(?:\s+(?:instructions?|rules?|prompts?))?"
    r"|(?:system|developer)\s*prompt"
    r"|new\s+instructions?"
    r"|you\s+are\s+now\b"
    r"|act\s+as\b"
    r"|이전\s*(?:의\s*)?(?:모든\s*)?지시"
    r"|위(?:의)?\s*(?:모든\s*)?(?:지시|규칙).{0,6}무시"
    r"|(?:지시|규칙|명령).{0,6}무시"
    r"|시스템\s*프롬프트"
    r"|새로운\s*지시",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")

MAX_FIELD_CHARS = 200
ELLIPSIS = "\u2026"


def clip(value: str, limit: int) -> str:
    """Cut to `limit` characters, marking the cut so nobody mistakes it for the whole value."""
    value = (value or "").strip()
    if limit <= 0 or len(value) <= limit:
        return value
    return value[: max(0, limit - 1)] + ELLIPSIS


def for_prompt(value: object, max_chars: int = MAX_FIELD_CHARS) -> str:
    """Make one data field safe to quote inside a prompt's data block."""
    if value is None:
        return ""
    text = strip_invisible(unicodedata.normalize("NFKC", strip_invisible(str(value))))
    text = _CONTROL.sub(" ", text)
    text = _FAKE_MARKER.sub("[구분자모양제거]", text)
    text = _ANGLE_RUN.sub("<>", text)
    text = _FENCE.sub("'''", text)
    text = _INJECTION.sub(lambda m: "[의심표현:" + m.group(0)[:60] + "]", text)
    text = _SPACES.sub(" ", text).strip()
    return clip(text, max_chars)


def looks_like_injection(value: object) -> bool:
    """True when a field carries an instruction-like phrase (used to flag records for a human)."""
    if value is None:
        return False
    return bool(_INJECTION.search(strip_invisible(unicodedata.normalize("NFKC", strip_invisible(str(value))))))


#: A cell whose text starts with one of these is read as a formula (or DDE) by spreadsheets.
FORMULA_LEAD = ("=", "+", "-", "@", "\t", "\r")


def escape_formula_lead(text: str) -> str:
    """A leading apostrophe makes Excel, LibreOffice and openpyxl keep the value as plain text."""
    return "'" + text if text.startswith(FORMULA_LEAD) else text


_LINK = re.compile(r"(?:[a-z][a-z0-9+.-]{1,15}://|www\.|mailto:|\\\\)\S*", re.IGNORECASE)
_MARKUP = re.compile(r"<[^<>]{0,200}>")
_MD_LINK = re.compile(r"\[([^\]]{0,200})\]\([^)]{0,500}\)")


def for_output(value: object, max_chars: int | None = None) -> str:
    """Quarantine model text before it is stored or shown anywhere.

    Links and tags go away, fences go away, and a value that would start with a formula
    character gets a leading apostrophe so a spreadsheet shows it as text.
    """
    if value is None:
        return ""
    text = strip_invisible(unicodedata.normalize("NFKC", strip_invisible(str(value))))
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub(" ", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    text = _LINK.sub("[링크제거]", text)
    text = _FENCE.sub("", text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if max_chars is not None:
        text = clip(text, max_chars)
    return escape_formula_lead(text)
