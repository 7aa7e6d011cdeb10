"""The measurement farm: build, validate and time candidates in isolated workers (see ARCHITECTURE.md).

``LocalFarm`` uses worker processes on this machine; ``RayFarm`` uses Ray actors on a cluster (ray is imported
only when a RayFarm is created, so ``import tunefarm.farm`` stays light).
"""
from .base import Farm, FarmError, FarmStats
from .candidate import Candidate, CandidateError
from .local_farm import LocalFarm
from .ray_farm import RayFarm
from .result import MeasureResult, MeasureStatus

__all__ = ["Farm", "FarmError", "FarmStats", "LocalFarm", "RayFarm", "Candidate", "CandidateError",
           "MeasureResult", "MeasureStatus"]
