"""Errors a user sees as one line on stderr (never a traceback, never a secret)."""


class DmfError(Exception):
    """A failure the user can act on; its message is the whole story, in one sentence."""

    exit_code = 1


class ConfigError(DmfError):
    """The configuration is missing or wrong (key, URL, paths)."""
