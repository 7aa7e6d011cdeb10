"""The generic visitors and rewriters of ``ir.functor``: dispatch, order, sharing, substitution, collections."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import course_programs as cp
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.functor import (IRMutator, IRVisitor, binary, collect_buffer_accesses, collect_vars,
                                 post_order_visit, rebuild, substitute, uses_var)
from tunefarm.ir.structural import structural_equal


def test_visitor_dispatches_on_the_class_name_and_walks_fields_in_order():
    i, j = E.Var("i"), E.Var("j")
    A = Buffer("A", (4, 4))
    e = E.Binary("+", E.Binary("*", i, E.const(2)), E.BufferLoad(A, (j, i)))
    seen = []

    class Names(IRVisitor):
        def visit_Var(self, node):
            seen.append(node.name)

        def visit_IntImm(self, node):
            seen.append(node.value)

    Names().visit(e)
    assert seen == ["i", 2, "j", "i"]  # left before right, loads through their indices
    assert Names().visit(None) is None


def test_each_visitor_class_has_its_own_dispatch():
    i = E.Var("i")

    class A(IRVisitor):
        def __init__(self):
            self.n = 0

        def visit_Var(self, node):
            self.n += 1

    class B(A):
        def visit_Var(self, node):
            self.n += 10

    class C(A):
        visit_Var = staticmethod(lambda node: None)  # not a plain function: bound on each call

    a, b, c = A(), B(), C()
    for v in (a, b, c, a):
        v.visit(i + i)
    assert (a.n, b.n, c.n) == (4, 20, 0)


def test_mutator_returns_the_same_node_when_nothing_changes_and_shares_untouched_subtrees():
    f = cp.mm_relu

    class Nothing(IRMutator):
        pass

    assert Nothing().visit(f.body) is f.body
    target = f.root_block.body.seq[1]  # the "C" nest

    class RenameC(IRMutator):
        def visit_Block(self, node):
            node = self.generic_visit(node)
            return node.replace(name="D") if node.name == "C" else node

    new = RenameC().visit(f.body)
    first, second = new.block.body.seq
    assert first is f.root_block.body.seq[0]  # the untouched nest is the very same object
    assert second is not target and second.body.body.block.name == "D"
    assert second.loop_var is target.loop_var and second.body.loop_var is target.body.loop_var


def test_rebuilding_an_expression_folds_constants():
    i = E.Var("i")

    class IToTwo(IRMutator):
        def visit_Var(self, node):
            return E.const(2) if node is i else node

    assert IToTwo().visit(i * 3 + 1).value == 7
    assert IToTwo().visit(E.cast("float32", i)).value == 2.0
    sel = IToTwo().visit(E.select(i < 3, i, 9))  # comparisons are built, not decided (``simplify`` does that)
    assert isinstance(sel, E.Select) and sel.true_value.value == 2 and sel.cond.a.value == 2
    assert IToTwo().visit(E.min_(i, 5) + E.max_(i, 1)).value == 4
    assert binary("max", E.const(3), E.const(5)).value == 5 and binary("<", E.const(3), E.const(5)).op == "<"
    assert rebuild(i + 1, {"a": E.const(4)}).value == 5
    with pytest.raises(TypeError, match="cannot rebuild Var"):
        rebuild(i, {"x": 1})


def test_substitute_replaces_variables_everywhere_and_folds():
    i, j = E.Var("i"), E.Var("j")
    assert substitute(i * 4 + j, {i: E.const(2), j: E.const(1)}).value == 9
    e = i * 4 + j
    assert substitute(e, {}) is e and substitute(e, {E.Var("other"): E.const(0)}) is e
    f = cp.mm_relu
    loops = [n for n in _nodes(f.body) if isinstance(n, S.For)]
    k = next(lp.loop_var for lp in loops if lp.loop_var.name == "k")
    new = substitute(f.body, {k: E.const(0, k.dtype)})
    realize = [n for n in _nodes(new) if isinstance(n, S.BlockRealize) and n.block.name == "Y"][0]
    assert realize.iter_values[2].value == 0  # the binding of vk
    assert k not in collect_vars(new) and k in collect_vars(f.body)


def test_substitute_replaces_buffers_in_loads_stores_regions_and_allocations():
    f = cp.mm_relu
    Y = f.root_block.alloc_buffers[0]
    Z = Buffer("Z", Y.shape, Y.dtype, "local")
    new = substitute(f.body, {}, {Y: Z})
    assert new.block.alloc_buffers == (Z,)
    reads, writes = collect_buffer_accesses(new)
    assert Z in reads and Z in writes and Y not in reads + writes
    blocks = {n.name: n for n in _nodes(new) if isinstance(n, S.Block)}
    assert [w.buffer for w in blocks["Y"].writes] == [Z] and [r.buffer for r in blocks["C"].reads] == [Z]
    body = S.Allocate(Y, S.BufferStore(Y, E.const(1.0), (E.const(0), E.const(0))))
    moved = substitute(body, {}, {Y: Z})
    assert moved.buffer is Z and moved.body.buffer is Z


def test_post_order_visits_children_first():
    i, j = E.Var("i"), E.Var("j")
    order = []
    post_order_visit(i * 2 + j, lambda n: order.append(repr(n)))
    assert order == ["i", "2", "i * 2", "j", "i * 2 + j"]


def test_collect_vars_uses_and_first_use_order():
    i, j, k = E.Var("i"), E.Var("j"), E.Var("k")
    assert collect_vars(j * i + j + k) == [j, i, k]
    assert uses_var(i * 2 + 1, {i}) and not uses_var(i * 2 + 1, {j})
    assert uses_var(E.select(j < 1, E.cast("float32", k), E.const(1.0)), {k})
    assert uses_var(E.call("exp", E.cast("float32", i)), {i})
    store = S.BufferStore(Buffer("A", (4,)), E.const(0.0), (k,))
    assert uses_var(store, {k}) and not uses_var(store, {i})


def test_collect_buffer_accesses_reads_bodies_of_nested_blocks_in_first_use_order():
    f = cp.mm_relu
    reads, writes = collect_buffer_accesses(f.body)
    names = lambda bufs: [b.name for b in bufs]  # noqa: E731
    assert names(reads) == ["Y", "A", "B"] and names(writes) == ["Y", "C"]
    c_nest = f.root_block.body.seq[1]
    assert names(collect_buffer_accesses(c_nest)[0]) == ["Y"]
    assert collect_buffer_accesses(None) == ([], [])


def test_an_unknown_node_kind_goes_through_the_generic_visit():
    x = E.Var("x", "float32")
    store = S.Evaluate(E.call("exp", x))
    seen = []

    class Calls(IRVisitor):
        def visit_Call(self, node):
            seen.append(node.op)
            self.generic_visit(node)

        def visit_Var(self, node):
            seen.append(node.name)

    Calls().visit(S.IfThenElse(x > 0.0, store, None))
    assert seen == ["x", "exp", "x"]


def _nodes(root) -> list:
    out = []
    post_order_visit(root, out.append)
    return out


def test_structural_equality_of_substituted_copies():
    f = cp.mm_relu
    loops = [n for n in _nodes(f.body) if isinstance(n, S.For)]
    renamed = {lp.loop_var: lp.loop_var.copy_with_name("q") for lp in loops}
    again = substitute(f.body, renamed)
    assert again is not f.body and structural_equal(again, f.body)


class _PlainSubstitute(IRMutator):
    """Substitution by the generic mutator alone: what ``substitute``'s direct recursion must agree with."""

    def __init__(self, vmap, bmap):
        self.vmap, self.bmap = vmap, bmap

    def visit_Var(self, node):
        return self.vmap.get(node, node)

    def visit_BufferLoad(self, node):
        idx = self._visit_child(node.indices)
        buf = self.bmap.get(node.buffer, node.buffer)
        return node if idx is node.indices and buf is node.buffer else E.BufferLoad(buf, idx)


