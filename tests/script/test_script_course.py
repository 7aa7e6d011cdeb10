"""The course's TVMScript parses into the IR it means (structure checked node by node, and run on numpy)."""
from __future__ import annotations

import numpy as np
import pytest

import course_programs as cp
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.function import PrimFunc
from tunefarm.ir.module import IRModule
from tunefarm.ir.structural import assert_structural_equal
from tunefarm.script import T, from_source, ir_module


def loops_of(stmt):
    out = []
    while isinstance(stmt, S.For):
        out.append(stmt)
        stmt = stmt.body
    return out, stmt


# -----------------------------------------------------------------------------------------------------------
# mm_relu, in detail
# -----------------------------------------------------------------------------------------------------------
def test_mm_relu_structure():
    f = cp.mm_relu
    assert isinstance(cp.MyModule, IRModule) and list(cp.MyModule) == ["mm_relu"]
    assert [p.name for p in f.params] == ["A", "B", "C"]
    assert all(p.const_shape() == (128, 128) and p.dtype == "float32" for p in f.params)
    assert f.attrs == {"global_symbol": "mm_relu", "tir.noalias": True}
    root = f.root_block
    assert [b.name for b in root.alloc_buffers] == ["Y"]
    Y = root.alloc_buffers[0]
    first, second = root.body.seq
    loops, realize = loops_of(first)
    assert [l.loop_var.name for l in loops] == ["i", "j", "k"]
    assert [l.const_extent() for l in loops] == [128, 128, 128]
    assert all(l.kind == "serial" for l in loops)
    blk = realize.block
    assert blk.name == "Y" and [iv.iter_type for iv in blk.iter_vars] == ["S", "S", "R"]
    assert list(realize.iter_values) == [l.loop_var for l in loops]
    vi, vj, vk = (iv.var for iv in blk.iter_vars)
    assert isinstance(blk.init, S.BufferStore) and blk.init.buffer is Y
    assert isinstance(blk.init.value, E.FloatImm) and blk.init.value.value == 0.0
    body = blk.body
    assert body.buffer is Y and body.indices == (vi, vj)
    assert body.value.op == "+" and body.value.b.op == "*"
    assert [r.buffer.name for r in blk.reads] == ["A", "B"]
    assert blk.reads[0].region[0].min is vi and blk.reads[0].region[1].min is vk
    assert [r.buffer for r in blk.writes] == [Y]
    loops2, realize2 = loops_of(second)
    assert realize2.block.name == "C"
    relu = realize2.block.body.value
    assert isinstance(relu, E.Binary) and relu.op == "max" and relu.b.dtype == "float32"


def test_both_buffer_spellings_and_inferred_regions_give_the_same_program():
    @T.prim_func
    def new_spelling(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                     C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128))  # dtype defaults to float32
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = 0.0
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], 0.0)

    assert_structural_equal(new_spelling, cp.mm_relu)


def test_scalar_shape_in_old_spelling_and_int64_dims():
    f = cp.vector_add
    assert f.params[0].const_shape() == (128,)
    loops, realize = loops_of(f.root_block.body)
    assert loops[0].kind == "parallel"
    g = from_source("""
@T.prim_func
def add(x: T.Buffer[(1, T.int64(128)), "float32"], b: T.Buffer[T.int64(128), "float32"],
        out: T.Buffer[(1, T.int64(128)), "float32"]) -> None:
    for i0, i1 in T.grid(1, T.int64(128)):
        with T.block("T_add"):
            ax0 = T.axis.spatial(1, i0)
            ax1 = T.axis.spatial(T.int64(128), i1)
            out[ax0, ax1] = x[ax0, ax1] + b[ax1]
""")
    assert [d.dtype for d in g.params[0].shape] == ["int32", "int64"]
    assert g.params[1].shape[0].dtype == "int64"
    loops, realize = loops_of(g.root_block.body)
    assert [l.loop_var.dtype for l in loops] == ["int32", "int64"]
    assert [iv.var.dtype for iv in realize.block.iter_vars] == ["int32", "int64"]


