"""Shared analysis for the block-level primitives (compute_at, inline, cache, reduction, compaction).

Three ideas live here because every block primitive needs all of them:

* **Interval arithmetic on index expressions.** ``interval(e, relax)`` bounds an integer expression when
  some variables range over ``[lo, hi]`` (symbolic bounds allowed) and the others stay fixed symbols. This
  is how "the region of B that the consumer reads during one iteration of loop L" is computed: loop
  variables above L stay symbolic, the ones below are relaxed.
* **Block regions.** ``with_inferred_regions(block)`` recomputes a block's ``reads``/``writes`` with the
  system-wide rule (``tunefarm.ir.regions.infer_block_regions``); primitives call it on every block whose
  body they change, and ``region_under`` lifts a block's regions to the loops around it.
* **Scope bookkeeping.** ``ScopeInfo`` lists the child blocks of a scope block in program order with the
  buffers they really read and write, and answers the "who is between these two points" questions that
  dependency checks need.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.arith import add_int, const_bound, mul_int, simplified_bound, simplified_int, simplify, sub_int
from ...ir.buffer import Buffer
from ...ir.dtype import is_float
from ...ir.function import PrimFunc
from ...ir.functor import IRVisitor, collect_buffer_accesses, collect_vars, substitute, uses_var
from ...ir.memo import NodeCache
from ...ir.regions import infer_block_regions
from ...ir.stmt_functor import iter_block_realizes, stmt_children
from ..error import ScheduleError
from ..tree import find_block, find_loop, func_index, map_path, path_of, replace_path

Interval = tuple  # (lo_expr, hi_expr), inclusive


# ----------------------------------------------------------------------------------------------------------
# Interval arithmetic
# ----------------------------------------------------------------------------------------------------------
def interval(e: E.PrimExpr, relax: dict, bounds: dict | None = None) -> Interval | None:
    """Inclusive ``(lo, hi)`` of integer expression ``e`` when each Var in ``relax`` ranges over its
    ``(lo, hi)``; other variables are fixed. None when ``e`` is not monotone-analysable (a load, a
    product of two relaxed terms, ...). ``bounds`` (Var -> inclusive ints) helps fold ``%``.
    """
    if not relax:
        return (e, e)
    if type(e) is E.Binary and e.dtype in _INT_DTYPES:
        r = _int_interval(e, relax, e.dtype)
        if r is not None and r[2]:
            return (E.IntImm(r[0], e.dtype), E.IntImm(r[1], e.dtype))
    r = _interval(e, relax, bounds)
    return (e, e) if r is _FIXED else r


_FIXED = object()  # "mentions no relaxed variable": the interval is the expression itself
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def _literals(pair, dtype: str) -> bool:
    lo, hi = pair
    return type(lo) is E.IntImm and type(hi) is E.IntImm and lo.dtype == dtype and hi.dtype == dtype


def _int_interval(e, relax: dict, dtype: str):
    """``_interval`` with Python ints for the common case where every variable of ``e`` is relaxed over
    literal bounds and every node has one integer dtype: the symbolic route then folds to literals of that
    dtype at each step, so ``(lo, hi, mentions_relaxed)`` here is its exact value. None: not that case
    (the caller takes the symbolic route, which also decides the non-analysable cases)."""
    t = type(e)
    if t is E.IntImm:
        return (e.value, e.value, False) if e.dtype == dtype else None
    if t is E.Var:
        r = relax.get(e)
        if r is None:
            return None
        lo, hi = r
        if type(lo) is not E.IntImm or type(hi) is not E.IntImm or lo.dtype != dtype or hi.dtype != dtype:
            return None
        return (lo.value, hi.value, True)
    if t is not E.Binary or e.dtype != dtype:
        return None
    a = _int_interval(e.a, relax, dtype)
    if a is None:
        return None
    b = _int_interval(e.b, relax, dtype)
    if b is None or not (a[2] or b[2]):  # a literal-only subtree stays unfolded symbolically
        return None
    op = e.op
    if op == "+":
        return (a[0] + b[0], a[1] + b[1], True)
    if op == "-":
        return (a[0] - b[1], a[1] - b[0], True)
    if op == "*":
        if type(e.b) is E.IntImm:
            c, x = e.b.value, a
        elif type(e.a) is E.IntImm:
            c, x = e.a.value, b
        else:
            return None
        lo, hi = x[0] * c, x[1] * c
        return (lo, hi, True) if c >= 0 else (hi, lo, True)
    if (op == "//" or op == "%") and type(e.b) is E.IntImm and e.b.value > 0 and not b[2]:
        c = e.b.value
        if op == "//":
            return (a[0] // c, a[1] // c, True)
        first, width = a[0] % c, a[1] - a[0]
        if first + width < c:
            return (first, first + width, True)
        return (0, c - 1, True)
    if op == "min":
        return (min(a[0], b[0]), min(a[1], b[1]), True)
    if op == "max":
        return (max(a[0], b[0]), max(a[1], b[1]), True)
    return None


def _interval(e, relax: dict, bounds):
    """``interval`` in one bottom-up pass: ``_FIXED`` for a subexpression without relaxed variables."""
    t = type(e)
    if t is E.IntImm or t is E.FloatImm:
        return _FIXED
    if t is E.Var or isinstance(e, E.Var):
        return relax.get(e, _FIXED)
    if t is E.Binary:
        a = _interval(e.a, relax, bounds)
        b = _interval(e.b, relax, bounds)
        if a is _FIXED and b is _FIXED:
            return _FIXED
        op = e.op
        if op in ("+", "-", "min", "max"):
            if a is None or b is None:
                return None
            if a is _FIXED:
                a = (e.a, e.a)
            if b is _FIXED:
                b = (e.b, e.b)
            if e.dtype in _INT_DTYPES and _literals(a, e.dtype) and _literals(b, e.dtype):
                # literal bounds of one integer dtype: what the constructors below fold to
                a0, a1, b0, b1 = a[0].value, a[1].value, b[0].value, b[1].value
                if op == "+":
                    lo, hi = a0 + b0, a1 + b1
                elif op == "-":
                    lo, hi = a0 - b1, a1 - b0
                elif op == "min":
                    lo, hi = min(a0, b0), min(a1, b1)
                else:
                    lo, hi = max(a0, b0), max(a1, b1)
                return (E.IntImm(lo, e.dtype), E.IntImm(hi, e.dtype))
            if op == "+":
                return (add_int(a[0], b[0]), add_int(a[1], b[1]))
            if op == "-":
                return (sub_int(a[0], b[1]), sub_int(a[1], b[0]))
            if op == "min":
                return (E.min_(a[0], b[0]), E.min_(a[1], b[1]))
            return (E.max_(a[0], b[0]), E.max_(a[1], b[1]))
        if op == "*":
            const, x = (e.b, a) if isinstance(e.b, E.IntImm) else (e.a, b)
            if not isinstance(const, E.IntImm) or x is None:
                return None
            if x is _FIXED:  # the relaxed side is the constant's partner, so this cannot happen for IntImm
                return None
            lo, hi = mul_int(x[0], const), mul_int(x[1], const)
            return (lo, hi) if const.value >= 0 else (hi, lo)
        if op in ("//", "%") and isinstance(e.b, E.IntImm) and e.b.value > 0:
            x = a
            if x is None:
                return None
            if x is _FIXED:
                x = (e.a, e.a)
            if op == "//":
                return (E.floordiv(x[0], e.b), E.floordiv(x[1], e.b))
            c = e.b.value
            width = simplified_int(sub_int(x[1], x[0]), bounds)
            first = simplify(E.floormod(x[0], e.b), bounds)
            if width is not None and isinstance(first, E.IntImm) and first.value + width < c:
                return (first, E.const(first.value + width, e.dtype))
            return (E.const(0, e.dtype), E.const(c - 1, e.dtype))
        return None
    if t is E.Cast:
        inner = _interval(e.value, relax, bounds)
        if inner is _FIXED or inner is None:
            return inner
        return (E.cast(e.dtype, inner[0]), E.cast(e.dtype, inner[1]))
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return _FIXED
    return None if uses_var(e, relax) else _FIXED


def sym_min(a: E.PrimExpr, b: E.PrimExpr, bounds: dict | None = None) -> E.PrimExpr:
    """``min(a, b)``, decided statically when the difference has a known sign."""
    if a is b:
        return a
    if type(a) is E.IntImm and type(b) is E.IntImm:  # what the difference's bound decides for literals
        return a if a.value <= b.value else b
    d = simplified_bound(sub_int(a, b), bounds)
    if d is not None:
        if d[1] <= 0:
            return a
        if d[0] >= 0:
            return b
    return simplify(E.min_(a, b), bounds)


def sym_max(a: E.PrimExpr, b: E.PrimExpr, bounds: dict | None = None) -> E.PrimExpr:
    if a is b:
        return a
    if type(a) is E.IntImm and type(b) is E.IntImm:
        return a if a.value >= b.value else b
    d = simplified_bound(sub_int(a, b), bounds)
    if d is not None:
        if d[0] >= 0:
            return a
        if d[1] <= 0:
            return b
    return simplify(E.max_(a, b), bounds)


def loop_interval(loop: S.For, relax: dict, bounds: dict | None = None) -> Interval:
    """Inclusive range of a loop variable (its min/extent may themselves depend on relaxed variables)."""
    mn, ext = loop.min, loop.extent
    if type(mn) is E.IntImm and type(ext) is E.IntImm and mn.dtype == ext.dtype and not is_float(mn.dtype):
        return (mn, E.IntImm(mn.value + ext.value - 1, mn.dtype))  # what the general case folds to
    lo = interval(loop.min, relax, bounds) or (loop.min, loop.min)
    hi_e = sub_int(add_int(loop.min, loop.extent), E.const(1, loop.extent.dtype))
    hi = interval(hi_e, relax, bounds) or (hi_e, hi_e)
    return (simplify(lo[0], bounds), simplify(hi[1], bounds))


# ----------------------------------------------------------------------------------------------------------
# Regions
# ----------------------------------------------------------------------------------------------------------
class _LoadsOf(IRVisitor):
    def __init__(self, buf: Buffer):
        self.buf = buf
        self.out: list[E.BufferLoad] = []

    def visit_BufferLoad(self, n):
        if n.buffer is self.buf:
            self.out.append(n)
        super().visit_BufferLoad(n)


def loads_of(node, buf: Buffer) -> list[E.BufferLoad]:
    """Every load of ``buf`` below ``node`` (expression or statement), in program order."""
    v = _LoadsOf(buf)
    v.visit(node)
    return v.out


def with_inferred_regions(block: S.Block) -> S.Block:
    reads, writes = infer_block_regions(block)
    return block.replace(reads=reads, writes=writes)


def region_under(realize: S.BlockRealize, buffer: Buffer, kind: str, relax: dict,
                 bounds: dict) -> list[Interval] | None:
    """The region of ``buffer`` that ``realize`` reads (``kind="read"``) or writes, as inclusive
    ``(lo, hi)`` per dimension in the variables that are not relaxed; None if the block does not access it.

    ``relax`` maps the loop variables between the point of view and the block to their intervals.
    """
    reads, writes = infer_block_regions(realize.block)
    regions = [r for r in (reads if kind == "read" else writes) if r.buffer is buffer]
    if kind == "read" and realize.block.init is not None and not regions:
        # a reduction also reads what it writes (its update), though TVM does not list it
        regions = [r for r in writes if r.buffer is buffer]
    if not regions:
        return None
    vmap = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    out = None
    for reg in regions:
        dims = []
        for d, rg in enumerate(reg.region):
            lo_e = substitute(rg.min, vmap)
            hi_e = substitute(sub_int(add_int(rg.min, rg.extent), E.const(1, rg.extent.dtype)), vmap)
            lo = interval(lo_e, relax, bounds)
            hi = interval(hi_e, relax, bounds)
            if lo is None or hi is None:
                ext = buffer.shape[d]
                dims.append((E.const(0, ext.dtype), simplify(sub_int(ext, E.const(1, ext.dtype)), bounds)))
            else:
                dims.append((simplify(lo[0], bounds), simplify(hi[1], bounds)))
        out = dims if out is None else [(sym_min(a[0], b[0], bounds), sym_max(a[1], b[1], bounds))
                                        for a, b in zip(out, dims)]
    return out


# ----------------------------------------------------------------------------------------------------------
# Scopes, positions and dependencies
# ----------------------------------------------------------------------------------------------------------
class BlockSite:
    """A child block of a scope: its path, program-order index and the buffers it really accesses."""

    __slots__ = ("path", "order", "realize", "block", "reads", "writes")

    def __init__(self, path, order: int):
        self.path = path
        self.order = order
        self.realize = path[-1]
        self.block = self.realize.block
        self.reads, self.writes = accessed_buffers(self.block)

    @property
    def name(self) -> str:
        return self.block.name

    def under(self, node) -> bool:
        return any(n is node for n in self.path)


_ACCESSES = NodeCache("dataflow.accessed_buffers", 2048)


def accessed_buffers(block: S.Block) -> tuple[frozenset, frozenset]:
    """``(reads, writes)``: buffers ``block`` really reads and writes -- its body's loads and stores (minus
    buffers allocated inside it) and its declared regions. Cached on exactly those parts of the block (IR
    nodes are immutable, so the same objects always give the same answer)."""
    key = (block.body, block.init, block.alloc_buffers)
    hit = _ACCESSES.get(key)
    if hit is None:
        body = S.SeqStmt([x for x in (block.init, block.body) if x is not None])
        r, w = collect_buffer_accesses(body)
        local = _allocated_inside(block)
        hit = _ACCESSES.put(key, (frozenset(b for b in r if b not in local), frozenset(b for b in w if b not in local)))
    reads, writes = hit
    if block.reads:
        reads = reads | {x.buffer for x in block.reads}
    if block.writes:
        writes = writes | {x.buffer for x in block.writes}
    return reads, writes


def _allocated_inside(block: S.Block) -> set:
    out = set(block.alloc_buffers)
    for realize, _ in iter_block_realizes(block.body):
        out.update(realize.block.alloc_buffers)
    return out


class ScopeInfo:
    """The child blocks of one scope block, in program order, with pre-order positions of all nodes."""

    def __init__(self, func: PrimFunc, scope: S.Block):
        self.func = func
        self.scope = scope
        idx = func_index(func)
        self.order: dict = idx.order
        self.sites: list[BlockSite] = []
        parent = idx.parent
        for realize in idx.realizes:
            up = parent.get(realize)  # the nearest block above (``enclosing_block`` of its path)
            while up is not None and not isinstance(up, S.Block):
                up = parent.get(up)
            if up is scope:
                self.sites.append(BlockSite(idx.path(realize), self.order[realize]))

    def site(self, realize: S.BlockRealize) -> BlockSite:
        for s in self.sites:
            if s.realize is realize:
                return s
        raise ScheduleError("dataflow", f"block {realize.block.name!r} is not a child of scope "
                                        f"{self.scope.name!r}")

    def readers(self, buf: Buffer, exclude=None) -> list[BlockSite]:
        return [s for s in self.sites if buf in s.reads and s is not exclude]

    def writers(self, buf: Buffer, exclude=None) -> list[BlockSite]:
        return [s for s in self.sites if buf in s.writes and s is not exclude]

    def last_order_under(self, node) -> int:
        """The largest pre-order index inside ``node``'s subtree: that of its last descendant in pre-order,
        reached by always taking the last child."""
        kids = stmt_children(node)
        while kids:
            node = kids[-1]
            kids = stmt_children(node)
        return self.order[node]


def block_path(func: PrimFunc, name: str, primitive: str):
    """Path of a block by name, refusing the root block (it cannot be moved, inlined or cached)."""
    if not isinstance(name, str):
        raise ScheduleError(primitive, f"expected a block name (str), got {type(name).__name__}")
    if not (isinstance(func.body, S.BlockRealize) and func.body.block.name == "root"):
        raise ScheduleError(primitive, f"function {func.name!r} is not in block form (no root block)")
    path = find_block(func, name, primitive)
    if len(path) == 1:
        raise ScheduleError(primitive, f"block {name!r} is the root block of the function")
    return path


def loop_path(func: PrimFunc, loop, primitive: str):
    if not isinstance(loop, E.Var):
        raise ScheduleError(primitive, f"expected a loop variable, got {type(loop).__name__}")
    return find_loop(func, loop, primitive)


def is_param(func: PrimFunc, buf: Buffer) -> bool:
    return any(p is buf for p in func.params)


def fresh_name(func: PrimFunc, base: str, taken=()) -> str:
    """``base`` or ``base_1``, ``base_2``... unused by any block or buffer of ``func`` (nor ``taken``)."""
    used = func_index(func).names(func)
    taken = set(taken)
    if base not in used and base not in taken:
        return base
    k = 1
    while f"{base}_{k}" in used or f"{base}_{k}" in taken:
        k += 1
    return f"{base}_{k}"


def child_index_containing(items, site: BlockSite) -> int | None:
    for k, item in enumerate(items):
        if site.under(item):
            return k
    return None


def remove_block(func: PrimFunc, realize: S.BlockRealize) -> PrimFunc:
    """``func`` without ``realize``, also removing the loops that held nothing else."""
    path = path_of(func, realize)
    if path is None:
        raise ScheduleError("dataflow", f"block {realize.block.name!r} not found")
    return remove_block_at(func, path)


def path_after_edit(func: PrimFunc, old_path, mapping: dict | None):
    """Where the node at the end of ``old_path`` (a path of the function before an edit that did not touch
    it) is in ``func``, the function after the edit (``mapping``: see ``tree.replace_path_tracked``)."""
    if mapping is not None:
        return map_path(old_path, mapping)
    path = path_of(func, old_path[-1])
    if path is None:
        raise ScheduleError("dataflow", f"{type(old_path[-1]).__name__} not found after an edit")
    return path


def scope_realize_path(path, scope: S.Block):
    """The part of ``path`` that ends at the ``BlockRealize`` of ``scope`` (a block on ``path``)."""
    for j, node in enumerate(path):
        if node is scope:
            return path[:j] if j else None
    return None


def remove_block_at(func: PrimFunc, path) -> PrimFunc:
    """``remove_block`` of the ``BlockRealize`` at the end of ``path``."""
    i = len(path) - 1
    while i - 1 >= 1 and isinstance(path[i - 1], S.For):
        i -= 1
    parent = path[i - 1]
    if isinstance(parent, S.IfThenElse):
        return replace_path(func, path[: i + 1], S.SeqStmt(()))
    return replace_path(func, path[: i + 1], None)


def find_path_of(func: PrimFunc, node):
    return path_of(func, node)


def path_to_block(func: PrimFunc, block: S.Block):
    """Path ending at the ``Block`` node itself (``func.body`` for the root)."""
    path = path_of(func, block)
    if path is None:
        raise ScheduleError("dataflow", f"block {block.name!r} not found")
    return path


def allocating_block(func: PrimFunc, buf: Buffer) -> S.Block | None:
    for n in func_index(func).order:  # keys in pre-order
        if isinstance(n, S.Block) and any(b is buf for b in n.alloc_buffers):
            return n
    return None


def rebuild_block(func: PrimFunc, block: S.Block, new_block: S.Block) -> PrimFunc:
    return replace_path(func, path_to_block(func, block), new_block)


def loops_between(path, top) -> list[S.For]:
    """Loops on ``path`` strictly below node ``top`` (outermost first)."""
    out = []
    seen = top is None
    for n in path[:-1]:
        if seen and isinstance(n, S.For):
            out.append(n)
        if n is top:
            seen = True
    return out


def relax_loops(loops, bounds: dict) -> tuple[dict, dict]:
    """Intervals for ``loops`` (outermost first) and the integer bounds extended by them."""
    relax: dict = {}
    b = dict(bounds)
    for lp in loops:
        lo, hi = relax[lp.loop_var] = loop_interval(lp, relax, b)
        if type(lo) is E.IntImm and type(hi) is E.IntImm:
            b[lp.loop_var] = (lo.value, hi.value)
        else:
            lb, hb = const_bound(lo, b), const_bound(hi, b)
            if lb is not None and hb is not None:
                b[lp.loop_var] = (lb[0], hb[1])
    return relax, b


def binding_kinds(realize: S.BlockRealize) -> dict:
    """``Var -> {"S", "R"}``: the kinds of iteration variables each outer variable is bound into."""
    kinds: dict = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if type(value) is E.Var:
            kinds.setdefault(value, set()).add(iv.iter_type)
            continue
        for v in expr_vars(value):
            kinds.setdefault(v, set()).add(iv.iter_type)
    return kinds


def expr_vars(e) -> list[E.Var]:
    """The variables of an index expression, first-use order (fast path of ``functor.collect_vars``)."""
    out: dict = {}
    stack = [e]
    while stack:
        n = stack.pop()
        if isinstance(n, E.Var):
            out.setdefault(n, None)
        elif isinstance(n, E.Binary):
            stack.append(n.b)
            stack.append(n.a)
        elif isinstance(n, (E.IntImm, E.FloatImm)):
            continue
        elif isinstance(n, E.Cast):
            stack.append(n.value)
        else:
            for v in collect_vars(n):
                out.setdefault(v, None)
    return list(out)


def outer_loop_vars(path, scope: S.Block) -> list[E.Var]:
    """Variables of the loops on ``path`` above the ``scope`` block (fixed for everything inside it)."""
    out = []
    for n in path:
        if n is scope:
            break
        if isinstance(n, S.For):
            out.append(n.loop_var)
    return out
