"""Print graph functions in the course's Relax script form (``@R.function`` with ``R.dataflow()``)."""
from __future__ import annotations

from ..ir.expr import Var
from .expr import Call, Constant, GraphVar, TensorType

HIGH_LEVEL_PREFIX = {"matmul": "R.matmul", "dense": "R.nn.linear", "linear": "R.nn.linear", "add": "R.add",
                     "relu": "R.nn.relu", "conv2d": "R.nn.conv2d", "max_pool2d": "R.nn.max_pool2d",
                     "flatten": "R.flatten", "reshape": "R.reshape", "permute_dims": "R.permute_dims"}


def _dims(t: TensorType, declared: set, quote_new: bool) -> str:
    parts = []
    for d in t.shape:
        if isinstance(d, Var):
            if quote_new and d not in declared:
                declared.add(d)
                parts.append(f'"{d.name}"')
            else:
                parts.append(d.name)
        else:
            parts.append(str(d))
    inner = ", ".join(parts)
    return f"({inner},)" if len(parts) == 1 else f"({inner})"


def _type(t: TensorType, declared: set, quote_new: bool = False) -> str:
    return f'R.Tensor({_dims(t, declared, quote_new)}, "{t.dtype}")'


def function_to_script(fn, indent: int = 0) -> str:
    pad = "    " * indent
    declared: set = set()
    consts: dict = {}
    params = ", ".join(f"{p.name}: {_type(p.type, declared, True)}" for p in fn.params)
    lines = [f"{pad}@R.function", f"{pad}def {fn.name}({params}):"]

    def arg(a) -> str:
        if isinstance(a, GraphVar):
            return a.name
        if isinstance(a, Constant):
            idx = consts.setdefault(id(a), len(consts))
            return f'metadata["relax.expr.Constant"][{idx}]'
        return repr(a)

    for block in fn.blocks:
        lines.append(f"{pad}    with R.dataflow():")
        for b in block.bindings:
            v = b.value
            if isinstance(v, Call):
                args = ", ".join(arg(a) for a in v.args)
                tup = f"({args},)" if len(v.args) == 1 else f"({args})"
                if v.op == "call_tir":
                    rhs = f"R.call_tir({v.attrs['func']}, {tup}, out_sinfo={_type(v.type, declared)})"
                elif v.op == "call_dps_packed":
                    rhs = f'R.call_dps_packed("{v.attrs["func"]}", {tup}, out_sinfo={_type(v.type, declared)})'
                else:
                    name = HIGH_LEVEL_PREFIX.get(v.op, f"R.{v.op}")
                    extra = "".join(f", {k}={val!r}" for k, val in v.attrs.items())
                    rhs = f"{name}({args}{extra})"
            else:
                rhs = arg(v)
            lines.append(f"{pad}        {b.var.name} = {rhs}")
        if block.outputs:
            lines.append(f"{pad}        R.output({', '.join(o.name for o in block.outputs)})")
    lines.append(f"{pad}    return {arg(fn.ret)}")
    return "\n".join(lines) + "\n"
