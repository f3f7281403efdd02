"""Prompt assets -> prompt text.

Prompts are files in `prompts/` with `{{TOKEN}}` placeholders. We substitute by name with a
regex instead of `str.format`, because prompt bodies are full of JSON braces. Unknown tokens
are left in place on purpose: the guard refuses a prompt that still has one, so a renamed
payload key fails loudly instead of sending the model an empty data block.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
PROMPTS_DIR = PROJECT_DIR / "prompts"
SCHEMAS_DIR = PROMPTS_DIR / "schemas"

TOKEN = re.compile(r"\{\{([A-Z_][A-Z0-9_]{1,39})\}\}")
#: Stands in for the nonce when a prompt is hashed, so the same data gives the same hash.
NONCE_PLACEHOLDER = "NONCE"


def new_nonce() -> str:
    """A fence nobody can predict: 24 hex characters, new for every rendering."""
    return secrets.token_hex(12)


def substitute(template: str, values: Mapping[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return values[name] if name in values else match.group(0)

    return TOKEN.sub(one, template)


def load_template(name: str, prompts_dir: Path = PROMPTS_DIR) -> str:
    """Read a prompt file as UTF-8 with LF line ends (a stray CRLF can blur our fences)."""
    text = (prompts_dir / name).read_text(encoding="utf-8")
    return text.lstrip("\ufeff").replace("\r\n", "\n")


def load_schema(name: str, schemas_dir: Path = SCHEMAS_DIR) -> dict:
    return json.loads((schemas_dir / name).read_text(encoding="utf-8"))


def json_block(obj: object) -> str:
    """Compact, key-sorted JSON for data blocks: Korean kept as is, no indentation (tokens)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def schema_text(schema: Mapping) -> str:
    """The schema as shown to the model (compact: it is for reading, not for humans)."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()


class RenderedPrompt:
    """A prompt, its nonce, and a hash that ignores the nonce (stable for the same data)."""

    __slots__ = ("text", "nonce", "identity_sha256", "template_name", "_template", "_values")

    def __init__(self, template_name: str, template: str, values: Mapping[str, str]) -> None:
        self.template_name = template_name
        self._template = template
        self._values = {"RETRY_BLOCK": "", **values}
        self.nonce = new_nonce()
        self.text = substitute(template, {**self._values, "NONCE": self.nonce})
        identity = substitute(template, {**self._values, "NONCE": NONCE_PLACEHOLDER})
        self.identity_sha256 = sha256_text(identity)

    def with_retry_block(self, block: str) -> str:
        """The same prompt (same nonce) with the stricter-retry instructions filled in."""
        return substitute(self._template, {**self._values, "RETRY_BLOCK": block, "NONCE": self.nonce})

    @classmethod
    def from_text(cls, text: str) -> RenderedPrompt:
        """Wrap an already-rendered text (tests, ad-hoc calls); it has no retry slot."""
        return cls("<inline>", text, {})

    def __len__(self) -> int:
        return len(self.text)


def render(template_name: str, values: Mapping[str, str], prompts_dir: Path = PROMPTS_DIR) -> RenderedPrompt:
    """Render a prompt file; raises OSError if the asset is missing (callers turn it into a value)."""
    return RenderedPrompt(template_name, load_template(template_name, prompts_dir), values)
