"""Module-to-module graph passes, named like Relax's: ``BindParams``, ``LegalizeOps``, ``FuseOps``,
``FuseTIR``, ``DeadCodeElimination``. Each pass is a callable ``IRModule -> IRModule``."""
from .bind_params import BindParams
from .dce import DeadCodeElimination
from .fuse import FuseOps, FuseTIR
from .legalize import LegalizeOps

__all__ = ["BindParams", "DeadCodeElimination", "FuseOps", "FuseTIR", "LegalizeOps"]
