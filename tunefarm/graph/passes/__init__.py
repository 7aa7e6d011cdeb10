"""Module-to-module graph passes, named like Relax's: ``BindParams``, ``LegalizeOps``, ``FuseOps``,
``FuseTIR``, ``DeadCodeElimination``, plus ``SpecializeShapes``. Each pass is a callable ``IRModule -> IRModule``."""
from .bind_params import BindParams
from .dce import DeadCodeElimination
from .fuse import FuseOps, FuseTIR
from .legalize import LegalizeOps
from .specialize import SpecializeShapes

__all__ = ["BindParams", "DeadCodeElimination", "FuseOps", "FuseTIR", "LegalizeOps", "SpecializeShapes"]
