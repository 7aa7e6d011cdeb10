"""Postprocessors: turn a design-space schedule into the program that is measured, and reject bad ones.

They run after ``sch.enter_postproc()``, so their primitives are part of the trace the farm replays (the
design part before the marker is what mutation edits):

- ``RewriteReductionBlock``: ``decompose_reduction`` of every block that still has an ``init``, at its first
  reduction loop, so the inner loops carry no "first iteration?" branch.
- ``RewriteParallelVectorizeUnroll``: reads the root block's ``meta_schedule.parallel`` / ``vectorize`` /
  ``unroll_explicit`` annotations, removes them, and per block fuses the outer data-parallel loops (product at
  most the parallel extent) into one ``parallel`` loop, vectorizes an innermost spatial loop that fits the
  vector extent, and puts ``pragma_auto_unroll_max_step`` on the outermost loop.
- ``VerifyProgram``: loop extents are positive, no parallel loop inside another, no parallel or vectorized
  loop bound into a reduction variable (a data race), vector loops of a bounded number of lanes.
- ``VerifyCodeSize``: the straight-line code that unrolling makes (``unrolled_size``), and the vector lanes it
  loads or stores one at a time (``gathered_lanes``), stay below bounds (``codegen/code_size.py`` counts both;
  ``build()`` itself refuses only programs far beyond these bounds).
  LLVM's time grows with both far faster than the kernel's speed does: over four 256-trial jobs (matmul 128^3
  and 512^3, dense+ReLU, conv2d) the fastest program was never over 128 statements (seven of the ten fastest
  were not), while the 15% over it took 20-55% of the build time (a dense program at 900 spent over 10 s in
  LLVM and was killed as hung). Gathered lanes: see ``gathered_lanes``.

A postprocessor raises ``PostprocError`` (or lets a ``ScheduleError`` through) to reject the candidate.
"""
from __future__ import annotations

from ..codegen.code_size import code_size, gathered_lanes, unrolled_size  # noqa: F401 - re-exported
from ..ir import expr as E
from ..ir import stmt as S
from ..ir.function import PrimFunc
from ..ir.stmt_functor import StmtVisitor
from ..schedule import Schedule, ScheduleError
from . import block_info
from .space import PARALLEL_KEY, UNROLL_KEY, VECTORIZE_KEY


class PostprocError(Exception):
    """A candidate the postprocessors reject (``reason`` says why)."""


class Postproc:
    name = "postproc"

    def apply(self, sch: Schedule) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class RewriteReductionBlock(Postproc):
    name = "rewrite_reduction_block"

    def apply(self, sch: Schedule) -> None:
        for _ in range(64):
            func = sch.mod["main"]
            todo = None
            for name in block_info.leaf_blocks(func):
                realize = block_info.block_realize(func, name)
                if realize.block.init is None:
                    continue
                kinds = block_info.loop_kinds(func, name)
                if "R" in kinds:
                    todo = (name, kinds.index("R"))
                    break
            if todo is None:
                return
            rv = sch.get_block(todo[0])
            loops = sch.get_loops(rv)
            sch.decompose_reduction(rv, loops[todo[1]])
        raise PostprocError("decompose_reduction did not converge")


class RewriteParallelVectorizeUnroll(Postproc):
    name = "rewrite_parallel_vectorize_unroll"

    def apply(self, sch: Schedule) -> None:
        ann = sch.mod["main"].root_block.annotations
        keys = [k for k in (PARALLEL_KEY, VECTORIZE_KEY, UNROLL_KEY) if k in ann]
        if not keys:
            return
        max_par = int(ann.get(PARALLEL_KEY, 0) or 0)
        max_vec = int(ann.get(VECTORIZE_KEY, 0) or 0)
        unroll = int(ann.get(UNROLL_KEY, 0) or 0)
        root = sch.get_block("root")
        for key in keys:
            sch.unannotate(root, key)
        if max_par <= 1 and max_vec <= 1 and not unroll:
            return
        for name in block_info.leaf_blocks(sch.mod["main"]):
            self._rewrite_block(sch, name, max_par, max_vec, unroll)

    @staticmethod
    def _parallel_prefix(loops: list[S.For], max_extent: int, reduction_vars: set) -> int:
        """How many outer loops to fuse into the parallel loop (data parallel, perfectly nested, product
        at most ``max_extent``)."""
        if max_extent <= 1 or not loops or any(lp.kind == "parallel" for lp in loops):
            return 0
        n, prod = 0, 1
        for k, lp in enumerate(loops):
            ext = lp.const_extent()
            if ext is None or lp.kind != "serial" or (k and loops[k - 1].body is not lp):
                break
            if prod * ext > max_extent or lp.loop_var in reduction_vars:
                break
            prod *= ext
            n = k + 1
        return n if prod > 1 else 0

    def _rewrite_block(self, sch: Schedule, name: str, max_par: int, max_vec: int, unroll: int) -> None:
        func = sch.mod["main"]
        realize, loops = block_info.locate(func, name)
        if not loops:
            return
        n_par = self._parallel_prefix(loops, max_par, block_info.reduction_bound_vars(func) if max_par > 1 else set())
        inner = loops[-1]
        ext = inner.const_extent()
        vec = (max_vec > 1 and n_par < len(loops) and ext is not None and 1 < ext <= max_vec
               and inner.kind == "serial" and inner.body is realize
               and block_info.loop_kinds(sch.mod["main"], name)[-1] == "S")
        want_unroll = unroll > 0 and loops[0].annotations.get("pragma_auto_unroll_max_step") != unroll
        if not (n_par or vec or want_unroll):
            return
        loop_rvs = sch.get_loops(sch.get_block(name))
        if n_par:
            fused = sch.fuse(*loop_rvs[:n_par]) if n_par > 1 else loop_rvs[0]
            sch.parallel(fused)
            loop_rvs = [fused] + loop_rvs[n_par:]
        if vec:
            try:
                sch.vectorize(loop_rvs[-1])
            except ScheduleError:
                pass
        if unroll > 0 and (n_par > 1 or want_unroll):
            sch.annotate(loop_rvs[0], "pragma_auto_unroll_max_step", unroll)


