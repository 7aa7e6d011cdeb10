"""The statement walker every pass shares (``ir.stmt_functor``): children, order, early stops, context passed
down, sharing of what a rewrite leaves alone, and the sequence helpers."""
from __future__ import annotations

import pytest

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.stmt_functor import (StmtFunctor, StmtMutator, StmtVisitor, flatten_seq, is_empty_stmt,
                                      iter_block_realizes, iter_stmts, map_stmt_children, seq_items,
                                      stmt_children, unwrap_seq)
from tunefarm.script import from_source

NESTED = """
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            for j in range(8):
                with T.block("inner"):
                    vj = T.axis.spatial(8, j)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j2 in T.serial(8):
                if j2 < 4:
                    with T.block("low"):
                        vj = T.axis.spatial(8, j2)
                        B[vi, vj] = T.float32(0)
                else:
                    with T.block("high"):
                        vj = T.axis.spatial(8, j2)
                        B[vi, vj] = T.float32(1)
"""

A = Buffer("A", (8,))


def store(k: int) -> S.BufferStore:
    return S.BufferStore(A, E.const(float(k)), (E.const(k),))


def label(n) -> str:
    """A short name for a statement in walk-order assertions."""
    if isinstance(n, S.For):
        return "for " + n.loop_var.name
    if isinstance(n, S.BlockRealize):
        return "realize " + n.block.name
    if isinstance(n, S.Block):
        return "block " + n.name
    if isinstance(n, S.BufferStore):
        return "store " + (str(n.indices[0].value) if isinstance(n.indices[0], E.IntImm) else n.buffer.name)
    return type(n).__name__


def test_children_of_every_statement_kind_in_program_order():
    s0, s1, s2 = store(0), store(1), store(2)
    i = E.Var("i")
    seq = S.SeqStmt((s0, s1))
    assert stmt_children(seq) == (s0, s1)
    assert stmt_children(S.For(i, 0, 4, "serial", s0)) == (s0,)
    assert stmt_children(S.IfThenElse(i < 2, s0, s1)) == (s0, s1)
    assert stmt_children(S.IfThenElse(i < 2, s0)) == (s0,)  # a missing else is not a child
    assert stmt_children(S.Allocate(A, s2)) == (s2,)
    blk = S.Block("b", (), (), (), s1, s0)
    assert stmt_children(blk) == (s0, s1)  # the init runs first
    assert stmt_children(blk.replace(init=None)) == (s1,)
    realize = S.BlockRealize((), S.TRUE, blk)
    assert stmt_children(realize) == (blk,)
    assert stmt_children(s0) == () and stmt_children(S.Evaluate(E.const(0))) == () and stmt_children(i) == ()


def test_iter_stmts_is_pre_order_in_program_order():
    f = from_source(NESTED)
    got = [label(n) for n in iter_stmts(f.body) if not isinstance(n, (S.SeqStmt, S.IfThenElse))]
    assert got == ["realize root", "block root", "for i", "realize outer", "block outer", "for j", "realize inner",
                   "block inner", "store B", "for j2", "realize low", "block low", "store B", "realize high",
                   "block high", "store B"]
    assert list(iter_stmts(None)) == []


def test_iter_stmts_stops_when_its_caller_does():
    class Boom(S.SeqStmt):  # a sequence whose items may not be looked at
        __slots__ = ()

        @property
        def seq(self):
            raise AssertionError("walked past the point the caller stopped at")

    first = store(0)
    root = S.SeqStmt((first, Boom.__new__(Boom)))
    walk = iter_stmts(root)
    assert next(walk) is root and next(walk) is first
    assert any(isinstance(n, S.BufferStore) for n in iter_stmts(root))
    with pytest.raises(AssertionError, match="walked past"):
        list(iter_stmts(root))


def test_iter_block_realizes_gives_the_loops_inside_the_enclosing_block():
    f = from_source(NESTED)
    got = [(r.block.name, [lp.loop_var.name for lp in loops]) for r, loops in iter_block_realizes(f.body)]
    assert got == [("root", []), ("outer", ["i"]), ("inner", ["j"]), ("low", ["j2"]), ("high", ["j2"])]
    top = [r.block.name for r, _ in iter_block_realizes(f.root_block.body, nested=False)]
    assert top == ["outer"]
    init_first = S.Block("red", (), (), (), S.BlockRealize((), S.TRUE, S.Block("b", body=store(1))),
                         S.BlockRealize((), S.TRUE, S.Block("i", body=store(0))))
    assert [r.block.name for r, _ in iter_block_realizes(init_first)] == ["i", "b"]