def test_symbolic_dims_are_shared_variables():
    f = cp.linear0
    X, W, B, Z = f.params
    m, n = f.symbolic_vars()
    assert (m.name, n.name, m.dtype) == ("m", "n", "int64")
    assert X.shape[1] is m and W.shape == (n, m) and B.shape == (n,) and Z.shape[1] is n
    Y = f.root_block.alloc_buffers[0]
    assert Y.shape[1] is n
    loops, realize = loops_of(f.root_block.body.seq[0])
    assert loops[1].extent is n and loops[2].extent is m
    # the loop `k` shadows the (unused) symbolic `k`: the loop variable is a fresh int64 var
    assert loops[2].loop_var.name == "k" and loops[2].loop_var.dtype == "int64"
    assert cp.relu0.symbolic_vars()[0].name == "n"


def test_conv2d_reads_shifted_window():
    f = cp.conv2d_nchw
    loops, realize = loops_of(f.root_block.body)
    assert len(loops) == 7
    blk = realize.block
    assert "".join(iv.iter_type for iv in blk.iter_vars) == "SSSSRRR"
    xr = blk.reads[0]
    assert xr.buffer.name == "X"
    assert isinstance(xr.region[2].min, E.Binary) and xr.region[2].extent.value == 1


# -----------------------------------------------------------------------------------------------------------
# Python scope: closures, globals, nested functions, classes
# -----------------------------------------------------------------------------------------------------------
GLOBAL_N = 32
GLOBAL_SHAPE = (4, 8)


def test_closure_and_global_constants_resolve():
    n = 16
    scale = 0.5
    tag = "scaled"

    @T.prim_func
    def f(A: T.Buffer((n, GLOBAL_N), "float32"), B: T.Buffer(GLOBAL_SHAPE, "float32")):
        for i, j in T.grid(GLOBAL_SHAPE[0], GLOBAL_SHAPE[1]):
            with T.block(tag):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi * 2, vj + n] * scale

    assert f.params[0].const_shape() == (16, 32)
    assert f.params[1].const_shape() == (4, 8)
    loops, realize = loops_of(f.root_block.body)
    assert realize.block.name == "scaled"
    val = realize.block.body.value
    assert isinstance(val.b, E.FloatImm) and val.b.value == 0.5
    idx = val.a.indices
    assert idx[1].b.value == 16  # `vj + n`, n folded in as a literal


def test_class_inside_function_uses_enclosing_locals():
    size = 8

    @ir_module
    class Mod:
        @T.prim_func
        def copy(A: T.Buffer((size,), "float32"), B: T.Buffer((size,), "float32")):
            for i in range(size):
                with T.block("B"):
                    vi = T.axis.spatial(size, i)
                    B[vi] = A[vi]

        @T.prim_func(private=True)
        def twice(A: T.Buffer((size,), "float32"), B: T.Buffer((size,), "float32")):
            for i in range(size):
                with T.block("B"):
                    vi = T.axis.spatial(size, i)
                    B[vi] = A[vi] * T.float32(2)

    assert list(Mod) == ["copy", "twice"]
    assert Mod["copy"].params[0].const_shape() == (8,)
    assert isinstance(Mod["twice"], PrimFunc)


def test_docstrings_comments_and_return_annotation():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")) -> None:
        """A docstring is ignored."""
        # so are comments
        for i in range(4):
            A[i] = T.float32(1)  # trailing comment
        return

    loops, store = loops_of(f.root_block.body)
    assert isinstance(store, S.BufferStore)


