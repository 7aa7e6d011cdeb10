"""Selects whose sides read memory: a load runs only where the select picks its side (TVM's ``if_then_else``).

A padding program reads ``x[i - 3]`` only where ``i >= 3``; elsewhere the address may lie outside ``x`` (and
once a loop is unrolled, a whole copy's addresses may), which LLVM treats as undefined behaviour. So a select
with a side that loads is emitted as:

- in scalar code, a branch: only the side picked is evaluated;
- in a vector loop, masked reads: each side is evaluated under a lane mask (its condition, broadcast when the
  lanes share it, and-ed with the mask of any select it is nested in), and every load in it reads only the
  lanes of its mask. A unit-stride load becomes ``llvm.masked.load`` (one masked move: 32- and 64-bit
  elements on AVX2, any on AVX-512BW); a gathered lane, or a lane-invariant load no lane of the mask needs,
  reads a zeroed stack slot instead. A branch would do for a condition the lanes share, but the phi joining a
  ragged vector (30 lanes) is split into one register per lane: 20x slower than the masked load
  (``benchmarks/bench_guarded_reads.py``).

Lanes not read hold 0, so nothing computed from them can trap (a division by a loaded value stays guarded).
"""
from __future__ import annotations

import llvmlite.ir as ir

from ..ir import expr as E
from ..ir.functor import post_order_visit
from .llvm_types import I8, I32, PTR, alloca, declare, intrinsic_suffix, size_of, storage_type

_SLOT_BYTES = 64  # the widest scalar a masked-off lane reads is 8 bytes; one cache line, zeroed once


class GuardedReads:
    """Mixin of ``ExprEmitter``: selects, and the loads made under ``load_mask``. Needs ``entry_builder`` (the
    function's entry block, where the zeroed slot is allocated) besides what ``ExprEmitter`` needs."""

    load_mask = None  # <lanes x i1> inside a lane-dependent select's side: the lanes whose reads happen
    _zero_slot = None

    def _e_Select(self, e: E.Select):
        c = self.typed(e.cond, "bool")
        if reads_memory(e.true_value) or reads_memory(e.false_value):
            if self.vc is None:
                return self._branching_select(c, e)
            return self._masked_select(self.broadcast(c, self.vc.lanes), e)
        t = self.typed(e.true_value, e.dtype)
        f = self.typed(e.false_value, e.dtype)
        c, t, f = self.match(c, t, f)
        return self.builder.select(c, t, f)

    def _branching_select(self, c: ir.Value, e: E.Select) -> ir.Value:
        """Scalar code: evaluate only the side ``c`` picks."""
        b = self.builder
        then_bb, else_bb = b.append_basic_block("select.true"), b.append_basic_block("select.false")
        end_bb = b.append_basic_block("select.end")
        b.cbranch(c, then_bb, else_bb)
        values = []
        for bb, side in ((then_bb, e.true_value), (else_bb, e.false_value)):
            b.position_at_end(bb)
            values.append((self.typed(side, e.dtype), b.block))
            b.branch(end_bb)
        b.position_at_end(end_bb)
        phi = b.phi(values[0][0].type)
        for v, bb in values:
            phi.add_incoming(v, bb)
        return phi

    def _masked_select(self, c: ir.Value, e: E.Select) -> ir.Value:
        b = self.builder
        outer = self.load_mask
        sides = []
        for side, mask in ((e.true_value, c), (e.false_value, b.not_(c))):
            if not reads_memory(side):
                sides.append(self.typed(side, e.dtype))
                continue
            self.load_mask = mask if outer is None else b.and_(outer, mask)
            try:
                sides.append(self.typed(side, e.dtype))
            finally:
                self.load_mask = outer
        c, t, f = self.match(c, *sides)
        return b.select(c, t, f)

    # ------------------------------------------------------------------ loads under the mask
    def masked_vector_load(self, buf, ptr: ir.Value, lanes: int) -> ir.Value:
        """``lanes`` consecutive elements at ``ptr``, reading only the lanes of ``load_mask`` (0 elsewhere)."""
        vt = ir.VectorType(storage_type(buf.dtype), lanes)
        fn = declare(self.module, f"llvm.masked.load.{intrinsic_suffix(vt)}.p0", vt,
                     [PTR, ir.VectorType(ir.IntType(1), lanes), vt])
        call = self.builder.call(fn, [ptr, self.load_mask, ir.Constant(vt, None)], arg_attrs={0: ()})
        call.arg_attributes[0].align = size_of(buf.dtype)  # LLVM 22: the alignment is the pointer's attribute
        return call

    def lane_pointer(self, ptr: ir.Value, lane: int | None) -> ir.Value:
        """``ptr`` where lane ``lane`` of ``load_mask`` is set (any lane when ``lane`` is None), else the zeroed
        slot: the load always reads something readable."""
        b = self.builder
        mask = self.load_mask
        if lane is None:
            bits = b.bitcast(mask, ir.IntType(mask.type.count))
            needed = b.icmp_unsigned("!=", bits, ir.Constant(bits.type, 0))
        else:
            needed = b.extract_element(mask, ir.Constant(I32, lane))
        return b.select(needed, ptr, self._zeroed_slot())

    def _zeroed_slot(self) -> ir.Value:
        if self._zero_slot is None:
            eb = self.entry_builder
            slot = alloca(eb, ir.ArrayType(I8, _SLOT_BYTES), _SLOT_BYTES, "masked.lane")
            eb.store(ir.Constant(ir.ArrayType(I8, _SLOT_BYTES), None), slot, align=_SLOT_BYTES)
            self._zero_slot = slot
        return self._zero_slot


def reads_memory(e) -> bool:
    """Whether ``e`` loads from a buffer anywhere inside it."""
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.BufferLoad) else None)
    return bool(found)
