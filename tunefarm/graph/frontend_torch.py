"""Import PyTorch models through ``torch.fx`` (optional: needs ``torch``, imported only when used).

``from_fx(graph_module, input_info)`` walks the FX graph in order, exactly as the course's ``from_fx`` does:
placeholders become function parameters typed by ``input_info`` (``[((1, 784), "float32")]``), parameters
(``get_attr`` and the weights of called modules) become constants, and each call becomes a graph op emitted
through a ``BlockBuilder``. Supported: ``nn.Linear``, ``nn.ReLU``, ``nn.Conv2d``, ``nn.MaxPool2d``,
``nn.Flatten``, ``nn.Sequential`` (traced through), ``torch.matmul`` / ``@``, ``torch.relu`` /
``F.relu`` / ``.relu()``, ``F.linear``, ``torch.flatten`` / ``.flatten()``, ``.view`` / ``.reshape``,
``+`` / ``torch.add``. Anything else raises ``UnsupportedTorchOp`` naming the node.

``from_torch(model, input_info)`` traces with ``torch.fx.symbolic_trace`` first.
"""
from __future__ import annotations

import operator

import numpy as np

from ..ir.graph_expr import Constant, GraphExpr, GraphVar, TensorType
from ..ir.module import IRModule
from . import ops
from .builder import BlockBuilder


class UnsupportedTorchOp(NotImplementedError):
    """The FX graph has a node this importer cannot translate."""


def _np(t) -> np.ndarray:
    return np.ascontiguousarray(t.detach().cpu().numpy())


def _pair(v) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def fetch_attr(fx_mod, target: str):
    """The attribute ``a.b.c`` of the module (the course's helper), with a clear error when it is missing."""
    obj = fx_mod
    atoms = target.split(".")
    for i, atom in enumerate(atoms):
        if not hasattr(obj, atom):
            raise UnsupportedTorchOp(f"node references a missing attribute {'.'.join(atoms[:i + 1])!r}")
        obj = getattr(obj, atom)
    return obj


