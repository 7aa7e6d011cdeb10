"""Bounded caches of analyses keyed on IR node identity.

Why this is safe: IR nodes are immutable and hash by identity, so whatever is derived from a node (a
function's block index, a block's inferred regions, the buffers it touches) stays true for as long as that
node lives. The cache holds the node itself (or a tuple of nodes) as the key, so its ``id`` cannot be
reused by another object while the entry exists.

Memory stays bounded with two generations: entries go into a young dict; when it holds ``max_entries``,
it becomes the old one and the previous old one is dropped. A hit in the old generation moves the entry
back to the young one, so what is still in use survives. Every operation is O(1).
"""
from __future__ import annotations

MISSING = object()


class NodeCache:
    """``node -> value`` for values computed from immutable IR nodes (see module doc)."""

    __slots__ = ("_young", "_old", "_max", "name")

    def __init__(self, name: str, max_entries: int = 2048):
        self.name = name
        self._young: dict = {}
        self._old: dict = {}
        self._max = max_entries

    def get(self, key, default=None):
        value = self._young.get(key, MISSING)
        if value is MISSING:
            value = self._old.get(key, MISSING)
            if value is MISSING:
                return default
            self.put(key, value)
        return value

    def put(self, key, value):
        young = self._young
        if len(young) >= self._max:
            self._old = young
            self._young = young = {}
        young[key] = value
        return value

    def clear(self) -> None:
        self._young = {}
        self._old = {}

    def __len__(self) -> int:
        return len(self._young) + len(self._old)


__all__ = ["MISSING", "NodeCache"]
