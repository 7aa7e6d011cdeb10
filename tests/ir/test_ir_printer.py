"""The TVMScript printer: what it writes for each statement kind, and that the script parser reads it back to
the same program (IR built here by hand, so the printer sees forms no front end produces)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.module import IRModule
from tunefarm.ir.printer import stmt_to_str
from tunefarm.ir.structural import assert_structural_equal, structural_equal
from tunefarm.script import from_source


def round_trip(node):
    """Print, parse, compare; the reprint is the same text (the printed form is a fixed point)."""
    text = node.script()
    back = from_source(text)
    assert_structural_equal(back, node)
    assert back.script() == text
    return text


def loop_kinds_and_conditions() -> PrimFunc:
    A, B = Buffer("A", (4, 8)), Buffer("B", (4, 8))
    L = Buffer("L", (8,), "float32", "local")
    i, j, t = E.Var("i"), E.Var("i"), E.Var("T")  # two loops named i, and a loop named like the namespace
    elif_chain = S.IfThenElse(E.compare("<", j, 4), S.BufferStore(B, E.BufferLoad(A, (i, j)) + E.BufferLoad(L, (j,)),
                                                                  (i, j)),
                              S.IfThenElse(E.compare("<", j, 6), S.BufferStore(B, E.const(1.0), (i, j)),
                                           S.BufferStore(B, E.const(2.0), (i, j))))
    body = S.For(i, 0, 4, "parallel", S.For(j, 0, 8, "vectorized", elif_chain), {"pragma_auto_unroll_max_step": 16})
    return PrimFunc([A, B], wrap_root(S.For(t, 0, 2, "unrolled", body), [L]), {"global_symbol": "f"}, "f")


def test_loop_kinds_annotations_conditions_and_clashing_names():
    text = round_trip(loop_kinds_and_conditions())
    assert 'L = T.alloc_buffer((8,), "float32", scope="local")' in text
    assert "for T_ in T.unroll(2):" in text  # ``T`` is the namespace: the loop variable is renamed
    assert 'for i in T.parallel(4, annotations={"pragma_auto_unroll_max_step": 16}):' in text
    assert "for i_1 in T.vectorized(8):" in text  # the second ``i`` gets a fresh name
    assert "if i_1 < 4:" in text and "elif i_1 < 6:" in text and "else:" in text
    assert 'T.func_attr({"global_symbol": "f"})' in text


def symbolic_function() -> PrimFunc:
    n = E.Var("n", "int64")
    A, B = Buffer("A", (n, 8)), Buffer("B", (n, 8))
    i, j, vi, vj = E.Var("i", "int64"), E.Var("j", "int64"), E.Var("vi", "int64"), E.Var("vj", "int64")
    zero = E.const(0, "int64")
    blk = S.Block("b", [S.IterVar(vi, S.Range(zero, n), "S"), S.IterVar(vj, S.Range(zero, E.const(4, "int64")), "S")],
                  (), (), S.BufferStore(B, E.select(E.compare("<", vj, 2), E.call("exp", E.BufferLoad(A, (vi, vj))),
                                                    E.const(float("nan"))), (vi, vj)),
                  annotations={"meta_schedule.tag": 1})
    nest = S.For(i, zero, n, "serial", S.For(j, zero, E.const(8, "int64"), "serial",
                                              S.BlockRealize([i, E.floordiv(j, 2)], E.compare("<", j, 7), blk)))
    tmp = Buffer("tmp", (8,), "float32", "local")
    alloc = S.Allocate(tmp, S.BufferStore(tmp, E.const(float("inf")), (E.const(0),)))
    empty = S.For(E.Var("x"), 0, 0, "serial", S.SeqStmt(()))
    return PrimFunc([A, B], wrap_root(S.seq(nest, S.Evaluate(E.const(0)), alloc, empty)), {}, "g")


def test_symbolic_shapes_bindings_predicates_allocations_and_special_floats():
    text = round_trip(symbolic_function())
    lines = [ln.strip() for ln in text.splitlines()]
    assert "def g(var_A: T.handle, var_B: T.handle):" in lines and "n = T.int64()" in lines
    assert 'A = T.match_buffer(var_A, (n, 8), "float32")' in lines
    assert "for i, j in T.grid(n, T.int64(8)):" in lines
    assert "vi = T.axis.spatial(n, i)" in lines and "vj = T.axis.spatial(T.int64(4), j // 2)" in lines
    assert "T.where(j < 7)" in lines and 'T.block_attr({"meta_schedule.tag": 1})' in lines
    assert 'B[vi, vj] = T.Select(vj < 2, T.exp(A[vi, vj]), T.float32("nan"))' in lines
    assert "T.evaluate(0)" in lines
    assert 'with T.allocate((8,), "float32", scope="local") as tmp:' in lines
    assert 'tmp[0] = T.float32("inf")' in lines
    assert lines[-2:] == ["for x in range(0):", "pass"]


def test_grids_collapse_only_independent_loops_and_remap_only_plain_bindings():
    A = Buffer("A", (4, 4))
    i, j, vi, vj = E.Var("i"), E.Var("j"), E.Var("vi"), E.Var("vj")
    tri = PrimFunc([A], wrap_root(S.For(i, 0, 4, "serial", S.For(j, 0, i, "serial",
                                                                 S.BufferStore(A, E.const(1.0), (i, j))))), {}, "tri")
    text = round_trip(tri)
    assert "for i in range(4):" in text and "for j in range(i):" in text and "T.grid" not in text
    ivs = [S.IterVar(vi, S.Range.from_extent(4), "S"), S.IterVar(vj, S.Range.from_extent(4), "R")]
    blk = S.Block("b", ivs, (), (), S.BufferStore(A, E.const(2.0), (vi, vj)))
    plain = S.For(i, 0, 4, "serial", S.For(j, 0, 4, "serial", S.BlockRealize([i, j], S.TRUE, blk)))
    text = round_trip(PrimFunc([A], wrap_root(plain), {}, "g"))
    assert "for i, j in T.grid(4, 4):" in text and 'vi, vj = T.axis.remap("SR", [i, j])' in text
    swapped = S.For(i, 0, 4, "serial", S.For(j, 0, 4, "serial", S.BlockRealize([j, i * 1 + 0], S.TRUE, blk)))
    assert 'vi, vj = T.axis.remap("SR", [j, i])' in round_trip(PrimFunc([A], wrap_root(swapped), {}, "h"))
    halved = S.For(i, 0, 4, "serial", S.For(j, 0, 8, "serial", S.BlockRealize([i, j // 2], S.TRUE, blk)))
    text = round_trip(PrimFunc([A], wrap_root(halved), {}, "k"))
    assert "T.axis.remap" not in text  # a binding that is not a loop of the axis' own range
    assert "vi = T.axis.spatial(4, i)" in text and "vj = T.axis.reduce(4, j // 2)" in text


def test_int64_loops_and_casts():
    A = Buffer("A", (4, 4))
    k = E.Var("k", "int64")
    f = PrimFunc([A], wrap_root(S.For(k, E.const(0, "int64"), E.const(4, "int64"), "serial",
                                      S.BufferStore(A, E.const(0.0), (E.cast("int32", k), E.const(0))))), {}, "c")
    text = round_trip(f)
    assert "for k in range(T.int64(4)):" in text and 'A[T.Cast("int32", k), 0] = T.float32(0)' in text


def test_modules_print_every_function_and_parse_back():
    mod = IRModule({"f": loop_kinds_and_conditions(), "g": symbolic_function()})
    text = mod.script()
    assert text.startswith("# from tunefarm.script import I, T, ir_module\n\n@ir_module\nclass Module:")
    back = from_source(text)
    assert isinstance(back, IRModule) and list(back) == ["f", "g"]
    assert structural_equal(back, mod) and back.script() == text


def test_loose_nodes_print_on_their_own():
    A = Buffer("A", (4, 4))
    i, vi, n = E.Var("i"), E.Var("vi"), E.Var("n")
    assert stmt_to_str(S.Range(1, n)) == "Range(1, n)"
    assert stmt_to_str(S.IterVar(vi, S.Range.from_extent(4), "R")) == "IterVar(vi, R, [0, +4))"
    assert stmt_to_str(S.BufferRegion.point(A, [i, vi])) == "A[i, vi]"
    assert stmt_to_str(S.BufferRegion.full(A)) == "A[0:4, 0:4]"
    assert repr(S.BufferStore(A, E.const(1.0), (i, i))) == "A[i, i] = T.float32(1)"
    assert repr(S.SeqStmt(())) == "pass"
    assert repr(A) == "Buffer(A, (4, 4), 'float32')" and repr(A.with_scope("local")).endswith("'local')")


def test_an_unknown_statement_kind_is_refused_by_name():
    class Barrier(S.Stmt):
        __slots__ = ()

    with pytest.raises(TypeError, match="cannot print Barrier"):
        stmt_to_str(S.SeqStmt((Barrier(),)))


def random_bodies():
    """Loop nests over one buffer: loops of every kind (sharing names), conditions, sequences, stores."""
    out = Buffer("O", (6, 6))
    names = st.sampled_from(["i", "j", "k"])

    @st.composite
    def nest(draw, depth=0, loops=()):
        choices = ["store"] + (["for", "for", "if", "seq"] if depth < 4 else [])
        kind = draw(st.sampled_from(choices))
        if kind == "store" or not loops and kind == "if":
            idx = [draw(st.sampled_from(loops)) if loops else E.const(draw(st.integers(0, 5))) for _ in range(2)]
            val = draw(st.sampled_from([E.const(1.0), E.BufferLoad(out, idx) * 2.0, E.cast("float32", idx[0])]))
            return S.BufferStore(out, val, idx)
        if kind == "for":
            var = E.Var(draw(names))
            extent = draw(st.integers(0, 6))
            return S.For(var, 0, extent, draw(st.sampled_from(["serial", "parallel", "vectorized", "unrolled"])),
                         draw(nest(depth + 1, loops + (var,))))
        if kind == "if":
            cond = E.compare(draw(st.sampled_from(["<", ">=", "=="])), draw(st.sampled_from(loops)), 3)
            other = draw(st.one_of(st.none(), nest(depth + 1, loops)))
            return S.IfThenElse(cond, draw(nest(depth + 1, loops)), other)
        return S.SeqStmt(tuple(draw(nest(depth + 1, loops)) for _ in range(draw(st.integers(2, 3)))))

    return nest().map(lambda body: PrimFunc([out], wrap_root(body), {}, "rand"))


@settings(max_examples=80, deadline=None, database=None)
@given(random_bodies())
def test_any_loop_nest_prints_to_a_script_that_parses_back_to_it(f):
    round_trip(f)
