"""``tvm.meta_schedule`` (``ms``): ``ms.tune_tir`` tunes a TensorIR function on tunefarm's farm and returns the
database; ``ms.tir_integration.compile_tir`` gives back the best schedule found; a stochastic schedule
function becomes the search space with ``ms.space_generator.ScheduleFn``."""
from . import space_generator, tir_integration
from .tune import tune_tir

__all__ = ["space_generator", "tir_integration", "tune_tir"]
