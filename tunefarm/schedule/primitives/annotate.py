"""Loop kinds and annotations: parallel, vectorize, unroll, annotate, unannotate.

``parallel`` and ``vectorize`` run iterations at the same time, so they are only legal on data-parallel
loops: no block below may bind the loop into a reduction iteration variable, every reduction block below
must bind it into one of its spatial variables (otherwise all iterations would update the same
accumulator), and the loop must have a compact data flow (``block_kinds.concurrency_violation``: every
block directly below is complete or a reduction block, which refuses a block whose iterations write what
others read, or one whose reduction variable indexes its output); a loop of one iteration is always legal.
``unroll`` only changes how the loop is emitted and is always legal.
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.function import PrimFunc
from ...ir.functor import uses_var
from ...ir.stmt_functor import iter_block_realizes
from ..error import ScheduleError
from ..tree import (block_with_annotations, find_block, find_loop, func_index, loop_with, loops_above, realize_with,
                    replace_path)
from .block_kinds import concurrency_violation
from .query import blocks_under

ANNOTATION_TYPES = (bool, int, float, str)


def check_data_parallel(func: PrimFunc, loop: S.For, primitive: str) -> None:
    """Raise unless every iteration of ``loop`` may run concurrently with the others (see module doc).

    A loop of one iteration always may: nothing runs beside it. (Fusing unit loops binds the fused variable
    nowhere -- ``i = 0`` -- so the binding rules would wrongly see a shared accumulator.)"""
    idx = func_index(func)
    direct = {id(r) for r in blocks_under(loop.body)}
    for realize, _ in iter_block_realizes(loop.body):
        path = idx.path(realize)
        why = concurrency_violation(realize, loop, loops_above(path), compact=id(realize) in direct,
                                    via=_carriers(path, loop, realize))
        if why:
            raise ScheduleError(primitive, why)


def _carriers(path, loop: S.For, realize: S.BlockRealize) -> frozenset:
    """The spatial iteration variables of the blocks between ``loop`` and ``realize`` whose bindings use the
    loop (or such a variable of a block further out): distinct iterations of the loop give the nested block
    distinct values of them, so a nested reduction indexed by one does not share an accumulator."""
    reach = {loop.loop_var}
    below = False
    for node in path[:-1]:
        below = below or node is loop
        if below and isinstance(node, S.BlockRealize) and node is not realize:
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                if iv.iter_type == "S" and uses_var(value, reach):
                    reach.add(iv.var)
    return frozenset(reach - {loop.loop_var})


def _set_kind(func: PrimFunc, loop: E.Var, kind: str, primitive: str) -> PrimFunc:
    path = find_loop(func, loop, primitive)
    node: S.For = path[-1]
    if kind in ("parallel", "vectorized"):
        check_data_parallel(func, node, primitive)
    if node.kind == kind:
        return func
    return replace_path(func, path, loop_with(node, kind, node.annotations))


def parallel(func: PrimFunc, loop: E.Var) -> PrimFunc:
    return _set_kind(func, loop, "parallel", "parallel")


def vectorize(func: PrimFunc, loop: E.Var) -> PrimFunc:
    return _set_kind(func, loop, "vectorized", "vectorize")


def unroll(func: PrimFunc, loop: E.Var) -> PrimFunc:
    return _set_kind(func, loop, "unrolled", "unroll")


def _check_value(key, value, primitive: str) -> None:
    if not isinstance(key, str) or not key:
        raise ScheduleError(primitive, f"the annotation key must be a non-empty string, got {key!r}")
    if not isinstance(value, ANNOTATION_TYPES):
        raise ScheduleError(primitive, f"annotation {key!r}: the value must be an int, float, str or bool, "
                                       f"got {type(value).__name__}")


def annotate_loop(func: PrimFunc, loop: E.Var, key: str, value) -> PrimFunc:
    _check_value(key, value, "annotate")
    path = find_loop(func, loop, "annotate")
    node: S.For = path[-1]
    anns = dict(node.annotations)
    anns[key] = value
    return replace_path(func, path, loop_with(node, node.kind, anns))


def annotate_block(func: PrimFunc, block: str, key: str, value) -> PrimFunc:
    _check_value(key, value, "annotate")
    path = find_block(func, block, "annotate")
    realize: S.BlockRealize = path[-1]
    anns = dict(realize.block.annotations)
    anns[key] = value
    return replace_path(func, path, _with_block(realize, block_with_annotations(realize.block, anns)))


def unannotate_loop(func: PrimFunc, loop: E.Var, key: str) -> PrimFunc:
    """Remove an annotation (a missing key is not an error, as in TVM)."""
    path = find_loop(func, loop, "unannotate")
    node: S.For = path[-1]
    if key not in node.annotations:
        return func
    anns = {k: v for k, v in node.annotations.items() if k != key}
    return replace_path(func, path, loop_with(node, node.kind, anns))


def _with_block(realize: S.BlockRealize, block: S.Block) -> S.BlockRealize:
    if type(realize) is S.BlockRealize:
        return realize_with(realize, realize.iter_values, realize.predicate, block)
    return realize.replace(block=block)


def unannotate_block(func: PrimFunc, block: str, key: str) -> PrimFunc:
    path = find_block(func, block, "unannotate")
    realize: S.BlockRealize = path[-1]
    if key not in realize.block.annotations:
        return func
    anns = {k: v for k, v in realize.block.annotations.items() if k != key}
    return replace_path(func, path, _with_block(realize, block_with_annotations(realize.block, anns)))