_V = [E.Var("a"), E.Var("b"), E.Var("c")]
_BUF, _OTHER = Buffer("P", (8, 8)), Buffer("Q", (8, 8))


def _random_exprs():
    leaves = st.one_of(st.sampled_from(_V), st.integers(-3, 3).map(E.const))

    def grow(sub):
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "//", "%", "min", "<"]), sub, sub).map(lambda t: E.Binary(*t)),
            st.tuples(sub, sub).map(lambda t: E.cast("int32", E.BufferLoad(_BUF, t))),
            st.tuples(sub, sub, sub).map(lambda t: E.Select(E.Binary("<", t[0], t[1]), t[1], t[2])),
            sub.map(lambda e: E.Not(E.Binary("==", e, E.const(0)))))

    return st.recursive(leaves, grow, max_leaves=10)


@settings(max_examples=200, deadline=None, database=None)
@given(_random_exprs(), st.dictionaries(st.sampled_from(_V), _random_exprs(), max_size=2), st.booleans())
def test_fast_paths_agree_with_the_generic_visitors(e, vmap, swap_buffer):
    bmap = {_BUF: _OTHER} if swap_buffer else {}
    fast, plain = substitute(e, vmap, bmap), _PlainSubstitute(vmap, bmap).visit(e)
    assert structural_equal(fast, plain, map_free_vars=False), (e, vmap)
    if not vmap and not bmap:
        assert fast is e
    for chosen in ({_V[0]}, {_V[1], _V[2]}):
        found = []
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, E.Var) and n in chosen else None)
        assert uses_var(e, chosen) == bool(found)
    store = S.BufferStore(_OTHER, E.cast("float32", e), (E.const(0), E.const(1)))
    loads = []
    post_order_visit(e, lambda n: loads.append(n) if isinstance(n, E.BufferLoad) else None)
    assert collect_buffer_accesses(store) == ([_BUF] if loads else [], [_OTHER])