class _Importer:
    def __init__(self, fx_mod, keep_params_as_input: bool):
        import torch

        self.torch = torch
        self.fx_mod = fx_mod
        self.modules = dict(fx_mod.named_modules())
        self.keep = keep_params_as_input
        self.bb = BlockBuilder()
        self.params: dict[str, np.ndarray] = {}
        self.param_vars: list[GraphVar] = []
        self.env: dict = {}

    # ---------------------------------------------------------------- values
    def param(self, tensor, name: str) -> GraphExpr:
        arr = _np(tensor)
        if not self.keep:
            return Constant(arr, name)
        gname = name.replace(".", "_")
        if not gname.isidentifier():
            gname = "p_" + gname
        v = GraphVar(gname, TensorType(arr.shape, str(arr.dtype)))
        self.params[gname] = arr
        self.param_vars.append(v)
        return v

    def arg(self, a):
        import torch.fx as fx

        if isinstance(a, fx.Node):
            return self.env[a]
        return a

    def emit(self, call) -> GraphVar:
        return self.bb.emit(call)

    # ---------------------------------------------------------------- modules
    def call_module(self, node):
        torch = self.torch
        nn = torch.nn
        mod = self.modules[node.target]
        x = self.arg(node.args[0])
        if isinstance(mod, nn.Linear):
            w = self.param(mod.weight, f"{node.target}.weight")
            if mod.bias is None:
                return self.emit(ops.linear(x, w))
            return self.emit(ops.linear(x, w, self.param(mod.bias, f"{node.target}.bias")))
        if isinstance(mod, nn.ReLU):
            return self.emit(ops.relu(x))
        if isinstance(mod, nn.Conv2d):
            if _pair(mod.dilation) != (1, 1) or mod.groups != 1 or mod.padding_mode != "zeros" \
                    or isinstance(mod.padding, str):
                raise UnsupportedTorchOp(f"{node.target}: Conv2d with dilation, groups, string padding or "
                                         "non-zero padding mode is not supported")
            y = self.emit(ops.conv2d(x, self.param(mod.weight, f"{node.target}.weight"), _pair(mod.stride),
                                     _pair(mod.padding)))
            if mod.bias is None:
                return y
            b = _np(mod.bias).reshape(-1, 1, 1)
            bias = Constant(b, f"{node.target}.bias") if not self.keep else self.emit(
                ops.reshape(self.param(mod.bias, f"{node.target}.bias"), b.shape))
            return self.emit(ops.add(y, bias))
        if isinstance(mod, nn.MaxPool2d):
            if _pair(mod.dilation) != (1, 1) or mod.ceil_mode or mod.return_indices:
                raise UnsupportedTorchOp(f"{node.target}: MaxPool2d with dilation, ceil_mode or return_indices is "
                                         "not supported")
            stride = mod.stride if mod.stride is not None else mod.kernel_size
            return self.emit(ops.max_pool2d(x, _pair(mod.kernel_size), _pair(stride), _pair(mod.padding)))
        if isinstance(mod, nn.Flatten):
            return self.flatten(x, mod.start_dim, mod.end_dim, node)
        if isinstance(mod, nn.Identity):
            return x
        raise UnsupportedTorchOp(f"module {node.target!r} of type {type(mod).__name__} is not supported "
                                 "(Linear, ReLU, Conv2d, MaxPool2d, Flatten, Sequential)")

    def flatten(self, x, start_dim, end_dim, node):
        nd = x.type.ndim
        if start_dim % nd != 1 % nd or end_dim % nd != (nd - 1):
            raise UnsupportedTorchOp(f"{node.name}: only flatten(start_dim=1, end_dim=-1) is supported")
        return self.emit(ops.flatten(x))

    # ---------------------------------------------------------------- functions / methods
    def call_function(self, node):
        torch = self.torch
        F = torch.nn.functional
        t = node.target
        args = [self.arg(a) for a in node.args]
        kwargs = {k: self.arg(v) for k, v in node.kwargs.items()}
        if t in (torch.matmul, operator.matmul):
            return self.emit(ops.matmul(args[0], args[1]))
        if t in (torch.relu, F.relu):
            return self.emit(ops.relu(args[0]))
        if t is F.linear:
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            return self.emit(ops.linear(args[0], args[1]) if bias is None else ops.linear(args[0], args[1], bias))
        if t in (operator.add, torch.add):
            if not all(isinstance(a, GraphExpr) for a in args[:2]):
                raise UnsupportedTorchOp(f"{node.name}: adding a Python number to a tensor is not supported")
            return self.emit(ops.add(args[0], args[1]))
        if t is torch.flatten:
            start = args[1] if len(args) > 1 else kwargs.get("start_dim", 0)
            end = args[2] if len(args) > 2 else kwargs.get("end_dim", -1)
            return self.flatten(args[0], start, end, node)
        if t is getattr:  # x.shape / x.dtype used for view(...) arguments
            obj, attr = args
            if attr == "shape" and isinstance(obj, GraphExpr):
                return obj.type.shape
        if t is operator.getitem and isinstance(args[0], tuple):
            return args[0][args[1]]
        raise UnsupportedTorchOp(f"function {getattr(t, '__name__', t)!r} (node {node.name}) is not supported")

    def call_method(self, node):
        args = [self.arg(a) for a in node.args]
        m = node.target
        x = args[0]
        if m == "relu":
            return self.emit(ops.relu(x))
        if m in ("view", "reshape"):
            shape = args[1] if len(args) == 2 and isinstance(args[1], (tuple, list)) else args[1:]
            return self.emit(ops.reshape(x, tuple(int(d) if not hasattr(d, "name") else d for d in shape)))
        if m == "flatten":
            start = args[1] if len(args) > 1 else node.kwargs.get("start_dim", 0)
            end = args[2] if len(args) > 2 else node.kwargs.get("end_dim", -1)
            return self.flatten(x, start, end, node)
        if m == "size":
            shape = x.type.shape
            return shape if len(args) == 1 else shape[args[1]]
        if m == "add":
            return self.emit(ops.add(x, args[1]))
        raise UnsupportedTorchOp(f"method .{m}() (node {node.name}) is not supported")

    # ---------------------------------------------------------------- graph
    def run(self, input_info) -> IRModule:
        inputs: list[GraphVar] = []
        placeholders = [n for n in self.fx_mod.graph.nodes if n.op == "placeholder"]
        if len(input_info) != len(placeholders):
            raise ValueError(f"the model takes {len(placeholders)} input(s) "
                             f"({', '.join(n.name for n in placeholders)}), input_info describes {len(input_info)}")
        info = iter(input_info)
        result = None
        with self.bb.function("main"):
            with self.bb.dataflow():
                for node in self.fx_mod.graph.nodes:
                    if node.op == "placeholder":
                        shape, dtype = next(info)
                        v = GraphVar(node.name if node.name.isidentifier() else f"input{len(inputs)}",
                                     TensorType(tuple(shape), dtype))
                        inputs.append(v)
                        self.env[node] = v
                    elif node.op == "get_attr":
                        self.env[node] = self.param(fetch_attr(self.fx_mod, node.target), node.target)
                    elif node.op == "call_module":
                        self.env[node] = self.call_module(node)
                    elif node.op == "call_function":
                        self.env[node] = self.call_function(node)
                    elif node.op == "call_method":
                        self.env[node] = self.call_method(node)
                    elif node.op == "output":
                        out = node.args[0]
                        if isinstance(out, (tuple, list)):
                            if len(out) != 1:
                                raise UnsupportedTorchOp("models with several outputs are not supported")
                            out = out[0]
                        value = self.arg(out)
                        if not isinstance(value, GraphExpr):
                            raise UnsupportedTorchOp("the model's output is not a tensor")
                        result = self.bb.emit_output(value)
                    else:  # pragma: no cover - FX has no other node kinds
                        raise UnsupportedTorchOp(f"FX node kind {node.op!r}")
            self.bb.emit_func_output(result, params=inputs + self.param_vars)
        return self.bb.get()


def from_fx(graph_module, input_info, keep_params_as_input: bool = False):
    """An IRModule (function ``main``) from a ``torch.fx.GraphModule``.

    ``input_info``: ``[(shape, dtype), ...]`` per placeholder. Weights become constants, or with
    ``keep_params_as_input=True`` extra parameters, and the result is ``(mod, params)`` to pass to
    ``tunefarm.compile(mod, params)``.
    """
    imp = _Importer(graph_module, keep_params_as_input)
    mod = imp.run(input_info)
    return (mod, imp.params) if keep_params_as_input else mod


def from_torch(model, input_info, keep_params_as_input: bool = False):
    """``from_fx(torch.fx.symbolic_trace(model), input_info)`` (the model is put in eval mode)."""
    import torch.fx

    model.train(False)  # inference mode (torch's evaluation mode)
    return from_fx(torch.fx.symbolic_trace(model), input_info, keep_params_as_input)


__all__ = ["UnsupportedTorchOp", "fetch_attr", "from_fx", "from_torch"]
