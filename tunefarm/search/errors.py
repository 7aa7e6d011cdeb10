"""Errors of the search layer."""
from __future__ import annotations


class SearchError(Exception):
    """The search cannot go on for a task: its space yields no valid candidate, or it was misconfigured."""