class VerifyProgram(Postproc):
    """Reject programs that are illegal or would misbehave on the CPU (see module doc)."""

    name = "verify"

    def __init__(self, max_vector_lanes: int = 256):
        self.max_vector_lanes = max_vector_lanes

    def apply(self, sch: Schedule) -> None:
        verify_program(sch.mod["main"], self.max_vector_lanes)


def verify_program(func: PrimFunc, max_vector_lanes: int = 256) -> None:
    """Raise ``PostprocError`` for bad loop extents, nested or racy parallel or vector loops."""
    _ProgramChecker(func, max_vector_lanes).visit(func.body, False)


class _ProgramChecker(StmtVisitor):
    """``verify_program``'s walk; ``in_parallel`` (passed down) says whether a parallel loop is around."""

    def __init__(self, func: PrimFunc, max_vector_lanes: int):
        self.func = func
        self.max_vector_lanes = max_vector_lanes
        self.reduction_vars = None  # computed when the first parallel or vector loop needs them

    def visit_For(self, node: S.For, in_parallel: bool):
        if isinstance(node.extent, E.IntImm) and node.extent.value < 1:
            raise PostprocError(f"loop {node.loop_var.name} has extent {node.extent.value}")
        if node.kind == "parallel" and in_parallel:
            raise PostprocError(f"parallel loop {node.loop_var.name} is nested in another parallel loop")
        if node.kind in ("parallel", "vectorized"):
            if self.reduction_vars is None:
                self.reduction_vars = block_info.reduction_bound_vars(self.func)
            if node.loop_var in self.reduction_vars:
                raise PostprocError(f"{node.kind} loop {node.loop_var.name} is bound to a reduction variable "
                                    "(its iterations would race)")
        if node.kind == "vectorized":
            ext = node.const_extent()
            if ext is None or ext > self.max_vector_lanes:
                raise PostprocError(f"vectorized loop {node.loop_var.name} has extent {ext} "
                                    f"(at most {self.max_vector_lanes} lanes)")
        self.visit(node.body, in_parallel or node.kind == "parallel")


class VerifyCodeSize(Postproc):
    """Reject programs whose unrolled code is too large to build quickly (see module doc): more than
    ``max_size`` vector statements, or more than ``max_gathered_lanes`` lanes loaded or stored one at a time."""

    name = "verify_code_size"

    def __init__(self, max_size: int = 128, max_gathered_lanes: int = 512):
        self.max_size = max_size
        self.max_gathered_lanes = max_gathered_lanes

    def apply(self, sch: Schedule) -> None:
        counts = code_size(sch.mod["main"], 32)
        size, gathers = counts.statements, counts.gathered_lanes
        if size > self.max_size:
            raise PostprocError(f"unrolled code of {size} vector statements is over the limit of {self.max_size} "
                                "(builds that long cost more tuning time than they can win)")
        if gathers > self.max_gathered_lanes:
            raise PostprocError(f"unrolled code gathers or scatters {gathers} vector lanes one at a time, over the "
                                f"limit of {self.max_gathered_lanes} (builds that long cost more tuning time than "
                                "they can win)")


def default_postprocs() -> list[Postproc]:
    return [RewriteReductionBlock(), RewriteParallelVectorizeUnroll(), VerifyProgram(), VerifyCodeSize()]


def apply_postprocs(sch: Schedule, postprocs) -> Schedule:
    """Mark the postproc section of the trace and run each postprocessor on ``sch`` (in place)."""
    sch.enter_postproc()
    for p in postprocs:
        try:
            p.apply(sch)
        except ScheduleError as e:
            raise PostprocError(f"{p.name}: {e}") from e
    return sch
