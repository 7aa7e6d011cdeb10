"""The driver's queue of work items waiting for a worker, with affinity (``Work.prefer``).

Dispatch rule, the same for every farm: a worker with room gets the oldest queued item that prefers it; else the
oldest item that prefers nobody, or whose preferred worker has no room (an item never waits for a busy worker:
its inputs are cached there, but recomputing them elsewhere is cheaper than idling).
"""
from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable

from .work import Work

UNBLAMED_REQUEUES = 2  # an item whose worker died before starting it is re-run this often, then it is LOST


@dataclasses.dataclass(eq=False)
class Item:
    """A put item as the driver tracks it until its ``Done`` is returned."""

    ticket: int
    work: Work
    payload_text: str           # the payload's JSON, encoded once on put
    prefer: str | None = None   # where dispatch would rather send it (cleared when it was moved off a worker)
    attempt: int = 0            # re-runs after its node left the cluster (``requeue_limit``)
    unblamed: int = 0           # re-runs after a worker died before starting it
    done: bool = False


class WorkQueue:
    """Items in age order, plus an index of the items that prefer each worker."""

    def __init__(self):
        self._items: collections.OrderedDict[int, Item] = collections.OrderedDict()
        self._preferring: dict[str, collections.OrderedDict[int, Item]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def push(self, item: Item, front: bool = False) -> None:
        """Queue ``item``; ``front`` for an item that was already sent once (it keeps its place in line)."""
        self._items[item.ticket] = item
        if front:
            self._items.move_to_end(item.ticket, last=False)
        if item.prefer is not None:
            mine = self._preferring.setdefault(item.prefer, collections.OrderedDict())
            mine[item.ticket] = item
            if front:
                mine.move_to_end(item.ticket, last=False)

    def take(self, worker_id: str, has_room: Callable[[str], bool]) -> Item | None:
        """The item worker ``worker_id`` should run next (see the module docstring), or None."""
        mine = self._preferring.get(worker_id)
        if mine:
            return self._remove(next(iter(mine.values())))
        for item in self._items.values():
            if item.prefer is None or not has_room(item.prefer):
                return self._remove(item)
        return None

    def preferring(self, worker_id: str) -> int:
        """How many queued items prefer that worker."""
        mine = self._preferring.get(worker_id)
        return len(mine) if mine else 0

    def clear(self) -> list[Item]:
        items = list(self._items.values())
        self._items.clear()
        self._preferring.clear()
        return items

    def _remove(self, item: Item) -> Item:
        del self._items[item.ticket]
        if item.prefer is not None:
            mine = self._preferring[item.prefer]
            del mine[item.ticket]
            if not mine:
                del self._preferring[item.prefer]
        return item
