"""``nn.Module``: PyTorch-like layers whose parameters are numpy arrays, exportable to a graph IRModule.

``model(x)`` on numpy arrays computes eagerly (a reference); ``model.export(spec)`` traces ``forward`` into
an IRModule plus a ``{name: array}`` params dict, like the course's ``export_tvm``.
"""
from __future__ import annotations

import numpy as np

from ..graph.builder import BlockBuilder
from ..graph.params import load_params
from ..ir.expr import Var
from ..ir.graph_expr import GraphVar, TensorType
from .tracing import Traced, Tracer


class Module:
    def __init__(self):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_params", {})

    def __setattr__(self, name, value):
        if "_modules" not in self.__dict__:
            raise RuntimeError(f"call super().__init__() in {type(self).__name__}.__init__ before assigning layers")
        self._modules.pop(name, None)
        self._params.pop(name, None)
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, np.ndarray):
            old = self.__dict__.get(name)
            if isinstance(old, np.ndarray) and old.shape != value.shape:
                raise ValueError(f"{type(self).__name__}.{name}: expected shape {old.shape}, got {value.shape}")
            value = np.ascontiguousarray(value, dtype=old.dtype if isinstance(old, np.ndarray) else None)
            self._params[name] = value
        object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ parameters
    def named_parameters(self, prefix: str = ""):
        for name in self._params:
            if self.__dict__.get(name) is not None:
                yield prefix + name, self.__dict__[name]
        for name, m in self._modules.items():
            yield from m.named_parameters(prefix + name + ".")

    def named_modules(self, prefix: str = ""):
        yield prefix.rstrip("."), self
        for name, m in self._modules.items():
            yield from m.named_modules(prefix + name + ".")

    def state_dict(self) -> dict[str, np.ndarray]:
        return dict(self.named_parameters())

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        own = dict(self.named_parameters())
        missing = sorted(set(own) - set(state))
        unexpected = sorted(set(state) - set(own))
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing {missing}, unexpected {unexpected}")
        for key, arr in state.items():
            if key not in own:
                continue
            *path, leaf = key.split(".")
            mod = self
            for p in path:
                mod = mod._modules[p]
            setattr(mod, leaf, np.asarray(arr))

    def load_params(self, source, strict: bool = True) -> None:
        """Load a state dict from a dict of arrays, an ``.npz`` file or a pickle (read by the safe unpickler)."""
        self.load_state_dict(load_params(source), strict=strict)

    # ------------------------------------------------------------------ running
    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def __call__(self, *args):
        return self.forward(*args)

    # ------------------------------------------------------------------ export
    def export(self, spec: dict, debug: bool = False):
        """Trace each method named in ``spec`` into a graph function; returns ``(IRModule, params)``.

        ``spec = {"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}``. Parameter names are the dotted
        paths with dots replaced by underscores (``fc1.weight`` -> ``fc1_weight``).
        """
        bb = BlockBuilder()
        params: dict[str, np.ndarray] = {}
        for method, inputs in spec.items():
            sym: dict[str, Var] = {}
            in_vars = []
            for name, t in inputs.items():
                dims = []
                for d in t.shape:
                    if isinstance(d, str):
                        d = sym.setdefault(d, Var(d, "int64"))
                    dims.append(d)
                in_vars.append(GraphVar(name, TensorType(dims, t.dtype)))
            param_vars = {}
            p_vars = []
            for pname, arr in self.named_parameters():
                gname = pname.replace(".", "_")
                if not gname.isidentifier():
                    gname = "p_" + gname
                v = GraphVar(gname, TensorType(arr.shape, str(arr.dtype)))
                param_vars[id(arr)] = v
                p_vars.append(v)
                params[gname] = arr
            tracer = Tracer(bb, param_vars)
            with bb.function(method, in_vars + p_vars, {"num_input": len(in_vars)}):
                with bb.dataflow():
                    out = getattr(self, method)(*[Traced(v, tracer) for v in in_vars])
                    if not isinstance(out, Traced):
                        raise TypeError(f"{method} must return a tensor computed from its inputs")
                    gv = bb.emit_output(out.value)
                bb.emit_func_output(gv)
        return bb.get(), params

    export_tvm = export
