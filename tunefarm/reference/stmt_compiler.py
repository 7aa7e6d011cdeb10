"""Compile IR statements into Python closures ``env -> None``.

Block semantics follow TensorIR: a ``BlockRealize`` whose predicate is false does nothing; otherwise its
iteration variables are bound (and checked against their declared domains, since a binding outside the
domain means an illegal schedule), its ``alloc_buffers`` are created, its ``init`` runs when every
reduction variable sits at its domain minimum, then its body runs. Every loop kind runs serially.
Freshly allocated float buffers are filled with NaN so that reading memory nobody wrote shows up in the
results instead of passing by luck.

Checks are skipped only where the compiler proves them redundant from loop ranges: an iteration variable
bound to a loop variable whose range lies inside its domain simply shares the loop's slot, and an access
whose indices provably stay inside the buffer's shape is not bounds-checked. Everything else is checked
on every execution.
"""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.dtype import is_float
from ..ir.stmt_functor import StmtFunctor
from .access import make_safe_store, make_store
from .expr_compiler import ExprCompiler
from .slots import Slots


def _noop(env):
    return None


class StmtCompiler(StmtFunctor):
    """Each ``visit_<Kind>`` returns the closure that runs one statement of that kind."""

    def __init__(self, slots: Slots):
        self.slots = slots
        self.exprs = ExprCompiler(slots)

    def compile(self, s):
        return _noop if s is None else self.visit(s)

    def generic_visit(self, s):
        raise TypeError(f"reference executor cannot run statement node {type(s).__name__}")

    # ------------------------------------------------------------------------------------------------
    def visit_SeqStmt(self, s: S.SeqStmt):
        fns = tuple(self.compile(x) for x in s.seq)
        if not fns:
            return _noop
        if len(fns) == 1:
            return fns[0]
        if len(fns) == 2:
            f0, f1 = fns

            def run2(env):
                f0(env)
                f1(env)
            return run2

        def run(env):
            for f in fns:
                f(env)
        return run

    def visit_BufferStore(self, s: S.BufferStore):
        bs = self.slots.buffer_slot(s.buffer)
        if len(s.indices) != s.buffer.ndim:
            raise ValueError(f"buffer {s.buffer.name!r} has {s.buffer.ndim} dimensions, stored with "
                             f"{len(s.indices)} indices{self.slots.where()}")
        fns = tuple(self.exprs.compile(i) for i in s.indices)
        fv = self.exprs.compile(s.value)
        if self.exprs.provably_in_bounds(s.buffer, s.indices):
            return make_safe_store(bs, fns, self.exprs.var_slots(s.indices), fv)
        return make_store(bs, fns, fv, s.buffer.name, self.slots.where())

    def visit_Evaluate(self, s: S.Evaluate):
        f = self.exprs.compile(s.value)

        def run(env):
            f(env)
        return run

    def visit_IfThenElse(self, s: S.IfThenElse):
        fc = self.exprs.compile(s.condition)
        ft = self.compile(s.then_case)
        fe = self.compile(s.else_case) if s.else_case is not None else None
        if fe is None:
            def run_if(env):
                if fc(env):
                    ft(env)
            return run_if

        def run_if_else(env):
            if fc(env):
                ft(env)
            else:
                fe(env)
        return run_if_else

    def visit_For(self, s: S.For):
        const_bounds = isinstance(s.min, E.IntImm) and isinstance(s.extent, E.IntImm)
        fmin = self.exprs.compile(s.min)
        fext = self.exprs.compile(s.extent)
        k = self.slots.bind_var(s.loop_var)
        bound = None
        if const_bounds and s.extent.value > 0:
            bound = (s.min.value, s.min.value + s.extent.value - 1)
        old = self.slots.with_bounds(s.loop_var, bound, (s.min, s.extent))
        try:
            body = self.compile(s.body)
        finally:
            self.slots.restore_bounds(s.loop_var, old)
            self.slots.unbind_var(s.loop_var)
        if const_bounds:
            r = range(s.min.value, s.min.value + s.extent.value)

            def run_const(env):
                for env[k] in r:
                    body(env)
            return run_const

        def run(env):
            lo = fmin(env)
            for env[k] in range(lo, lo + fext(env)):
                body(env)
        return run

    def visit_Allocate(self, s: S.Allocate):
        alloc = self._allocator(s.buffer)
        bs = self.slots.open_buffer(s.buffer)
        try:
            body = self.compile(s.body)
        finally:
            self.slots.close_buffer(s.buffer)

        def run(env):
            env[bs] = alloc(env)
            body(env)
        return run

    def visit_Block(self, b: S.Block):
        if b.iter_vars:
            raise TypeError(f"block {b.name!r} has iteration variables but no BlockRealize binding them")
        return self.visit_BlockRealize(S.BlockRealize((), S.TRUE, b))

    def visit_BlockRealize(self, r: S.BlockRealize):
        b = r.block
        slots = self.slots
        pred = None
        if not (isinstance(r.predicate, E.IntImm) and r.predicate.value):
            pred = self.exprs.compile(r.predicate)
        plan = [self._plan_binding(iv, v) for iv, v in zip(b.iter_vars, r.iter_values)]
        allocs = [self._allocator(buf) for buf in b.alloc_buffers]

        slots.context.append(b.name)
        iv_slots, saved = [], []
        for iv, p in zip(b.iter_vars, plan):
            if p.alias is not None:
                token = slots.alias_var(iv.var, p.alias)
            else:
                token = None
                slots.bind_var(iv.var)
            iv_slots.append(slots.index[iv.var])
            saved.append((token, slots.with_bounds(iv.var, p.bound, p.rng)))
        buf_slots = [slots.open_buffer(buf) for buf in b.alloc_buffers]
        try:
            init = self.compile(b.init) if b.init is not None else None
            body = self.compile(b.body)
        finally:
            for buf in b.alloc_buffers:
                slots.close_buffer(buf)
            for iv, p, (token, old) in zip(b.iter_vars, plan, saved):
                slots.restore_bounds(iv.var, old)
                if p.alias is not None:
                    slots.unalias_var(iv.var, token)
                else:
                    slots.unbind_var(iv.var)
            slots.context.pop()

        bind = self._binder(b, plan, iv_slots)
        at_reduce_start = self._reduce_start_test(b, iv_slots) if init is not None else None
        alloc_pairs = tuple(zip(buf_slots, allocs))

        if pred is None and bind is None and not alloc_pairs:
            if init is None:
                return body

            def run_simple(env):
                if at_reduce_start(env):
                    init(env)
                body(env)
            return run_simple

        def run(env):
            if pred is not None and not pred(env):
                return
            if bind is not None:
                bind(env)
            for bs, alloc in alloc_pairs:
                env[bs] = alloc(env)
            if init is not None and at_reduce_start(env):
                init(env)
            body(env)
        return run

    class _Binding:
        """How one block iteration variable gets its value: shares a loop variable's slot (``alias``), or is
        computed by ``value`` and, unless proven inside its domain, checked at run time. ``bound`` and
        ``rng`` are what is statically known of the variable inside the block."""

        __slots__ = ("alias", "value", "checked", "dom", "bound", "rng")

        def __init__(self, alias, value, checked, dom, bound, rng):
            self.alias, self.value, self.checked, self.dom = alias, value, checked, dom
            self.bound, self.rng = bound, rng

    def _plan_binding(self, iv: S.IterVar, value) -> "_Binding":
        lo, ext = iv.dom.min, iv.dom.extent
        rng = (lo, ext)
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            dom = (lo.value, lo.value + ext.value - 1)
            proven = self.slots.provably_within(value, dom[0], dom[1])
            if proven is not None and isinstance(value, E.Var):
                self.slots.var_slot(value)  # must be bound
                return self._Binding(value, None, False, dom, proven, rng)
            return self._Binding(None, self.exprs.compile(value), proven is None, dom, proven or dom, rng)
        if isinstance(value, E.Var) and self.slots.in_symbolic_range(value, lo, ext):
            self.slots.var_slot(value)
            return self._Binding(value, None, False, None, None, rng)
        return self._Binding(None, self.exprs.compile(value), True,
                             (self.exprs.compile(lo), self.exprs.compile(ext)), None, rng)

    def _binder(self, b: S.Block, plan, iv_slots):
        """Closure binding the non-aliased iteration variables (None when every variable is aliased)."""
        name = b.name
        names = [iv.var.name for iv in b.iter_vars]

        def domain_error(n, v, lo, ext):
            return IndexError(f"block {name!r}: iteration variable {names[n]!r} bound to {v}, outside its "
                              f"domain [{lo}, {lo + ext})")

        unchecked = tuple((p.value, iv_slots[n]) for n, p in enumerate(plan) if p.alias is None and not p.checked)
        static = tuple((p.value, iv_slots[n], p.dom[0], p.dom[1], n) for n, p in enumerate(plan)
                       if p.alias is None and p.checked and isinstance(p.dom[0], int))
        dynamic = tuple((p.value, iv_slots[n], p.dom[0], p.dom[1], n) for n, p in enumerate(plan)
                        if p.alias is None and p.checked and not isinstance(p.dom[0], int))
        if not (unchecked or static or dynamic):
            return None

        def bind(env):
            for f, k in unchecked:
                env[k] = f(env)
            for f, k, lo, hi, n in static:
                v = f(env)
                if not lo <= v <= hi:
                    raise domain_error(n, v, lo, hi - lo + 1)
                env[k] = v
            for f, k, flo, fext, n in dynamic:
                v = f(env)
                lo = flo(env)
                ext = fext(env)
                if not lo <= v < lo + ext:
                    raise domain_error(n, v, lo, ext)
                env[k] = v
        return bind

    def _reduce_start_test(self, b: S.Block, iv_slots):
        """Closure telling whether every reduction variable sits at its domain minimum (init time)."""
        reduce = [(iv_slots[n], iv.dom.min) for n, iv in enumerate(b.iter_vars) if iv.iter_type == "R"]
        static = tuple((k, lo.value) for k, lo in reduce if isinstance(lo, E.IntImm))
        dynamic = tuple((k, self.exprs.compile(lo)) for k, lo in reduce if not isinstance(lo, E.IntImm))
        if len(static) == 1 and not dynamic:
            ((k0, lo0),) = static
            return lambda env: env[k0] == lo0
        if static and not dynamic:
            get = itemgetter(*(k for k, _ in static))
            start = tuple(lo for _, lo in static)
            return lambda env: get(env) == start

        def at_start(env):
            for k, lo in static:
                if env[k] != lo:
                    return False
            for k, flo in dynamic:
                if env[k] != flo(env):
                    return False
            return True
        return at_start

    # ------------------------------------------------------------------------------------------------
    def _allocator(self, buf: Buffer):
        """Closure creating the storage of an allocated buffer (shape may use symbolic dims)."""
        dtype = np.dtype(buf.dtype)
        fill = np.nan if is_float(buf.dtype) else 0
        shape_fns = [self.exprs.compile(s) for s in buf.shape]
        const = buf.const_shape()
        name = buf.name
        if const is not None:
            if any(d < 0 for d in const):
                raise ValueError(f"buffer {name!r} allocated with negative shape {const}")

            def alloc_const(env):
                return np.full(const, fill, dtype)
            return alloc_const

        def alloc(env):
            shape = tuple(int(f(env)) for f in shape_fns)
            if any(d < 0 for d in shape):
                raise ValueError(f"buffer {name!r} allocated with negative shape {shape}")
            return np.full(shape, fill, dtype)
        return alloc