# -----------------------------------------------------------------------------------------------------------
# constructs
# -----------------------------------------------------------------------------------------------------------
def test_expression_constructs():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((16,), "float32"), I: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.Select(vi % 2 == 0 and not vi > 10, T.exp(A[vi]), T.sqrt(A[vi // 2])) \
                + T.if_then_else(vi < 3 or vi >= 14, T.Cast("float32", I[vi]), T.min(A[vi], 1.0)) \
                + A[vi] / T.float32(3) - T.max(T.float32(0), T.tanh(A[vi])) + I[vi].astype("float32")
""")
    blk = f.root_block.body.body.block
    text = f.script()
    for piece in ("T.Select(", "T.exp(", "T.sqrt(", "vi // 2", "vi % 2 == 0 and not vi > 10", "T.Cast(",
                  "T.min(", "T.max(", "T.tanh(", "vi < 3 or vi >= 14", "/ T.float32(3)"):
        assert piece in text, piece
    assert [r.buffer.name for r in blk.reads] == ["A", "I"]
    # A is read at vi and vi // 2: the union is the whole dimension (not affine in vi)
    assert blk.reads[0].region[0].extent.value == 16


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                   "uint16", "uint32", "uint64", "bool"])
def test_typed_literals_of_every_dtype(dtype):
    value = "True" if dtype == "bool" else "3"
    f = from_source(f"""
@T.prim_func
def f(A: T.Buffer((1,), "{dtype}")):
    A[0] = T.{dtype}({value})
""")
    store = f.root_block.body
    assert store.value.dtype == dtype
    assert store.value.value == (1 if dtype == "bool" else 3)


def test_python_if_becomes_if_then_else_and_constant_if_is_static():
    flag = False

    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                if vi < 4:
                    A[vi] = T.float32(1)
                elif vi == 4:
                    A[vi] = T.float32(2)
                else:
                    A[vi] = T.float32(3)
                if flag:
                    A[vi] = T.float32(4)

    body = f.root_block.body.body.block.body
    assert isinstance(body, S.IfThenElse)
    assert isinstance(body.else_case, S.IfThenElse) and body.else_case.else_case is not None
    assert body.condition.op == "<"


def test_loop_kinds_annotations_where_block_attr_and_axis_ranges():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((130,), "float32")):
    for i0 in T.serial(5, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}):
        for i1 in T.unroll(2):
            for i2 in T.vectorized(4, 17):
                with T.block("A"):
                    vi = T.axis.spatial((2, 132), i0 * 26 + i1 * 13 + i2)
                    T.where(i0 * 26 + i1 * 13 + i2 < 130)
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    A[vi - 2] = T.float32(0)
""")
    loops, realize = loops_of(f.root_block.body)
    assert [l.kind for l in loops] == ["serial", "unrolled", "vectorized"]
    assert loops[0].annotations == {"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}
    assert loops[2].min.value == 4 and loops[2].extent.value == 13
    iv = realize.block.iter_vars[0]
    assert (iv.dom.min.value, iv.dom.extent.value) == (2, 130)
    assert realize.predicate.op == "<"
    assert realize.block.annotations == {"meta_schedule.tiling_structure": "SSRSRS"}


def test_local_scratch_buffer_and_explicit_regions_with_slices():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("row"):
            vi = T.axis.spatial(4, i)
            T.reads(A[vi, 0:128])
            T.writes(B[vi])
            acc = T.alloc_buffer((1,), "float32", scope="local")
            acc[0] = T.float32(0)
            for k in range(128):
                acc[0] = acc[0] + A[vi, k]
            B[vi] = acc[0]
""")
    blk = f.root_block.body.body.block
    assert blk.alloc_buffers[0].scope == "local"
    assert blk.reads[0].region[1].extent.value == 128
    # inference gives the same regions (the local buffer is not part of the interface)
    from tunefarm.ir.regions import infer_block_regions

    reads, writes = infer_block_regions(blk)
    assert [r.buffer.name for r in reads] == ["A"] and [r.buffer.name for r in writes] == ["B"]
    assert reads[0].region[1].min.value == 0 and reads[0].region[1].extent.value == 128


def test_evaluate_and_augmented_assignment():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    T.evaluate(0)
    for i in range(4):
        A[i] += T.float32(1)
""")
    ev, loop = f.root_block.body.seq
    assert isinstance(ev, S.Evaluate) and ev.value.value == 0
    store = loop.body
    assert store.value.op == "+" and isinstance(store.value.a, E.BufferLoad)


def test_pure_local_expression_binding_is_inlined():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in range(4):
        j = i * 2
        A[j + 1] = T.float32(0)
""")
    idx = f.root_block.body.body.indices[0]
    assert idx.op == "+" and idx.a.op == "*"


def test_explicit_root_block_is_the_root():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.block("root"):
        T.block_attr({"meta_schedule.parallel": 16})
        B = T.alloc_buffer((4,), "float32")
        for i in range(4):
            A[i] = T.float32(0)
""")
    root = f.root_block
    assert root.annotations == {"meta_schedule.parallel": 16}
    assert [b.name for b in root.alloc_buffers] == ["B"] and root.reads == () and root.writes == ()


def test_allocate_statement_for_lowered_programs():
    f = from_source("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    with T.allocate((4,), "float32", scope="local") as tmp:
        for i in range(4):
            tmp[i] = T.float32(1)
        for i in range(4):
            A[i] = tmp[i]
""")
    alloc = f.root_block.body
    assert isinstance(alloc, S.Allocate) and alloc.buffer.scope == "local"


# -----------------------------------------------------------------------------------------------------------
# the seed notes, exactly as written there
# -----------------------------------------------------------------------------------------------------------
def test_seed_000_my_module_prim_funcs_parse_as_written():
    scripts = cp.course_scripts("000")
    my_module = next(s for s in scripts if "class MyModule:" in s)
    assert "@tvm.script.ir_module" in my_module  # parsed as written
    mod = from_source(my_module)
    assert list(mod) == ["relu0", "linear0"]
    assert_structural_equal(mod["relu0"], cp.relu0)
    assert_structural_equal(mod["linear0"], cp.linear0)
    # TVM's own printout of linear0 (explicit T.reads/T.writes, default dtypes) is the same program as the
    # course source whose regions tunefarm inferred
    printed = next(s for s in scripts if "@I.ir_module" in s and "T.reads(X[vi, vk], W[vj, vk])" in s)
    assert_structural_equal(from_source(printed)["linear0"], cp.linear0)


def test_seed_004_mm_relu_printouts_parse_as_written():
    scripts = [s for s in cp.course_scripts("004") if "def mm_relu" in s]
    assert len(scripts) == 4  # original, split, reorder, reverse_compute_at
    mods = [from_source(s) for s in scripts]
    assert_structural_equal(mods[0], cp.MyModule)
    split = mods[1]["mm_relu"]
    loops, realize = loops_of(split.root_block.body.seq[0])
    assert [l.loop_var.name for l in loops] == ["i", "j_0", "j_1", "k"]
    assert [l.const_extent() for l in loops] == [128, 32, 4, 128]
    assert realize.iter_values[1].op == "+"  # vj = j_0 * 4 + j_1
    moved = mods[3]["mm_relu"]
    outer, inner = loops_of(moved.root_block.body)
    assert [l.loop_var.name for l in outer] == ["i", "j_0"]
    assert isinstance(inner, S.SeqStmt) and len(inner.seq) == 2


def test_every_complete_seed_script_parses_and_round_trips():
    count = 0
    for prefix in ("000", "001", "003", "004"):
        for code in cp.course_scripts(prefix):
            parsed = from_source(code) if ("class " in code or code.count("@T.prim_func") == 1) else None
            if parsed is None:
                continue
            again = from_source(parsed.script())
            assert_structural_equal(parsed, again)
            count += 1
    assert count >= 20


# -----------------------------------------------------------------------------------------------------------
# the course programs compute what numpy computes (checked with the reference interpreter)
# -----------------------------------------------------------------------------------------------------------
SMALL = ["vector_add", "my_add", "relu0", "linear0", "dense_bias_relu", "conv2d_nchw", "before_inline",
         "before_fuse"]
SYMBOLIC_SHAPES = {"relu0": [(1, 16), (1, 16)], "linear0": [(1, 8), (16, 8), (16,), (1, 16)]}


@pytest.mark.parametrize("name", SMALL)
def test_course_program_matches_numpy(name):
    from tunefarm.reference import interpret

    f = cp.PRIM_FUNCS[name]
    rng = np.random.default_rng(0)
    shapes = SYMBOLIC_SHAPES.get(name) or [p.const_shape() for p in f.params]
    arrays = []
    for shape, p in zip(shapes, f.params):
        if p.dtype.startswith("float"):
            arrays.append(rng.standard_normal(shape).astype(p.dtype))
        else:
            arrays.append(rng.integers(-50, 50, shape).astype(p.dtype))
    out = np.zeros_like(arrays[-1])
    interpret(f, *arrays[:-1], out)
    np.testing.assert_allclose(out, cp.REFERENCES[name](*arrays[:-1]), rtol=1e-4, atol=1e-4)
