"""``FarmOnDemand``: a farm that starts its workers (and Ray) the first time something is measured.

Starting a Ray farm takes 5-20 s. A command that fails on bad input, a job whose budget is already stored
(a resume with nothing left) or a main job with ``--trials 0`` must not pay for it, and must not leave a half
started cluster behind when it fails. The job only asks a farm for ``target`` and ``measure``; this wrapper
answers ``target`` without starting anything when it is known in advance (given explicitly, or this host's
CPU for a private local Ray or local worker processes: a node reports ``Target.host()``), and starts the real
farm when work is first put on it (``put``, ``capacity``, ``measure``, ``submit``).
"""
from __future__ import annotations

from collections.abc import Callable

from ..farm import FarmError, check_arguments, create
from ..target import Target, as_target, check_known_cpu
from .limits import check_workers


class FarmOnDemand:
    """Duck-types a ``tunefarm.farm.Farm`` (``target``, ``put`` / ``poll`` / ``pending`` / ``capacity``,
    ``items_per_worker``, ``abandon``, ``num_workers``, ``stats``, ``close``); ``started`` says whether the real
    farm exists yet."""

    def __init__(self, start: Callable[[], object], target=None):
        self._start = start
        self._target = target
        self._farm = None
        self._closed = False

    @property
    def started(self) -> bool:
        return self._farm is not None

    def start(self):
        """Start the real farm now (if not yet) and return it.

        Callers that know they will measure call this on the main thread: started lazily, the farm would start
        on the job's measuring thread, where Ray cannot install its signal handlers.
        """
        if self._closed:
            raise FarmError("this farm is closed")
        if self._farm is None:
            self._farm = self._start()
        return self._farm

    _get = start

    @property
    def target(self):
        if self._farm is None and self._target is not None:
            return self._target
        return self._get().target

    @property
    def num_workers(self) -> int:
        return self._get().num_workers

    @property
    def stats(self):
        return self._get().stats

    @property
    def pending(self) -> int:
        return 0 if self._farm is None else self._farm.pending

    @property
    def capacity(self) -> int:
        return self._get().capacity

    @property
    def items_per_worker(self) -> int:
        return self._get().items_per_worker

    def rooms(self) -> dict[str, int]:
        return {} if self._farm is None else self._farm.rooms()

    def put(self, work) -> int:
        return self._get().put(work)

    def poll(self, timeout_s: float | None = None) -> list:
        return [] if self._farm is None else self._farm.poll(timeout_s)

    def record_trial(self, result, task: str) -> None:
        if self._farm is not None:
            self._farm.record_trial(result, task)

    def abandon(self) -> None:
        if self._farm is not None:
            self._farm.abandon()

    def close(self) -> None:
        self._closed = True
        if self._farm is not None:
            self._farm.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_farm_arguments(kind: str, target=None, workers: int | None = None, ray_address: str | None = None):
    """Refuse what the farm would fail on once started: a bad name or count, more workers than this host holds
    (when they run here), a CPU LLVM does not know. Returns the target given (a ``Target``), or None."""
    check_arguments(kind, workers, ray_address)
    if kind == "local" or ray_address is None:  # the workers run on this host: it must hold them
        check_workers(workers)
    return None if target is None else check_known_cpu(as_target(target))


def farm_on_demand(kind: str = "ray", target=None, workers: int | None = None,
                   ray_address: str | None = None) -> FarmOnDemand:
    """The farm ``tunefarm.farm.create(kind, ...)`` makes (``"ray"`` or ``"local"``), started when first used.

    Arguments are checked now, so bad ones fail before anything starts.
    """
    known = check_farm_arguments(kind, target, workers, ray_address)
    if kind == "ray" and known is None and ray_address is None and not _ray_connected():
        known = Target.host()  # a private local Ray: its only node is this machine
    elif kind == "local":
        known = known or Target.host()  # worker processes of this machine
    return FarmOnDemand(lambda: create(kind, num_workers=workers, target=known, address=ray_address), known)


def _ray_connected() -> bool:
    """Whether this process already joined a Ray cluster (then RayFarm uses it, whatever its nodes are)."""
    import sys

    ray = sys.modules.get("ray")  # never import ray only to ask: importing it takes seconds
    return ray is not None and ray.is_initialized()
