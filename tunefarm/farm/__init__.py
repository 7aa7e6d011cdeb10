"""The farm: run work items (and build, validate and time candidates) in isolated workers (see ARCHITECTURE.md).

``LocalFarm`` uses worker processes on this machine; ``RayFarm`` uses Ray actors on a cluster (ray is imported
only when a RayFarm is created, so ``import tunefarm.farm`` stays light). Both stream ``Work`` items with
``put`` / ``poll`` (work.py); ``MeasureInput`` is a trace and its workload as data for ``Measurer.measure``
(``tunefarm.testing.batch`` measures a batch of them on a farm). ``create``
makes one from its name, the way the command line, the tuning API and the TVM facade choose a farm.
"""
from .base import Farm, FarmError, FarmStats
from .measure_input import MeasureInput, MeasureInputError
from .local_farm import LocalFarm
from .ray_farm import RayFarm
from ..runtime.measure_result import MeasureResult, MeasureStatus
from .work import Done, DoneStatus, Work, WorkerContext

KINDS = ("local", "ray")


def check_arguments(kind: str, num_workers: int | None = None, address: str | None = None) -> None:
    """Refuse what ``create`` would refuse -- an unknown name, a bad worker count, a Ray address for a local
    farm -- without starting anything (a farm started on first use checks its arguments up front)."""
    if kind not in KINDS:
        raise ValueError(f"unknown farm {kind!r}; use 'ray' or 'local'")
    if num_workers is not None and (isinstance(num_workers, bool) or not isinstance(num_workers, int)
                                    or num_workers < 1):
        raise ValueError(f"the number of workers must be a positive integer, got {num_workers!r}")
    if kind == "local" and address:
        raise ValueError("a Ray address needs the 'ray' farm")


def create(kind: str = "ray", *, num_workers: int | None = None, target=None, address: str | None = None,
           **options) -> Farm:
    """The farm named ``kind``: ``"local"`` (a ``LocalFarm`` of worker processes here) or ``"ray"`` (a
    ``RayFarm``: a private local Ray, or the cluster at ``address``). ``num_workers`` defaults to one per core,
    ``target`` to the workers' CPU; ``options`` go to the farm's class."""
    check_arguments(kind, num_workers, address)
    if kind == "local":
        return LocalFarm(num_workers, target=target, **options)
    return RayFarm(address, num_workers, target=target, **options)


__all__ = ["Farm", "FarmError", "FarmStats", "LocalFarm", "RayFarm", "MeasureInput", "MeasureInputError",
           "MeasureResult", "MeasureStatus", "Work", "Done", "DoneStatus", "WorkerContext", "KINDS",
           "check_arguments", "create"]
