"""``relax.transform``: tunefarm's graph passes (each a callable ``IRModule -> IRModule``)."""
from ...graph.passes import BindParams, DeadCodeElimination, FuseOps, FuseTIR, LegalizeOps

__all__ = ["BindParams", "DeadCodeElimination", "FuseOps", "FuseTIR", "LegalizeOps"]