def test_map_stmt_children_shares_what_is_unchanged():
    s0, s1 = store(0), store(1)
    same = lambda n: n  # noqa: E731
    i = E.Var("i")
    nodes = [S.SeqStmt((s0, s1)), S.For(i, 0, 4, "unrolled", s0, {"k": 1}), S.IfThenElse(i < 1, s0),
             S.IfThenElse(i < 1, s0, s1), S.Allocate(A, s0), S.Block("b", (), (), (), s0, s1),
             S.BlockRealize((), S.TRUE, S.Block("b", body=s0)), s0]
    for n in nodes:
        assert map_stmt_children(n, same) is n
    swap = lambda n: s1 if n is s0 else n  # noqa: E731
    loop = map_stmt_children(nodes[1], swap)
    assert loop.body is s1 and loop.kind == "unrolled" and loop.annotations == {"k": 1} and loop.loop_var is i
    cond = map_stmt_children(nodes[2], swap)
    assert cond.then_case is s1 and cond.else_case is None and cond.condition is nodes[2].condition
    seq = map_stmt_children(S.SeqStmt((s0, S.SeqStmt((s0,)))), swap)
    assert seq.seq[0] is s1 and isinstance(seq.seq[1], S.SeqStmt)  # nested sequences stay as they are
    blk = map_stmt_children(nodes[5], swap)
    assert blk.body is s1 and blk.init is s1 and blk.name == "b"
    assert map_stmt_children(S.Block("n", body=s0), swap).init is None
    order = []
    map_stmt_children(nodes[5], lambda n: order.append(n) or n)
    assert order == [s1, s0]  # the function sees children in ``stmt_children`` order


def test_visitor_passes_context_down_and_restores_it_for_siblings():
    f = from_source(NESTED)

    class Depths(StmtVisitor):
        def __init__(self):
            self.at = {}

        def visit_For(self, node, loops):
            self.visit(node.body, loops + (node.loop_var.name,))

        def visit_BlockRealize(self, node, loops):
            self.at[node.block.name] = loops
            self.generic_visit(node, loops)

    d = Depths()
    d.visit(f.body, ())
    assert d.at == {"root": (), "outer": ("i",), "inner": ("i", "j"), "low": ("i", "j2"), "high": ("i", "j2")}


def test_a_visitor_that_overrides_generic_visit_sees_every_kind_it_does_not_name():
    seen = []

    class Kinds(StmtVisitor):
        def generic_visit(self, node):
            seen.append(type(node).__name__)
            super().generic_visit(node)

        def visit_BufferStore(self, node):
            seen.append("store")

    Kinds().visit(S.SeqStmt((S.Allocate(A, store(0)), S.Evaluate(E.const(0)))))
    assert seen == ["SeqStmt", "Allocate", "store", "Evaluate"]


def test_mutator_rebuilds_only_the_changed_path_with_context():
    f = from_source(NESTED)

    class ZeroHigh(StmtMutator):  # store 0 in the "high" block, and count the stores it saw per branch
        def visit_Block(self, node, in_high):
            return self.generic_visit(node, in_high or node.name == "high")

        def visit_BufferStore(self, node, in_high):
            return node.replace(value=E.const(0.0)) if in_high else node

    new = ZeroHigh().visit(f.body, False)
    old_blocks = {r.block.name: r for r, _ in iter_block_realizes(f.body)}
    new_blocks = {r.block.name: r for r, _ in iter_block_realizes(new)}
    assert new_blocks["inner"] is old_blocks["inner"] and new_blocks["low"] is old_blocks["low"]
    assert new_blocks["high"] is not old_blocks["high"] and new_blocks["high"].block.body.value.value == 0.0
    assert ZeroHigh().visit(f.body, False) is not f.body
    assert StmtMutator().visit(f.body) is f.body


def test_functor_rejects_kinds_it_does_not_handle_and_names_them():
    class OnlyStores(StmtFunctor):
        def visit_BufferStore(self, node):
            return node.indices[0].value

    assert OnlyStores().visit(store(3)) == 3 and OnlyStores().visit(None) is None
    with pytest.raises(TypeError, match="OnlyStores cannot handle a SeqStmt"):
        OnlyStores().visit(S.SeqStmt(()))

    class Counted(StmtFunctor):
        def generic_visit(self, node):
            return "other"

        visit_For = staticmethod(lambda node: "loop")

    assert Counted().visit(S.For(E.Var("i"), 0, 2, "serial", store(0))) == "loop"
    assert Counted().visit(store(0)) == "other"


def test_dispatch_tables_belong_to_each_class():
    class Base(StmtVisitor):
        def __init__(self):
            self.log = []

        def visit_BufferStore(self, node):
            self.log.append("base")

    class Derived(Base):
        def visit_BufferStore(self, node):
            self.log.append("derived")

    b, d = Base(), Derived()
    for v in (b, d, b):
        v.visit(S.SeqStmt((store(0),)))
    assert b.log == ["base", "base"] and d.log == ["derived"]


def test_sequence_helpers():
    s0, s1, s2 = store(0), store(1), store(2)
    nested = S.SeqStmt((s0, S.SeqStmt((s1, S.SeqStmt((s2,))))))
    assert flatten_seq([nested]) == [s0, s1, s2] and flatten_seq([s0]) == [s0]
    assert seq_items(S.SeqStmt((s0, s1))) == [s0, s1] and seq_items(s0) == [s0]
    assert unwrap_seq(S.SeqStmt((S.SeqStmt((s1,)),))) is s1 and unwrap_seq(nested) is nested
    assert is_empty_stmt(None) and is_empty_stmt(S.SeqStmt(())) and not is_empty_stmt(s0)
    assert not is_empty_stmt(S.SeqStmt((S.SeqStmt(()),)))  # one (empty) statement is still a statement
    assert S.seq(s0, None, [s1, S.SeqStmt((s2,))]).seq == (s0, s1, s2)
    assert S.seq(s0) is s0 and S.seq().seq == ()
