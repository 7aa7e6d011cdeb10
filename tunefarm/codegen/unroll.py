"""Loop unrolling in the IR itself, before flattening.

An ``unrolled`` loop with a constant extent becomes one copy of its body per iteration with the loop variable
replaced by a constant; flattening then folds the indices to constants, which is what lets LLVM keep a
``local`` accumulator tile in registers (SROA needs constant offsets). Unrolling is not left to LLVM's
heuristics, which change between versions and between O2 and O3.

``pragma_auto_unroll_max_step = N`` on a loop (``For.annotations``) or a block (``Block.annotations``)
unrolls, as TVM's UnrollLoop pass does, every serial constant-extent loop under it whose inner loops are all
unrolled and whose ``extent * statements-per-iteration`` is at most ``N``. Pragmas are hints: a value that is
not a number is ignored.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.functor import substitute

AUTO_UNROLL_KEY = "pragma_auto_unroll_max_step"


def max_step_of(annotations: dict) -> int | None:
    """The annotation's step limit; pragmas are hints, so a non-numeric value is ignored rather than fatal."""
    value = annotations.get(AUTO_UNROLL_KEY)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if hasattr(value, "value") and isinstance(getattr(value, "value"), (int, float)):  # an IntImm
            return int(value.value)
        return None
    return int(value)


def _copies(loop: S.For) -> S.Stmt:
    n = loop.const_extent()
    lo = loop.min.value if isinstance(loop.min, E.IntImm) else None
    if n is None or lo is None:
        raise ValueError("only constant-range loops can be unrolled")
    dtype = loop.loop_var.dtype
    return S.seq([substitute(loop.body, {loop.loop_var: E.const(lo + k, dtype)}) for k in range(n)]) \
        if n > 0 else S.SeqStmt(())


def _can_unroll(loop: S.For) -> bool:
    return loop.const_extent() is not None and isinstance(loop.min, E.IntImm)


def step_count(s: S.Stmt | None) -> int:
    """Statements executed by ``s`` once all its loops are counted (a vectorized loop counts once)."""
    if s is None:
        return 0
    if isinstance(s, S.SeqStmt):
        return sum(step_count(x) for x in s.seq)
    if isinstance(s, S.For):
        inner = step_count(s.body)
        if s.kind == "vectorized":
            return inner
        ext = s.const_extent()
        return inner * (ext if ext is not None else 1 << 30)
    if isinstance(s, S.IfThenElse):
        return step_count(s.then_case) + step_count(s.else_case)
    if isinstance(s, S.Allocate):
        return step_count(s.body)
    return 1


def _has_rolled_loop(s: S.Stmt | None) -> bool:
    """Whether a loop that is not vectorized remains under ``s``."""
    if s is None:
        return False
    if isinstance(s, S.SeqStmt):
        return any(_has_rolled_loop(x) for x in s.seq)
    if isinstance(s, S.For):
        return s.kind != "vectorized" or _has_rolled_loop(s.body)
    if isinstance(s, S.IfThenElse):
        return _has_rolled_loop(s.then_case) or _has_rolled_loop(s.else_case)
    if isinstance(s, S.Allocate):
        return _has_rolled_loop(s.body)
    return False


def auto_unroll(s: S.Stmt | None, max_step: int) -> S.Stmt | None:
    """Unroll small serial loops under ``s`` bottom-up (TVM's ``auto_max_step`` rule)."""
    if s is None or max_step <= 0:
        return s
    if isinstance(s, S.SeqStmt):
        return S.seq([auto_unroll(x, max_step) for x in s.seq])
    if isinstance(s, S.IfThenElse):
        return s.replace(then_case=auto_unroll(s.then_case, max_step),
                         else_case=auto_unroll(s.else_case, max_step))
    if isinstance(s, S.Allocate):
        return s.replace(body=auto_unroll(s.body, max_step))
    if isinstance(s, S.For):
        body = auto_unroll(s.body, max_step)
        loop = s.replace(body=body) if body is not s.body else s
        if (loop.kind in ("serial", "unrolled") and _can_unroll(loop) and not _has_rolled_loop(body)
                and loop.const_extent() * max(1, step_count(body)) <= max_step):
            return _copies(loop)
        return loop
    return s


def unroll_loops(s: S.Stmt | None) -> S.Stmt | None:
    """Expand ``unrolled`` loops and apply ``pragma_auto_unroll_max_step`` annotations on loops."""
    if s is None:
        return None
    if isinstance(s, S.SeqStmt):
        return S.seq([unroll_loops(x) for x in s.seq])
    if isinstance(s, S.IfThenElse):
        return s.replace(then_case=unroll_loops(s.then_case), else_case=unroll_loops(s.else_case))
    if isinstance(s, S.Allocate):
        return s.replace(body=unroll_loops(s.body))
    if isinstance(s, S.For):
        loop = s.replace(body=unroll_loops(s.body))
        max_step = max_step_of(loop.annotations)
        if max_step is not None:
            loop = auto_unroll(loop, max_step)
            if not isinstance(loop, S.For):
                return loop
        if loop.kind == "unrolled":
            if _can_unroll(loop):
                return _copies(loop)
            return loop.replace(kind="serial")
        return loop
    return s
