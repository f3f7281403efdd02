"""Errors a user sees as one line on stderr (never a traceback, never a secret)."""

from __future__ import annotations

from collections.abc import Iterator


class DmfError(Exception):
    """A failure the user can act on; its message is the whole story, in one sentence."""

    exit_code = 1


class ConfigError(DmfError):
    """The configuration is missing or wrong (key, URL, paths)."""


def error_chain(error: BaseException | None) -> Iterator[BaseException]:
    """The error, its causes and contexts, and the exception a dlt step failure wraps, each once:
    what a failure is told by (a full disk, a refused login) is often several wrappers deep."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for nested in (current.__cause__, current.__context__, getattr(current, "exception", None)):
            if isinstance(nested, BaseException):
                todo.append(nested)
