"""The command line's one error type."""
from __future__ import annotations


class CommandError(Exception):
    """A failure to report to the user. ``tunefarm.cli.main`` prints it as ``tunefarm <command>: error: <first
    line>`` and exits with ``status``: 1 when the command failed, 2 when ``tune`` refused its input before
    anything started (as argparse does for bad usage)."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status
