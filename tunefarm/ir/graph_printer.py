"""Print graph functions in the course's Relax script form (``@R.function`` with ``R.dataflow()``).

The text parses back (``tunefarm.script.from_source``; bound constants print as
``metadata["relax.expr.Constant"][i]`` and come back with ``tunefarm.script.relax_parser.from_source(text,
metadata=fn.metadata())``), so ``print -> parse -> print`` is the identity on the text.
"""
from __future__ import annotations

from .expr import Var
from .graph_expr import Call, Constant, GraphVar, TensorType

OP_NAMES = {"matmul": "R.matmul", "dense": "R.nn.linear", "add": "R.add", "relu": "R.nn.relu",
            "conv2d": "R.nn.conv2d", "max_pool2d": "R.nn.max_pool2d", "flatten": "R.flatten",
            "reshape": "R.reshape", "permute_dims": "R.permute_dims"}
_ATTR_ORDER = {"conv2d": ("strides", "padding"), "max_pool2d": ("pool_size", "strides", "padding"),
               "reshape": ("shape",), "permute_dims": ("axes",)}


def _tuple(items) -> str:
    items = list(items)
    return f"({items[0]},)" if len(items) == 1 else "(" + ", ".join(items) + ")"


class _FunctionPrinter:
    def __init__(self, fn, constants: list | None = None):
        self.fn = fn
        self.declared: set = set()
        self.consts: list = [] if constants is None else constants  # numbered in order; shared by a module

    def dims(self, t: TensorType, quote_new: bool) -> str:
        parts = []
        for d in t.shape:
            if isinstance(d, Var):
                if quote_new and d not in self.declared:
                    self.declared.add(d)
                    parts.append(f'"{d.name}"')
                else:
                    parts.append(d.name)
            else:
                parts.append(str(d))
        return _tuple(parts)

    def type(self, t: TensorType, quote_new: bool = False) -> str:
        return f'R.Tensor({self.dims(t, quote_new)}, dtype="{t.dtype}")'

    def arg(self, a) -> str:
        if isinstance(a, GraphVar):
            return a.name
        if isinstance(a, Constant):
            if a.data.ndim == 0:  # scalars print inline and parse back exactly (repr round-trips floats)
                return f'R.const({a.data.item()!r}, "{a.dtype}")'
            idx = next((i for i, c in enumerate(self.consts) if c is a), None)
            if idx is None:
                idx = len(self.consts)
                self.consts.append(a)
            return f'metadata["relax.expr.Constant"][{idx}]'
        raise TypeError(f"cannot print {a!r} as a graph value")

    def attr(self, v) -> str:
        if isinstance(v, tuple):
            return _tuple(self.attr(x) for x in v)
        if isinstance(v, list):
            return "[" + ", ".join(self.attr(x) for x in v) + "]"
        if isinstance(v, Var):
            return v.name
        return repr(v)

    def call(self, v: Call) -> str:
        args = [self.arg(a) for a in v.args]
        if v.op == "call_tir":
            return f"R.call_tir({v.attrs['func']}, {_tuple(args)}, out_sinfo={self.type(v.type)})"
        if v.op == "call_dps_packed":
            return f'R.call_dps_packed("{v.attrs["func"]}", {_tuple(args)}, out_sinfo={self.type(v.type)})'
        if v.op == "call_func":
            return f"{v.attrs['func']}({', '.join(args)})"
        if v.op not in OP_NAMES:
            raise ValueError(f"cannot print graph op {v.op!r}")
        extra = [f"{k}={self.attr(v.attrs[k])}" for k in _ATTR_ORDER.get(v.op, ()) if v.attrs.get(k) is not None]
        return f"{OP_NAMES[v.op]}({', '.join(args + extra)})"

    def print(self, indent: int) -> str:
        fn = self.fn
        pad = "    " * indent
        params = ", ".join(f"{p.name}: {self.type(p.type, True)}" for p in fn.params)
        body: list[str] = []
        undeclared: list = []
        for b in fn.bindings():
            for d in b.var.type.shape:
                if isinstance(d, Var) and d not in self.declared and d not in undeclared:
                    undeclared.append(d)
        if undeclared:
            names = ", ".join(d.name for d in undeclared)
            decl = ", ".join("T.int64()" for _ in undeclared)
            body.append(f"{names} = {decl}")
            self.declared.update(undeclared)
        lines = [f"{pad}@R.function", f"{pad}def {fn.name}({params}) -> {self.type(fn.ret.type, False)}:"]
        if fn.attrs:
            body.append(f"R.func_attr({fn.attrs!r})")
        for block in fn.blocks:
            body.append("with R.dataflow():")
            for b in block.bindings:
                v = b.value
                rhs = self.call(v) if isinstance(v, Call) else self.arg(v)
                if isinstance(v, Call) and v.op == "call_func":  # the parser needs the type of such a call
                    body.append(f"    {b.var.name}: {self.type(b.var.type)} = {rhs}")
                else:
                    body.append(f"    {b.var.name} = {rhs}")
            if block.outputs:
                body.append(f"    R.output({', '.join(o.name for o in block.outputs)})")
            elif not block.bindings:
                body.append("    pass")
        body.append(f"return {self.arg(fn.ret)}")
        lines.extend(f"{pad}    {ln}" for ln in body)
        return "\n".join(lines) + "\n"


def function_to_script(fn, indent: int = 0, constants: list | None = None) -> str:
    """``fn`` as script text; bound constants are numbered in ``constants`` (a module shares one list)."""
    return _FunctionPrinter(fn, constants).print(indent)


def function_metadata(fn) -> dict:
    """``{"relax.expr.Constant": [arrays]}`` numbered as ``function_to_script`` numbers them."""
    p = _FunctionPrinter(fn)
    p.print(0)
    return {"relax.expr.Constant": [c.data for c in p.consts]}


__all__ = ["function_metadata", "function_to_script"]
