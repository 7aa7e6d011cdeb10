"""``tvm.tir.expr``: TVM's constructors (dtype first) over tunefarm's expression nodes."""
from ...ir import expr as _expr


def IntImm(dtype: str, value: int) -> _expr.IntImm:  # noqa: N802 (TVM's name)
    return _expr.IntImm(value, dtype)


def FloatImm(dtype: str, value: float) -> _expr.FloatImm:  # noqa: N802 (TVM's name)
    return _expr.FloatImm(value, dtype)


def Var(name: str, dtype: str = "int32") -> _expr.Var:  # noqa: N802 (TVM's name)
    return _expr.Var(name, dtype)


__all__ = ["FloatImm", "IntImm", "Var"]
