"""``tvm.target.Target("llvm")``: tunefarm's CPU target (``"llvm --num-cores=1"`` and ``-mcpu=`` parse)."""
from ..target import Target

__all__ = ["Target"]
