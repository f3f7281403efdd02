"""Getting one trustworthy JSON object out of a model answer.

agy's `--json-schema` was observed not to fill `structured_output` and to answer with the
same JSON four times mixed with Korean prose and internal `toolAction`/`toolSummary` keys.
So we scan the text ourselves: every balanced `{...}` (string-aware) is tried, the object with
the most required keys wins, it is validated with jsonschema, and if it only fails because of
known noise keys those are stripped, recorded, and it is validated again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsonschema

NOISE_KEYS = frozenset({"toolAction", "toolSummary", "tool_action", "tool_summary"})
_FENCE_LINE = re.compile(r"^\s*```[\w+-]*\s*$", re.MULTILINE)


def _object_spans(text: str) -> Iterator[tuple[int, int]]:
    """Yield (start, end) of every balanced brace run, starting at each '{' in turn."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_string = False
        escaped = False
        for pos in range(start, len(text)):
            ch = text[pos]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    yield start, pos + 1
                    break
        start = text.find("{", start + 1)


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every parseable JSON object in `text`, outer ones before the objects nested in them."""
    if not text:
        return
    cleaned = _FENCE_LINE.sub("", text)
    for start, end in _object_spans(cleaned):
        try:
            obj = json.loads(cleaned[start:end])
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


def best_object(text: str, required_keys: Sequence[str] = ()) -> dict[str, Any] | None:
    """The object carrying the most required keys (first one wins a tie)."""
    best: dict[str, Any] | None = None
    best_score = -1
    for obj in json_objects(text):
        score = sum(1 for key in required_keys if key in obj)
        if score > best_score:
            best, best_score = obj, score
            if required_keys and score == len(required_keys):
                break
    return best


def strip_noise(obj: Any) -> tuple[Any, list[str]]:
    """Remove known wrapper keys at any depth; returns the clean copy and the paths removed."""
    removed: list[str] = []

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key in NOISE_KEYS:
                    removed.append(path + "." + key)
                    continue
                out[key] = walk(value, path + "." + key)
            return out
        if isinstance(node, list):
            return [walk(item, f"{path}[{i}]") for i, item in enumerate(node)]
        return node

    return walk(obj, "$"), removed


def validate(obj: Any, schema: Mapping[str, Any]) -> str | None:
    """None when `obj` satisfies `schema`, else one short message naming the first problem."""
    try:
        validator = jsonschema.Draft202012Validator(dict(schema))
        error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    except Exception as exc:  # a broken schema file is a value too
        return "schema could not be used: " + str(exc)[:200]
    if error is None:
        return None
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return (where + ": " + error.message)[:300]


@dataclass(frozen=True)
class Extraction:
    obj: dict[str, Any] | None
    valid: bool
    error: str | None = None
    noise_removed: tuple[str, ...] = ()
    objects_seen: int = 0


def extract_and_validate(text: str, schema: Mapping[str, Any]) -> Extraction:
    required = tuple(schema.get("required") or ())
    seen = sum(1 for _ in json_objects(text)) if text else 0
    obj = best_object(text, required)
    if obj is None:
        return Extraction(None, False, "no JSON object in the answer", objects_seen=seen)
    error = validate(obj, schema)
    if error is None:
        return Extraction(obj, True, objects_seen=seen)
    cleaned, removed = strip_noise(obj)
    if removed:
        error2 = validate(cleaned, schema)
        return Extraction(cleaned, error2 is None, error2, tuple(removed), seen)
    return Extraction(obj, False, error, objects_seen=seen)
