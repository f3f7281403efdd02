"""Last look at a prompt before tokens are spent.

Refuses a prompt that is empty, larger than the cap, still carries an unrendered `{{TOKEN}}`,
or repeats the same block over and over (a rendering loop). Picks the transport: the `-p`
argument up to the command-line-safe size, stdin stream-json above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from dmf_watch.enrich.render import TOKEN

BLOCK = 512
MAX_REPEAT_RATIO = 0.35


@dataclass(frozen=True)
class GuardVerdict:
    ok: bool
    transport: str  # 'argv' | 'stdin'
    reason: str = ""


def repetition_ratio(text: str, block: int = BLOCK) -> float:
    """Share of fixed-size blocks that are copies of the most repeated block."""
    if len(text) < block * 4:
        return 0.0
    counts: dict[str, int] = {}
    total = 0
    for start in range(0, len(text) - block + 1, block):
        chunk = text[start : start + block]
        counts[chunk] = counts.get(chunk, 0) + 1
        total += 1
    return (max(counts.values()) - 1) / total if total else 0.0


def check_prompt(prompt: str, max_chars: int, cmdline_safe_chars: int) -> GuardVerdict:
    if not prompt or not prompt.strip():
        return GuardVerdict(False, "argv", "empty prompt")
    if len(prompt) > max_chars:
        return GuardVerdict(False, "argv", f"prompt of {len(prompt)} characters exceeds {max_chars}")
    leftovers = sorted(set(m.group(0) for m in TOKEN.finditer(prompt)))
    if leftovers:
        return GuardVerdict(False, "argv", "unrendered tokens " + ", ".join(leftovers[:5]))
    ratio = repetition_ratio(prompt)
    if ratio > MAX_REPEAT_RATIO:
        return GuardVerdict(False, "argv", f"repetitive prompt (ratio {ratio:.2f})")
    return GuardVerdict(True, "argv" if len(prompt) <= cmdline_safe_chars else "stdin")
