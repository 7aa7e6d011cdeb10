"""How much straight-line code a scheduled function becomes once its loops are unrolled, counted before lowering.

Two uses share these counts:

* the tuner's ``VerifyCodeSize`` postprocessor rejects candidates whose builds would cost more tuning time
  than they can win (tight bounds, see ``tunefarm/search/postprocs.py``);
* ``lower()`` (so every ``build()``) refuses a program no build should attempt (``check_code_size``): LLVM's
  full unroller grows much faster than the code it makes. Measured on matmuls (one core, a loaded machine):
  ``fuse(i, j, k)`` + ``unroll`` (straight-line code) built in 0.2 s at 1,024 statements, 0.9 s at 4,096,
  2.5 s at 8,192 and 28 s at 32,768; on a 37x53x29 matmul (113,738 statements) it had not returned after 10
  minutes and 730 MB. ``fuse(i, j)`` + ``unroll`` around a rolled ``k`` loop copies that loop: 1.5 s at 256
  copies, 17 s at 1,024, 65 s at 2,025, 396 s at 4,096. So one unrolled loop may make at most
  ``MAX_UNROLLED_STATEMENTS`` (8,192) statements and ``MAX_UNROLLED_LOOPS`` (256) loops: builds of a few
  seconds at worst. Every program the test suite builds (hand-written and course schedules, tuned programs,
  the graph's default schedules) stays under 400 statements and 64 loops per unrolled loop.

Which loops unroll follows the code generator's rule (``codegen/unroll.py``): kind ``unrolled``, or under
``pragma_auto_unroll_max_step = N`` a serial constant loop with only unrolled or vectorized loops inside whose
``extent * statements`` is at most ``N``. A vector statement counts once per ``vector_bytes`` it stores.
"""
from __future__ import annotations

import dataclasses

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import affine_coefficients
from ..ir.dtype import nbytes as dtype_bytes
from ..ir.function import PrimFunc
from ..ir.functor import post_order_visit
from ..ir.stmt_functor import StmtFunctor, iter_stmts
from .lower_blocks import LoweringError
from .unroll import max_step_of

MAX_UNROLLED_STATEMENTS = 8192
MAX_UNROLLED_LOOPS = 256


class CodeSizeError(LoweringError):
    """A program whose unrolled code is too large to build in reasonable time (names the loop and the size)."""


@dataclasses.dataclass(frozen=True)
class CodeSize:
    """``statements``: straight-line statements after unrolling (vector ones per ``vector_bytes``);
    ``gathered_lanes``: vector lanes loaded or stored one element at a time (see ``gathered_lanes``);
    ``loops``: loops left rolled after unrolling, each copy counted (an unrolled loop copies the loops inside);
    ``statements_loop`` / ``loops_loop``: the unrolled loop that makes the most statements / loops (None if
    none), with how many (``statements_made`` / ``loops_made``)."""

    statements: int
    gathered_lanes: int
    loops: int
    statements_loop: str | None
    statements_made: int
    loops_loop: str | None
    loops_made: int


def unrolled_size(func: PrimFunc) -> int:
    """Statements of straight-line code after unrolling, a vector statement counted once per 32 bytes."""
    return code_size(func).statements


def gathered_lanes(func: PrimFunc) -> int:
    """Lanes that vector statements load or store one element at a time, after unrolling (counted like
    ``unrolled_size``): an access whose flat index moves with the vector lane by a stride other than 0 or 1 is
    emitted as one scalar load (or store) per lane (``codegen/vectorize.py``). LLVM's time grows with these much
    faster than with whole-vector statements: over a 256-trial dense+ReLU job, the 11% of programs with more
    than 256 took 43% of the LLVM time (375 ms each against 64 ms for the rest), and none was among the fastest
    (the best of them 1.65x slower than the job's best). The default bound (``VerifyCodeSize``) is 512, not 256:
    a stride-2 convolution gathers in every program that vectorizes its output columns (its register tiles
    count ~350)."""
    return code_size(func, 32).gathered_lanes


def check_code_size(func: PrimFunc, name: str) -> None:
    """Raise :class:`CodeSizeError` when one unrolled loop of ``func`` makes more than
    ``MAX_UNROLLED_STATEMENTS`` statements or ``MAX_UNROLLED_LOOPS`` loops (see the module docstring)."""
    size = code_size(func, 32)
    if size.statements_made > MAX_UNROLLED_STATEMENTS:
        what, loop, made, limit = "statements", size.statements_loop, size.statements_made, MAX_UNROLLED_STATEMENTS
    elif size.loops_made > MAX_UNROLLED_LOOPS:
        what, loop, made, limit = "loops", size.loops_loop, size.loops_made, MAX_UNROLLED_LOOPS
    else:
        return
    raise CodeSizeError(
        f"{name}: unrolling loop {loop!r} makes {made:,} {what}, over the build limit of {limit:,} (LLVM would "
        "take minutes or more); split the loop and unroll an inner part, or leave it rolled")


_NOTHING = (0, 0, 0, 0)


