"""Neural-network operators in NCHW layout: ``pad``, ``conv2d`` and ``max_pool2d``.

Padding is a separate ``pad_temp`` compute (as in TVM's topi), so the convolution itself stays a plain
reduction that schedules can tile, and ``compute_inline`` can fold the padding in when wanted. The pad
reads the input at *clamped* indices and selects the pad value outside the input, so every load is in
bounds whether compiled code evaluates both sides of the select or not.
"""
from __future__ import annotations

from ...ir import expr as E
from .. import intrin
from ..compute import compute, reduce_axis
from ..reduce import max as te_max
from ..reduce import min_value
from ..reduce import sum as te_sum
from ..tensor import Tensor, dim_expr
from .broadcast import same_dim


def _pair(v, what: str) -> tuple[int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        pair = (v, v)
    elif isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        pair = (int(v[0]), int(v[1]))
    else:
        raise TypeError(f"{what} must be an int or a pair of ints, got {v!r}")
    return pair


def _dim_add(a, b: int):
    return a + b if isinstance(a, int) else E.add(a, b)


def _out_dim(size, pad: int, kernel: int, stride: int, dilation: int, what: str):
    """Output extent of a sliding window: (size + 2 pad - dilation (kernel - 1) - 1) // stride + 1."""
    span = dilation * (kernel - 1) + 1
    if isinstance(size, int):
        out = (size + 2 * pad - span) // stride + 1
        if out <= 0:
            raise ValueError(f"{what}: window of {kernel} (dilation {dilation}) does not fit in input extent "
                             f"{size} with padding {pad}")
        return out
    return E.add(E.floordiv(E.add(size, 2 * pad - span), stride), 1)


def _pad_literal(value, dtype: str) -> E.PrimExpr:
    if isinstance(value, E.PrimExpr):
        return value if value.dtype == dtype else E.cast(dtype, value)
    if isinstance(value, float) and not dtype.startswith("float"):
        if not value.is_integer():
            raise ValueError(f"pad value {value} does not fit the integer dtype {dtype}")
        value = int(value)
    return E.const(value, dtype)


def pad(data: Tensor, pad_before, pad_after=None, pad_value=0.0, name: str = "pad_temp") -> Tensor:
    """``data`` padded with ``pad_value``: ``pad_before``/``pad_after`` give one int per dimension."""
    if not isinstance(data, Tensor):
        raise TypeError(f"pad: expected a te Tensor, got {type(data).__name__}")
    pad_after = pad_before if pad_after is None else pad_after
    before, after = tuple(pad_before), tuple(pad_after)
    if len(before) != data.ndim or len(after) != data.ndim:
        raise ValueError(f"pad: need one pad amount per dimension of {data.shape}, got {before} / {after}")
    if any((not isinstance(x, int)) or x < 0 for x in before + after):
        raise ValueError(f"pad: pad amounts must be non-negative ints, got {before} / {after}")
    shape = tuple(_dim_add(_dim_add(s, b), a) for s, b, a in zip(data.shape, before, after))

    fill = _pad_literal(pad_value, data.dtype)

    def f(*idx):
        conds = []
        src = []
        for i, b, a, n in zip(idx, before, after, data.shape):
            j = E.sub(i, b) if b else i
            if b:
                conds.append(i >= b)
                j = E.max_(j, 0)
            if a:
                conds.append(i < (b + n if isinstance(n, int) else E.add(n, b)))
                j = E.min_(j, E.sub(dim_expr(n), 1))
            src.append(j)
        return intrin.if_then_else(intrin.all(*conds), data[tuple(src)], fill)

    return compute(shape, f, name=name)


def conv2d(data: Tensor, weight: Tensor, stride=1, padding=0, dilation=1, name: str = "conv2d_nchw") -> Tensor:
    """2-D convolution (cross-correlation, like PyTorch): data NCHW, weight OIHW, result N,O,OH,OW."""
    for t, what in ((data, "data"), (weight, "weight")):
        if not isinstance(t, Tensor) or t.ndim != 4:
            raise ValueError(f"conv2d: {what} must be a 4-D te Tensor, got {t!r}")
    sh, sw = _pair(stride, "conv2d stride")
    ph, pw = _pair(padding, "conv2d padding")
    dh, dw = _pair(dilation, "conv2d dilation")
    if min(sh, sw, dh, dw) < 1 or min(ph, pw) < 0:
        raise ValueError(f"conv2d: stride/dilation must be >= 1 and padding >= 0, got {stride}, {dilation}, "
                         f"{padding}")
    n, c, h, w = data.shape
    k, wc, kh, kw = weight.shape
    if not same_dim(c, wc):
        raise ValueError(f"conv2d: data has {c} channels but weight expects {wc}")
    if not (isinstance(kh, int) and isinstance(kw, int)):
        raise ValueError(f"conv2d: kernel size must be constant, got {kh} x {kw}")
    oh = _out_dim(h, ph, kh, sh, dh, "conv2d height")
    ow = _out_dim(w, pw, kw, sw, dw, "conv2d width")
    src = pad(data, (0, 0, ph, pw), (0, 0, ph, pw)) if (ph or pw) else data
    rc = reduce_axis((0, c), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute(
        (n, k, oh, ow),
        lambda nn, ff, yy, xx: te_sum(
            src[nn, rc, yy * sh + ry * dh, xx * sw + rx * dw] * weight[ff, rc, ry, rx], axis=[rc, ry, rx]),
        name=name)


def max_pool2d(data: Tensor, pool_size, stride=None, padding=0, name: str = "pool_max") -> Tensor:
    """Max pooling over NCHW windows; ``stride`` defaults to ``pool_size`` (PyTorch); pads with -inf."""
    if not isinstance(data, Tensor) or data.ndim != 4:
        raise ValueError(f"max_pool2d: data must be a 4-D te Tensor, got {data!r}")
    kh, kw = _pair(pool_size, "max_pool2d pool_size")
    sh, sw = _pair(stride if stride is not None else (kh, kw), "max_pool2d stride")
    ph, pw = _pair(padding, "max_pool2d padding")
    if min(kh, kw, sh, sw) < 1 or min(ph, pw) < 0:
        raise ValueError("max_pool2d: pool/stride must be >= 1 and padding >= 0")
    if ph * 2 > kh or pw * 2 > kw:
        raise ValueError(f"max_pool2d: padding {padding} must be at most half the pool size {pool_size}")
    n, c, h, w = data.shape
    oh = _out_dim(h, ph, kh, sh, 1, "max_pool2d height")
    ow = _out_dim(w, pw, kw, sw, 1, "max_pool2d width")
    src = pad(data, (0, 0, ph, pw), (0, 0, ph, pw), min_value(data.dtype)) if (ph or pw) else data
    rv0 = reduce_axis((0, kh), name="rv0")
    rv1 = reduce_axis((0, kw), name="rv1")
    return compute((n, c, oh, ow),
                   lambda b, ch, y, x: te_max(src[b, ch, y * sh + rv0, x * sw + rv1], axis=[rv0, rv1]),
                   name=name)
