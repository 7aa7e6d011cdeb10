"""``relax.frontend.nn``: ``tunefarm.nn`` with TVM's ``export_tvm`` (parameters as ``(name, array)`` pairs)."""
from __future__ import annotations

from ....nn import Flatten, Linear, ReLU, Sequential, spec
from ....nn import Module as _Module


class Module(_Module):
    """``nn.Module`` whose ``export_tvm(spec)`` returns ``(IRModule, [(name, parameter), ...])`` as TVM's does
    (``for name, param in param_spec``; every parameter has ``.shape`` and ``.dtype``)."""

    def export_tvm(self, spec: dict, debug: bool = False):
        mod, params = self.export(spec, debug)
        return mod, list(params.items())


__all__ = ["Flatten", "Linear", "Module", "ReLU", "Sequential", "spec"]
