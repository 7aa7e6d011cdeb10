"""The farm: run work items (and build, validate and time candidates) in isolated workers (see ARCHITECTURE.md).

``LocalFarm`` uses worker processes on this machine; ``RayFarm`` uses Ray actors on a cluster (ray is imported
only when a RayFarm is created, so ``import tunefarm.farm`` stays light). Both stream ``Work`` items with
``put`` / ``poll`` (work.py) and measure batches of ``Candidate``s with ``submit`` / ``measure``.
"""
from .base import Farm, FarmError, FarmStats
from .candidate import Candidate, CandidateError
from .local_farm import LocalFarm
from .ray_farm import RayFarm
from ..runtime.measure_result import MeasureResult, MeasureStatus
from .work import Done, DoneStatus, Work, WorkerContext

__all__ = ["Farm", "FarmError", "FarmStats", "LocalFarm", "RayFarm", "Candidate", "CandidateError",
           "MeasureResult", "MeasureStatus", "Work", "Done", "DoneStatus", "WorkerContext"]