class _SizeCounter(StmtFunctor):
    """``code_size``'s walk. Each visit returns (steps as counted by the unroll rule, size, gathered lanes,
    rolled loops left inside). Passed down: the unroll step limit in force, and ``lane``: None outside
    vectorized loops, else (lanes, {variable: how far it moves per lane}) -- the loop variable moves by 1,
    and a block iteration variable bound to it by its coefficient (no substitution)."""

    def __init__(self, vector_bytes: int):
        self.vector_bytes = vector_bytes
        # [loop name, statements / loops its unrolling makes] of the largest unrolled loops so far
        self.by_statements, self.by_loops = [None, 0], [None, 0]

    def visit_SeqStmt(self, s: S.SeqStmt, max_step, lane):
        return tuple(map(sum, zip(*(self.visit(x, max_step, lane) for x in s.seq)))) or _NOTHING

    def visit_For(self, s: S.For, max_step, lane):
        own = max_step_of(s.annotations)
        ext = s.const_extent()
        vector = s.kind == "vectorized"
        steps, size, gathers, loops = self.visit(s.body, own if own is not None else max_step,
                                                 (ext or 1, {s.loop_var: 1}) if vector else lane)
        if vector:
            bytes_ = (ext or 1) * _store_bytes(s.body)
            return steps, size * max(1, -(-bytes_ // self.vector_bytes)), gathers, loops
        const = ext is not None and isinstance(s.min, E.IntImm)
        unrolled = const and (s.kind == "unrolled" or (
            s.kind == "serial" and max_step and not loops and ext * max(1, steps) <= max_step))
        steps = steps * (ext if ext is not None else 1 << 30)
        if not unrolled:
            return steps, size, gathers, loops + 1
        for largest, made in ((self.by_statements, size * ext), (self.by_loops, loops * ext)):
            if made > largest[1]:
                largest[:] = [s.loop_var.name, made]
        return steps, size * ext, gathers * ext, loops * ext

    def visit_BlockRealize(self, s: S.BlockRealize, max_step, lane):
        own = max_step_of(s.block.annotations)
        ms = own if own is not None else max_step
        if lane is not None:
            moves = dict(lane[1])
            for iv, value in zip(s.block.iter_vars, s.iter_values):
                moves[iv.var] = _lane_stride(value, lane[1])
            lane = (lane[0], moves)
        body, init = self.visit(s.block.body, ms, lane), self.visit(s.block.init, ms, lane) or _NOTHING
        return tuple(a + b for a, b in zip(body, init))

    def visit_IfThenElse(self, s: S.IfThenElse, max_step, lane):
        then, other = self.visit(s.then_case, max_step, lane), self.visit(s.else_case, max_step, lane) or _NOTHING
        return tuple(a + b for a, b in zip(then, other))

    def visit_Allocate(self, s: S.Allocate, max_step, lane):
        return self.visit(s.body, max_step, lane)

    def generic_visit(self, s, max_step, lane):  # a store or an evaluation
        gathers = 0
        if lane is not None and isinstance(s, S.BufferStore):
            gathers = lane[0] * sum(1 for buf, idx in _accesses(s) if _flat_stride(buf, idx, lane[1]) not in (0, 1))
        return 1, 1, gathers, 0


def code_size(func: PrimFunc, vector_bytes: int = 32) -> CodeSize:
    """The counts, and the unrolled loops that make the most statements and loops, in one walk."""
    counter = _SizeCounter(vector_bytes)
    _, statements, gathers, loops = counter.visit(func.body, None, None)
    return CodeSize(statements, gathers, loops, *counter.by_statements, *counter.by_loops)


def _accesses(store: S.BufferStore) -> list:
    """(buffer, indices) of a store and of every load in its value."""
    out = [(store.buffer, store.indices)]
    post_order_visit(store.value, lambda n: out.append((n.buffer, n.indices)) if isinstance(n, E.BufferLoad) else None)
    return out


def _lane_stride(e, moves: dict) -> int | None:
    """How far ``e`` moves per vector lane, given how far each variable does (None: not affine in them)."""
    if isinstance(e, E.IntImm):
        return 0
    if isinstance(e, E.Var):
        return moves.get(e, 0)
    moving = [v for v, m in moves.items() if m != 0]
    aff = affine_coefficients(e, moving)
    if aff is None or any(moves[v] is None for v in aff[0]):
        return None
    return sum(c * moves[v] for v, c in aff[0].items())


def _flat_stride(buf, indices, moves: dict) -> int | None:
    """How far the flat (row-major) index of ``buf[indices]`` moves per vector lane (None: not affine)."""
    stride, mult = 0, 1
    for index, extent in zip(reversed(indices), reversed(buf.shape)):
        d = _lane_stride(index, moves)
        if d is None:
            return None
        stride += d * mult
        mult *= extent.value if isinstance(extent, E.IntImm) else 1 << 20
    return stride


def _store_bytes(s) -> int:
    """Element size of the widest store under ``s`` (4 when none is found; a block's ``init`` stores to the
    buffer its body stores to)."""
    return max((dtype_bytes(n.buffer.dtype) for n in iter_stmts(s) if isinstance(n, S.BufferStore)), default=0) or 4
