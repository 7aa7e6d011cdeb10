"""infer_block_regions: the regions a block touches, in its own iteration variables."""
from __future__ import annotations

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.arith import simplify
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.regions import infer_block_regions
from tunefarm.script import from_source


def block_of(text: str, name: str) -> S.Block:
    f = from_source(text)
    from tunefarm.schedule.tree import find_block

    return find_block(f, name)[-1].block


def ranges(region: S.BufferRegion):
    out = []
    for r in region.region:
        lo = simplify(r.min)
        out.append((lo.value if isinstance(lo, E.IntImm) else str(lo), r.extent.value if isinstance(r.extent, E.IntImm)
                    else str(r.extent)))
    return out


def test_reduction_excludes_written_buffer_from_reads():
    i, j, k = E.Var("vi"), E.Var("vj"), E.Var("vk")
    A = Buffer("A", (8, 8))
    B = Buffer("B", (8, 8))
    Y = Buffer("Y", (8, 8))
    upd = S.BufferStore(Y, E.Binary("+", E.BufferLoad(Y, (i, j)),
                                    E.Binary("*", E.BufferLoad(A, (i, k)), E.BufferLoad(B, (k, j)))), (i, j))
    ivs = [S.IterVar(v, S.Range.from_extent(8), t) for v, t in ((i, "S"), (j, "S"), (k, "R"))]
    blk = S.Block("Y", ivs, (), (), upd, S.BufferStore(Y, E.FloatImm(0.0), (i, j)))
    reads, writes = infer_block_regions(blk)
    assert [r.buffer for r in reads] == [A, B]
    assert reads[0].region[0].min is i and reads[0].region[1].min is k
    assert all(r.extent.value == 1 for r in reads[0].region)
    assert [r.buffer for r in writes] == [Y]
    # without init (after decompose_reduction) the update reads Y too
    reads2, _ = infer_block_regions(blk.replace(init=None))
    assert [r.buffer for r in reads2] == [Y, A, B]


def test_loops_inside_the_block_are_relaxed():
    blk = block_of("""
@T.prim_func
def f(A: T.Buffer((16, 128), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        with T.block("outer"):
            vi = T.axis.spatial(4, i)
            for k0, k1 in T.grid(8, 4):
                B[vi * 4 + k1] = B[vi * 4 + k1] + A[vi * 4 + k1, k0 * 16 + 3]
""", "outer")
    (rb, ra), (wb,) = blk.reads, blk.writes
    assert ra.buffer.name == "A" and rb.buffer.name == "B"
    assert ranges(ra) == [("vi * 4", 4), (3, 113)]
    assert ranges(wb) == [("vi * 4", 4)]


def test_nested_blocks_contribute_their_declared_regions_relaxed_over_loops():
    blk = block_of("""
@T.prim_func
def f(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for o in range(8):
        with T.block("outer"):
            vo = T.axis.spatial(8, o)
            for i in range(8):
                with T.block("inner"):
                    vi = T.axis.spatial(64, vo * 8 + i)
                    T.reads(A[vi])
                    T.writes(C[vi])
                    C[vi] = A[vi] * T.float32(2)
""", "outer")
    assert ranges(blk.reads[0]) == [("vo * 8", 8)]
    assert ranges(blk.writes[0]) == [("vo * 8", 8)]


def test_accesses_are_joined_exactly_or_widened_to_the_whole_dimension():
    blk = block_of("""
@T.prim_func
def f(A: T.Buffer((34,), "float32"), D: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("stencil"):
            vi = T.axis.spatial(32, i)
            C[vi] = A[vi] + A[vi + 1] + A[vi + 2] + D[vi] + D[vi // 2]
""", "stencil")
    ra, rd = blk.reads
    assert ranges(ra) == [("vi", 3)]
    assert ranges(rd) == [(0, 32)]  # vi and vi // 2 differ by no constant: whole dimension


def test_block_local_allocations_are_not_part_of_the_interface():
    i = E.Var("vi")
    A = Buffer("A", (4,))
    B = Buffer("B", (4,))
    acc = Buffer("acc", (1,), "float32", "local")
    tmp = Buffer("tmp", (1,), "float32", "local")
    body = S.seq(S.BufferStore(acc, E.BufferLoad(A, (i,)), (E.IntImm(0),)),
                 S.Allocate(tmp, S.BufferStore(tmp, E.BufferLoad(acc, (E.IntImm(0),)), (E.IntImm(0),))),
                 S.BufferStore(B, E.BufferLoad(acc, (E.IntImm(0),)), (i,)))
    blk = S.Block("b", [S.IterVar(i, S.Range.from_extent(4), "S")], (), (), body, None, [acc])
    reads, writes = infer_block_regions(blk)
    assert [r.buffer for r in reads] == [A] and [r.buffer for r in writes] == [B]


def test_symbolic_extents_and_non_affine_fallbacks():
    n = E.Var("n", "int64")
    A = Buffer("A", (n,))
    B = Buffer("B", (n,))
    k = E.Var("k", "int64")
    vi = E.Var("vi", "int64")
    # a loop over the whole symbolic extent inside the block
    body = S.For(k, E.IntImm(0, "int64"), n, "serial",
                 S.BufferStore(B, E.BufferLoad(A, (k,)), (E.Binary("%", E.Binary("*", vi, k), n),)))
    blk = S.Block("b", [S.IterVar(vi, S.Range(E.IntImm(0, "int64"), n), "S")], (), (), body)
    (ra,), (wb,) = infer_block_regions(blk)
    assert ra.region[0].min.value == 0 and ra.region[0].extent is n
    assert wb.region[0].min.value == 0 and wb.region[0].extent is n  # (vi * k) % n: whole dimension
    assert ra.region[0].min.dtype == "int64"


def test_non_affine_index_over_constant_loops_uses_bounds():
    blk = block_of("""
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((8,), "float32")):
    for o in range(8):
        with T.block("b"):
            vo = T.axis.spatial(8, o)
            for i in range(16):
                B[vo] = B[vo] + A[i // 2 + 40]
""", "b")
    (rb, ra) = blk.reads
    assert ranges(ra) == [(40, 8)]


def test_the_parser_uses_the_same_inference():
    text = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""
    blk = block_of(text, "sum")
    reads, writes = infer_block_regions(blk)
    assert [r.buffer.name for r in blk.reads] == [r.buffer.name for r in reads] == ["A"]
    assert [r.buffer.name for r in blk.writes] == ["B"]
