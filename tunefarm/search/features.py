"""Per-store features of a scheduled PrimFunc, for the cost model (in the spirit of Ansor's per-store features).

The extractor walks loops and blocks of the *scheduled* function directly (no lowering): block iteration
variables are replaced by linear forms of the enclosing loop variables, so every buffer access becomes a
linear (or approximately linear, for fused ``//`` and ``%`` bindings) function of the loops. From those it
computes, for each ``BufferStore``: loop structure and extents, parallel / vectorize / unroll annotations,
bytes and distinct bytes touched per buffer, innermost strides, reuse, and an arithmetic-intensity curve.

The per-store vectors are aggregated into one fixed-length vector per candidate (the three heaviest stores,
plus sums over all stores). It is pure Python over a small tree and runs in about a millisecond per
candidate, on the worker that produced it, once per program (``search/generate.py`` keeps the description
with the program in the worker's cache).
``FEATURE_VERSION`` changes whenever a column changes meaning: saved cost models record it and refuse to
load under another version.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.dtype import nbytes
from ..ir.function import PrimFunc
from ..ir.stmt_functor import StmtVisitor
from .block_info import expr_nodes, vars_in

FEATURE_VERSION = 3
N_BUFFERS = 3          # buffer-access slots per store (the written buffer first, then the largest reads)
N_CURVE = 8            # points of the arithmetic-intensity curve
N_FOOTPRINT = 4        # distinct bytes touched under the innermost 1..4 loops
TOP_STORES = 3         # per-candidate aggregation: the heaviest stores, then sums
UNKNOWN_EXTENT = 64    # stand-in for symbolic loop extents
CACHE_LINE = 64
VECTOR_LANES = 8        # float32 lanes of an AVX2 register (the micro-kernel's register count)
VECTOR_REGISTERS = 16   # AVX2 ymm registers

_FLOAT_OPS = {"+", "-", "*", "/", "min", "max"}


def _log(x: float) -> float:
    return math.log2(1.0 + max(0.0, float(x)))


# -------------------------------------------------------------------------------------------------------
# linear forms: {Var: coef} + const, with coefficients as floats (fused // and % are approximated)
# -------------------------------------------------------------------------------------------------------
class _Lin:
    __slots__ = ("coef", "const", "cap")

    def __init__(self, coef: dict, const: float = 0.0, cap: float | None = None):
        self.coef = coef
        self.const = const
        self.cap = cap  # an upper bound on the span this form can take (from % c), or None


def _lin(e, env: dict) -> _Lin:
    """Linear form of an integer index expression over loop variables (``env``: block var -> _Lin)."""
    if isinstance(e, E.Var):
        got = env.get(e)
        return got if got is not None else _Lin({e: 1.0})
    if isinstance(e, E.IntImm):
        return _Lin({}, float(e.value))
    if isinstance(e, E.Binary):
        op = e.op
        if op in ("+", "-"):
            a, b = _lin(e.a, env), _lin(e.b, env)
            sign = 1.0 if op == "+" else -1.0
            coef = dict(a.coef)
            for v, c in b.coef.items():
                coef[v] = coef.get(v, 0.0) + sign * c
            cap = None if a.cap is None or b.cap is None else a.cap + b.cap
            return _Lin(coef, a.const + sign * b.const, cap)
        if op == "*":
            a, b = _lin(e.a, env), _lin(e.b, env)
            if not b.coef:
                return _Lin({v: c * b.const for v, c in a.coef.items()}, a.const * b.const,
                            None if a.cap is None else a.cap * abs(b.const))
            if not a.coef:
                return _Lin({v: c * a.const for v, c in b.coef.items()}, a.const * b.const,
                            None if b.cap is None else b.cap * abs(a.const))
            return _Lin({**a.coef, **b.coef})  # non-linear product: keep the variables, unit weights
        if op in ("//", "%") and isinstance(e.b, E.IntImm) and e.b.value > 0:
            a = _lin(e.a, env)
            c = float(e.b.value)
            if op == "//":
                return _Lin({v: k / c for v, k in a.coef.items()}, a.const // c)
            return _Lin(dict(a.coef), a.const % c, c)
        if op in ("min", "max"):
            return _lin(e.a, env)
    if isinstance(e, E.Cast):
        return _lin(e.value, env)
    return _Lin({v: 1.0 for v in vars_in(e)})


# -------------------------------------------------------------------------------------------------------
# the walk
# -------------------------------------------------------------------------------------------------------
class _Loop:
    __slots__ = ("var", "extent", "kind", "unroll_step")

    def __init__(self, var, extent: int, kind: str, unroll_step: int):
        self.var = var
        self.extent = extent
        self.kind = kind
        self.unroll_step = unroll_step


class _Access:
    __slots__ = ("buffer", "dims", "is_write")

    def __init__(self, buffer, dims: list, is_write: bool):
        self.buffer = buffer
        self.dims = dims  # one _Lin per dimension
        self.is_write = is_write


def _shape(buf) -> list[int]:
    return [s.value if isinstance(s, E.IntImm) else UNKNOWN_EXTENT for s in buf.shape]


def _count_ops(e) -> tuple[int, int]:
    """(float ops, int ops) in a value expression (index arithmetic of loads is not counted)."""
    fl = it = 0
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, E.Binary):
            if n.op in _FLOAT_OPS or n.op in ("//", "%"):
                if n.dtype.startswith("float"):
                    fl += 1
                else:
                    it += 1
            stack.append(n.a)
            stack.append(n.b)
        elif isinstance(n, E.Call):
            fl += 4
            stack.extend(n.args)
        elif isinstance(n, E.Select):
            fl += 1
            stack.extend((n.cond, n.true_value, n.false_value))
        elif isinstance(n, (E.Cast, E.Not)):
            stack.append(n.value if isinstance(n, E.Cast) else n.a)
    return fl, it


def _loads(e) -> list:
    return expr_nodes(e, E.BufferLoad)


class _Store:
    __slots__ = ("loops", "accesses", "float_ops", "int_ops", "is_init", "in_reduction_block")

    def __init__(self, loops, accesses, float_ops, int_ops, is_init, in_reduction_block):
        self.loops = loops
        self.accesses = accesses
        self.float_ops = float_ops
        self.int_ops = int_ops
        self.is_init = is_init
        self.in_reduction_block = in_reduction_block


class _StoreCollector(StmtVisitor):
    """One ``_Store`` per store, in program order. Context passed down the walk: the loops around the
    statement (outermost first), the linear form of each block iteration variable in loop variables, the
    enclosing block, and the loops an ``init`` statement runs under (None outside inits)."""

    def __init__(self):
        self.stores: list[_Store] = []

    def visit_For(self, node: S.For, loops: list, env: dict, block, init_loops):
        ext = node.extent.value if isinstance(node.extent, E.IntImm) else UNKNOWN_EXTENT
        step = int(node.annotations.get("pragma_auto_unroll_max_step", 0) or 0)
        self.visit(node.body, loops + [_Loop(node.loop_var, ext, node.kind, step)], env, block, init_loops)

    def visit_BlockRealize(self, node: S.BlockRealize, loops: list, env: dict, block, init_loops):
        blk = node.block
        new_env = dict(env)
        spatial_vars: set = set()
        for iv, val in zip(blk.iter_vars, node.iter_values):
            form = _lin(val, env)
            new_env[iv.var] = form
            if iv.iter_type == "S":
                spatial_vars.update(v for v, c in form.coef.items() if c)
        if blk.init is not None:
            # the init runs once per spatial point: only loops feeding spatial bindings count
            init_l = [lp for lp in loops if lp.var in spatial_vars]
            self.visit(blk.init, loops, new_env, blk, init_l)
        self.visit(blk.body, loops, new_env, blk, None)

    def visit_Block(self, node: S.Block, loops: list, env: dict, block, init_loops):
        self.visit(node.body, loops, env, node, init_loops)

    def visit_BufferStore(self, node: S.BufferStore, loops: list, env: dict, block, init_loops):
        acc = [_Access(node.buffer, [_lin(i, env) for i in node.indices], True)]
        for ld in _loads(node.value):
            acc.append(_Access(ld.buffer, [_lin(i, env) for i in ld.indices], False))
        fl, it = _count_ops(node.value)
        is_init = init_loops is not None
        self.stores.append(_Store(init_loops if is_init else loops, acc, fl, it, is_init,
                                  block is not None and block.is_reduction))


def _collect_stores(func: PrimFunc) -> list[_Store]:
    collector = _StoreCollector()
    collector.visit(func.body, [], {}, None, None)
    return collector.stores


# -------------------------------------------------------------------------------------------------------
# per-store vector
# -------------------------------------------------------------------------------------------------------
def _distinct_elems(acc: _Access, inner: list[_Loop], shape: list[int]) -> float:
    """Distinct elements of ``acc`` touched while the loops in ``inner`` run (a rectangle over-approximation)."""
    total = 1.0
    for d, form in enumerate(acc.dims):
        span = 1.0
        count = 1.0
        for lp in inner:
            c = form.coef.get(lp.var)
            if c:
                span += abs(c) * (lp.extent - 1)
                count *= lp.extent
        if form.cap is not None:
            span = min(span, form.cap)
        total *= max(1.0, min(span, count, float(shape[d])))
    return total


def _footprints(acc: _Access, loops: list[_Loop], shape: list[int]) -> list[float]:
    """``out[d]`` = distinct elements of ``acc`` touched by the loops ``loops[d:]`` (d = 0..len), computed
    from the innermost loop outwards in one pass (what ``_distinct_elems`` gives for each suffix)."""
    n = len(loops)
    dims = acc.dims
    span = [1.0] * len(dims)
    count = [1.0] * len(dims)
    out = [0.0] * (n + 1)

    def total() -> float:
        t = 1.0
        for d, form in enumerate(dims):
            v = min(span[d], count[d], float(shape[d]))
            if form.cap is not None:
                v = min(v, form.cap)
            t *= max(1.0, v)
        return t

    out[n] = total()
    for depth in range(n - 1, -1, -1):
        lp = loops[depth]
        changed = False
        for d, form in enumerate(dims):
            c = form.coef.get(lp.var)
            if c:
                span[d] += abs(c) * (lp.extent - 1)
                count[d] *= lp.extent
                changed = True
        out[depth] = total() if changed else out[depth + 1]
    return out


def _flat_stride(acc: _Access, var, shape: list[int]) -> float:
    stride = 0.0
    mult = 1.0
    for d in range(len(acc.dims) - 1, -1, -1):
        stride += acc.dims[d].coef.get(var, 0.0) * mult
        mult *= shape[d]
    return abs(stride)


ACCESS_FEATURES = ("is_write", "is_read", "local", "log_bytes", "log_unique_bytes", "log_lines", "log_reuse_ratio",
                   "stride_innermost", "log_stride_innermost", "contiguous_under_vector", "log_reuse_distance",
                   "log_reuse_count", "log_min_stride", "min_stride_depth")
STORE_FEATURES = ("log_float_ops", "log_int_ops", "log_total_flop", "log_iterations", "n_loops", "log_innermost_extent",
                  "innermost_vectorized", "innermost_unrolled", "log_vector_extent", "log_unrolled_extent",
                  "log_parallel_extent", "n_parallel", "parallel_outermost", "parallel_imbalance",
                  "log_auto_unroll_step", "log_auto_unrolled_iters", "is_init", "in_reduction_block", "writes_local",
                  "log_local_tile_elems", "log_total_bytes", "log_total_unique_bytes", "arith_intensity",
                  "has_micro_kernel", "log_micro_iters", "log_micro_write_elems", "log_micro_read_elems",
                  "micro_flop_per_read", "micro_vectorized", "log_micro_reduction_extent", "micro_depth",
                  "micro_acc_vectors", "micro_registers_fit", "micro_unrolled_share")
STORE_LEN = (len(STORE_FEATURES) + N_BUFFERS * len(ACCESS_FEATURES) + N_CURVE + N_FOOTPRINT)


class _LoopShape:
    """What the loops around a store add up to: trip counts by loop kind, unrolling, parallel balance."""

    def __init__(self, st: _Store, loops: list[_Loop], n_cores: int):
        self.vec_ext = self.unr_ext = self.par_ext = 1.0
        self.n_par = 0
        step = 0
        for lp in loops:
            if lp.kind == "vectorized":
                self.vec_ext *= lp.extent
            elif lp.kind == "unrolled":
                self.unr_ext *= lp.extent
            elif lp.kind == "parallel":
                self.par_ext *= lp.extent
                self.n_par += 1
        for lp in st.loops:
            step = max(step, lp.unroll_step)
        self.step = step
        # iterations covered by automatic unrolling: the largest innermost suffix whose trip count fits the step
        self.auto_unrolled = 1.0
        if step:
            prod = 1.0
            for lp in reversed(loops):
                if lp.kind == "parallel" or prod * lp.extent > step:
                    break
                prod *= lp.extent
            self.auto_unrolled = prod
        self.imbalance = 0.0
        if self.par_ext > 1:
            chunks = math.ceil(self.par_ext / n_cores)
            self.imbalance = chunks * n_cores / self.par_ext - 1.0


def _buffer_rows(st: _Store, loops: list[_Loop], iters: float) -> tuple[list, list[float], float, float]:
    """The store's accesses merged per buffer, the written one first, then reads by bytes touched:
    ``(buffer, accesses, shape, item size, distinct bytes, bytes touched)`` rows; the distinct bytes of all
    buffers under ``loops[d:]`` for each depth ``d``; and the bytes touched and distinct bytes of all buffers."""
    per_buf: "OrderedDict" = OrderedDict()
    for a in st.accesses:
        per_buf.setdefault(a.buffer, []).append(a)
    rows = []
    fp_by_depth = [0.0] * (len(loops) + 1)
    total_bytes = total_unique = 0.0
    for buf, accs in per_buf.items():
        shape = _shape(buf)
        isz = nbytes(buf.dtype)
        fps = [_footprints(a, loops, shape) for a in accs]
        per_depth = [max(f[d] for f in fps) * isz for d in range(len(loops) + 1)]
        for d, v in enumerate(per_depth):
            fp_by_depth[d] += v
        touched = iters * isz * len(accs)
        total_bytes += touched
        total_unique += per_depth[0]
        rows.append((buf, accs, shape, isz, per_depth[0], touched))
    written = st.accesses[0].buffer
    rows.sort(key=lambda r: (r[0] is not written, -r[5]))
    return rows, fp_by_depth, total_bytes, total_unique


def _access_features(row: tuple, loops: list[_Loop]) -> list[float]:
    """``ACCESS_FEATURES`` of one buffer row of ``_buffer_rows``: strides, cache lines and reuse of its first access."""
    buf, accs, shape, isz, uniq, touched = row
    n = len(loops)
    a = accs[0]
    stride_in = _flat_stride(a, loops[-1].var, shape) if loops else 0.0
    min_stride = 0.0
    min_depth = 0.0
    for depth in range(n - 1, -1, -1):
        s_ = _flat_stride(a, loops[depth].var, shape)
        if s_ > 0:
            min_stride, min_depth = s_, float(n - depth)
            break
    contiguous = 0.0
    for lp in loops:
        if lp.kind == "vectorized":
            s_ = _flat_stride(a, lp.var, shape)
            contiguous = 1.0 if s_ == 1 else (0.5 if s_ == 0 else 0.0)
    last_shape = shape[-1] if shape else 1
    if a.dims:
        elems = uniq / isz
        last = _distinct_elems(_Access(buf, [a.dims[-1]], False), loops, [last_shape])
        rows = elems / max(1.0, last)
        lines = rows * math.ceil(last * isz / CACHE_LINE) if a.dims[-1].coef else rows
    else:
        lines = 1.0
    # reuse: the innermost loop whose variable the access ignores
    reuse_dist = reuse_count = 0.0
    inner_iters = 1.0
    for depth in range(n - 1, -1, -1):
        lp = loops[depth]
        if all(not d.coef.get(lp.var) for d in a.dims):
            reuse_dist, reuse_count = inner_iters, float(lp.extent)
            break
        inner_iters *= lp.extent
    return [
        1.0 if any(x.is_write for x in accs) else 0.0,
        1.0 if any(not x.is_write for x in accs) else 0.0,
        1.0 if buf.scope == "local" else 0.0,
        _log(touched), _log(uniq), _log(lines), _log(touched / max(uniq, 1.0)),
        min(stride_in, 1e6), _log(stride_in), contiguous, _log(reuse_dist), _log(reuse_count),
        _log(min_stride), min_depth]


def _intensity_curve(st: _Store, loops: list[_Loop], fp_by_depth: list[float]) -> tuple[np.ndarray, list[float]]:
    """The arithmetic-intensity curve (``N_CURVE`` points from the outermost loop in) and the distinct bytes
    under the innermost 1..``N_FOOTPRINT`` loops."""
    n = len(loops)
    curve_pts = []
    footprints = []
    suffix_iters = [1.0] * (n + 1)
    for depth in range(n - 1, -1, -1):
        suffix_iters[depth] = suffix_iters[depth + 1] * loops[depth].extent
    for depth in range(n + 1):
        uniq = fp_by_depth[depth]
        curve_pts.append((st.float_ops or 1) * suffix_iters[depth] / max(uniq, 1.0))
        if n - depth in range(1, N_FOOTPRINT + 1):
            footprints.append((n - depth, _log(uniq)))
    curve = np.interp(np.linspace(0, n, N_CURVE), np.arange(n + 1), np.array(curve_pts)) if n else \
        np.full(N_CURVE, curve_pts[0])
    fp = [0.0] * N_FOOTPRINT
    for k, v in footprints:
        fp[k - 1] = v
    return curve, fp


def _store_vector(st: _Store, n_cores: int, local_tiles: dict) -> tuple[np.ndarray, float]:
    """The ``STORE_LEN`` features of one store (``STORE_FEATURES``, then ``ACCESS_FEATURES`` per buffer slot,
    the intensity curve and the footprints), and the FLOP it performs."""
    loops = [lp for lp in st.loops if lp.extent > 1]
    iters = 1.0
    for lp in loops:
        iters *= lp.extent
    n = len(loops)
    innermost = loops[-1] if loops else None
    shape = _LoopShape(st, loops, n_cores)
    flop = (st.float_ops or (1 if st.is_init else 0)) * iters
    writes_local = 1.0 if st.accesses[0].buffer.scope == "local" else 0.0
    buf_rows, fp_by_depth, total_bytes, total_unique = _buffer_rows(st, loops, iters)
    access_feats = [_access_features(row, loops) for row in buf_rows[:N_BUFFERS]]
    while len(access_feats) < N_BUFFERS:
        access_feats.append([0.0] * len(ACCESS_FEATURES))
    curve, fp = _intensity_curve(st, loops, fp_by_depth)
    micro = _micro_kernel(st, loops)
    local_elems = 0.0
    for buf, *_ in buf_rows:
        if buf.scope == "local":
            local_elems = max(local_elems, local_tiles.get(buf, 1.0))

    head = [
        _log(st.float_ops), _log(st.int_ops), _log(flop), _log(iters), float(n),
        _log(innermost.extent if innermost else 1),
        1.0 if innermost is not None and innermost.kind == "vectorized" else 0.0,
        1.0 if innermost is not None and innermost.kind == "unrolled" else 0.0,
        _log(shape.vec_ext), _log(shape.unr_ext), _log(shape.par_ext), float(shape.n_par),
        1.0 if loops and loops[0].kind == "parallel" else 0.0, shape.imbalance,
        _log(shape.step), _log(shape.auto_unrolled), 1.0 if st.is_init else 0.0,
        1.0 if st.in_reduction_block else 0.0,
        writes_local, _log(local_elems), _log(total_bytes), _log(total_unique),
        flop / max(total_unique, 1.0)] + micro
    out = np.concatenate([np.asarray(head), np.asarray(access_feats).ravel(), np.log2(1.0 + curve), np.asarray(fp)])
    return out, flop


def _micro_kernel(st: _Store, loops: list[_Loop]) -> list[float]:
    """The register-level kernel of a reduction store: the loops inside its innermost reduction loop.

    For ``C_local[i, j] += A[i, k] * B[k, j]`` with ``... k1, i2, j2`` innermost, the micro-kernel is
    ``i2 x j2``: its write footprint is the accumulator tile that must stay in registers, and its flops per
    distinct element read is the load/FMA balance. Single features of the loop nest do not show these
    products (a tree would need several splits on different loops to find them), and they are what separates
    near-peak matmul schedules from the rest. Three register-level facts follow (feature version 3): the
    accumulator vectors, whether accumulators + operand vectors + a broadcast fit the 16 AVX2 registers, and the
    share of the kernel that unrolling covers. All zeros for a store without a reduction loop.
    """
    write = st.accesses[0]
    r = -1
    for depth in range(len(loops) - 1, -1, -1):
        if all(not d.coef.get(loops[depth].var) for d in write.dims):
            r = depth
            break
    if r < 0:
        return [0.0] * 11
    inner = loops[r + 1:]
    iters = 1.0
    for lp in inner:
        iters *= lp.extent
    w_elems = _distinct_elems(write, inner, _shape(write.buffer))
    r_elems = sum(_distinct_elems(a, inner, _shape(a.buffer)) for a in st.accesses[1:]
                  if a.buffer is not write.buffer)
    flops = (st.float_ops or 1) * iters
    vectorized = [lp for lp in inner if lp.kind == "vectorized"]
    vec = 1.0 if vectorized else 0.0
    lanes = float(min(vectorized[-1].extent, VECTOR_LANES)) if vectorized else 1.0
    # registers the kernel needs: its accumulator vectors, one vector per contiguous operand load, a broadcast
    acc = math.ceil(w_elems / lanes)
    operand_vecs = math.ceil(max((_distinct_elems(a, vectorized, _shape(a.buffer)) for a in st.accesses[1:]
                                  if a.buffer is not write.buffer), default=1.0) / lanes)
    fits = 1.0 if acc + operand_vecs + 1 <= VECTOR_REGISTERS else 0.0
    # share of the kernel's (scalar) iterations that unrolling turns into straight-line code: only an unrolled
    # kernel indexes its accumulators with constants, which is what lets LLVM keep them in registers
    step = max([lp.unroll_step for lp in st.loops] + [0])
    unrolled = 1.0
    for lp in reversed(inner):
        if lp.kind == "vectorized":
            continue
        if lp.kind != "unrolled" and unrolled * lp.extent > step:
            break
        unrolled *= lp.extent
    scalar_iters = iters / math.prod(lp.extent for lp in vectorized)
    return [1.0, _log(iters), _log(w_elems), _log(r_elems), flops / max(r_elems, 1.0), vec,
            _log(loops[r].extent), float(len(inner)), float(acc), fits, unrolled / max(1.0, scalar_iters)]


SUM_FEATURES = ("n_stores", "log_sum_flop", "log_sum_bytes", "log_sum_unique_bytes", "log_max_iterations")
FEATURE_LEN = TOP_STORES * STORE_LEN + len(SUM_FEATURES)


def _local_tiles(stores: list[_Store]) -> dict:
    """Elements of each ``local`` buffer after lowering compacts it: what one iteration of the innermost
    loop enclosing all its accesses touches (the accumulator tile that should live in registers)."""
    chains: dict = {}
    for st in stores:
        for a in st.accesses:
            if a.buffer.scope == "local":
                chains.setdefault(a.buffer, []).append((st.loops, a))
    tiles = {}
    for buf, sites in chains.items():
        first = sites[0][0]
        p = len(first)
        for loops, _ in sites[1:]:
            k = 0
            while k < min(p, len(loops)) and loops[k] is first[k]:
                k += 1
            p = k
        shape = _shape(buf)
        tiles[buf] = max(_distinct_elems(a, loops[p:], shape) for loops, a in sites)
    return tiles


def store_features(func: PrimFunc, n_cores: int = 1) -> np.ndarray:
    """The per-store feature matrix ``[n_stores, STORE_LEN]`` of a scheduled function (program order)."""
    stores = _collect_stores(func)
    tiles = _local_tiles(stores)
    rows = [_store_vector(st, n_cores, tiles)[0] for st in stores]
    return np.asarray(rows).reshape(len(rows), STORE_LEN)


def extract_features(func: PrimFunc, n_cores: int = 1) -> np.ndarray:
    """One fixed-length vector (``FEATURE_LEN`` floats) for a scheduled function.

    The three heaviest stores keep their full vectors, in that order; the tail holds sums over all stores, so
    extra small stores still count. A store's weight is its floating-point work plus its iterations: a copy
    (a packing ``cache_read``, a write-back) has no float ops but its loads and stores take time, and a packing
    copy redone inside an outer tile loop must outrank the init (feature version 3; version 2 ordered by flops
    alone, so such copies fell behind the init or out of the top three).
    """
    stores = _collect_stores(func)
    tiles = _local_tiles(stores)
    vecs = [_store_vector(st, n_cores, tiles) for st in stores]
    i_it = STORE_FEATURES.index("log_iterations")
    vecs.sort(key=lambda p: -(p[1] + 2.0 ** p[0][i_it] - 1.0))  # flops + iterations (stable: program order)
    out = np.zeros(FEATURE_LEN)
    for k, (v, _) in enumerate(vecs[:TOP_STORES]):
        out[k * STORE_LEN:(k + 1) * STORE_LEN] = v
    i_bytes = STORE_FEATURES.index("log_total_bytes")
    i_uniq = STORE_FEATURES.index("log_total_unique_bytes")
    i_iter = STORE_FEATURES.index("log_iterations")
    tail = out[TOP_STORES * STORE_LEN:]
    tail[0] = len(vecs)
    tail[1] = _log(sum(f for _, f in vecs))
    tail[2] = _log(sum(2.0 ** v[i_bytes] - 1.0 for v, _ in vecs))
    tail[3] = _log(sum(2.0 ** v[i_uniq] - 1.0 for v, _ in vecs))
    tail[4] = max((v[i_iter] for v, _ in vecs), default=0.0)
    return out


def feature_names() -> list[str]:
    """Names of the ``FEATURE_LEN`` columns (for importance plots and debugging)."""
    store = list(STORE_FEATURES)
    for b in range(N_BUFFERS):
        store += [f"buf{b}.{n}" for n in ACCESS_FEATURES]
    store += [f"intensity_curve{k}" for k in range(N_CURVE)]
    store += [f"log_footprint_inner{k + 1}" for k in range(N_FOOTPRINT)]
    names = [f"store{s}.{n}" for s in range(TOP_STORES) for n in store]
    return names + list(SUM_FEATURES)
