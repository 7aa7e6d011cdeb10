"""The IR's containers: buffers, statement nodes and their checks, PrimFunc, IRModule, the node cache and the
metadata encoding of bound arrays."""
from __future__ import annotations

import base64

import numpy as np
import pytest

from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.memo import NodeCache
from tunefarm.ir.metadata import decode_array, encode_array, metadata_lines
from tunefarm.ir.module import IRModule


def test_buffer_shapes_types_and_scopes():
    n, m = E.Var("n", "int64"), E.Var("m", "int64")
    b = Buffer("X", (n, 4, m * 2, n), "float16")
    assert b.ndim == 4 and b.itemsize == 2 and b.scope == "global"
    assert b.const_shape() is None and b.symbolic_vars() == [n, m]  # first-use order, no repeats
    c = Buffer("C", (2, 3), "int8")
    assert c.const_shape() == (2, 3) and all(s.dtype == "int32" for s in c.shape) and c.symbolic_vars() == []
    local = c.with_scope("local", "C_local")
    assert local is not c and local.scope == "local" and local.name == "C_local" and local.shape == c.shape
    with pytest.raises(ValueError, match="buffer 'Y': unknown scope 'texture'; use one of"):
        Buffer("Y", (4,), scope="texture")  # a GPU scope: the CPU target has global and local
    with pytest.raises(TypeError, match="unsupported dtype 'int4'"):
        Buffer("Y", (4,), "int4")


def test_buffer_indexing_builds_loads_and_checks_the_rank():
    b = Buffer("X", (4, 8))
    i = E.Var("i")
    ld = b[i, 3]
    assert isinstance(ld, E.BufferLoad) and ld.buffer is b and ld.indices[0] is i and ld.indices[1].value == 3
    assert ld.dtype == "float32" and b.vload([i, 0]).indices[1].value == 0
    with pytest.raises(IndexError, match="buffer X has 2 dimensions, indexed with 1"):
        b[i]


def test_statement_constructors_check_their_arguments():
    i = E.Var("i")
    body = S.SeqStmt(())
    with pytest.raises(ValueError, match="loop kind must be one of"):
        S.For(i, 0, 4, "tiled", body)
    with pytest.raises(ValueError, match="iteration type must be 'S' or 'R', got 'X'"):
        S.IterVar(i, S.Range.from_extent(4), "X")
    blk = S.Block("b", [S.IterVar(E.Var("v"), S.Range.from_extent(4), "S")])
    with pytest.raises(ValueError, match="block 'b': 1 iteration variables but 0 bindings"):
        S.BlockRealize((), S.TRUE, blk)
    loop = S.For(E.Var("k", "int64"), 0, 4, "serial", body)
    assert loop.min.dtype == loop.extent.dtype == "int64"  # literals take the loop variable's type
    assert loop.const_extent() == 4 and S.For(i, 0, E.Var("n"), "serial", body).const_extent() is None
    assert S.BlockRealize((), True, S.Block("c")).predicate.dtype == "bool"


def test_blocks_default_to_an_empty_body_and_know_if_they_reduce():
    v, r = E.Var("v"), E.Var("r")
    blk = S.Block("b", [S.IterVar(v, S.Range.from_extent(4), "S")])
    assert isinstance(blk.body, S.SeqStmt) and blk.body.seq == () and blk.init is None
    assert not blk.is_reduction and blk.annotations == {} and blk.alloc_buffers == ()
    red = S.Block("r", [S.IterVar(v, S.Range.from_extent(4), "S"), S.IterVar(r, S.Range.from_extent(8), "R")])
    assert red.is_reduction


def test_replace_copies_with_changes_and_rejects_unknown_fields():
    i = E.Var("i")
    s0 = S.BufferStore(Buffer("A", (4,)), E.const(0.0), (i,))
    loop = S.For(i, 0, 4, "serial", s0, {"a": 1})
    par = loop.replace(kind="parallel")
    assert par is not loop and par.kind == "parallel" and loop.kind == "serial"
    assert par.body is s0 and par.loop_var is i and par.annotations == {"a": 1}
    with pytest.raises(TypeError, match=r"For has no fields \['bogus'\]"):
        loop.replace(bogus=1)


def test_ranges_and_regions():
    r = S.Range.from_extent(E.const(8, "int64"))
    assert r.min.dtype == "int64" and r.min.value == 0 and r.extent.value == 8
    assert S.Range(2, 5).extent.value == 5 and S.Range(E.const(1, "int64"), 3).extent.dtype == "int64"
    A = Buffer("A", (4, E.Var("n")))
    full = S.BufferRegion.full(A)
    assert [(x.min.value, x.extent) for x in full.region] == [(0, A.shape[0]), (0, A.shape[1])]
    i = E.Var("i")
    pt = S.BufferRegion.point(A, [i, E.const(2)])
    assert pt.region[0].min is i and all(x.extent.value == 1 for x in pt.region)


def test_primfunc_parameters_root_block_and_copies():
    n = E.Var("n")
    A, B = Buffer("A", (n, 4)), Buffer("B", (n, E.Var("m")))
    body = wrap_root(S.SeqStmt(()), [Buffer("T", (4,))])
    f = PrimFunc([A, B], body, {"global_symbol": "f", "tir.noalias": True}, "f")
    assert f.root_block.name == "root" and [b.name for b in f.root_block.alloc_buffers] == ["T"]
    assert [v.name for v in f.symbolic_vars()] == ["n", "m"]
    g = f.with_name("g")
    assert g.name == "g" and g.attrs["global_symbol"] == "g" and f.attrs["global_symbol"] == "f"
    assert PrimFunc([A], body).with_name("h").attrs == {}  # no global_symbol to keep in sync
    h = f.with_body(S.SeqStmt(()))
    assert h.params == f.params and h.attrs == f.attrs and h.name == "f" and h.body is not f.body
    with pytest.raises(ValueError, match="function 'f' has no root block"):
        h.root_block
    with pytest.raises(TypeError, match="PrimFunc parameters must be Buffers, got Var"):
        PrimFunc([n], body)


def test_module_is_an_ordered_read_only_mapping_of_functions():
    f = PrimFunc([Buffer("A", (4,))], wrap_root(S.SeqStmt(())), {}, "f")
    mod = IRModule({"b": f, "a": f.with_name("a"), "graph": object()}, {"k": 1})
    assert list(mod) == ["b", "a", "graph"] and len(mod) == 3 and "a" in mod and "zz" not in mod
    assert list(mod.prim_funcs()) == ["b", "a"]
    with pytest.raises(KeyError, match=r"module has no function 'zz'; it has \['b', 'a', 'graph'\]"):
        mod["zz"]
    more = mod.with_function("c", f)
    assert list(more) == ["b", "a", "graph", "c"] and "c" not in mod and more.attrs == {"k": 1}
    less = mod.without("a")
    assert list(less) == ["b", "graph"] and list(mod) == ["b", "a", "graph"]
    assert mod == mod and mod != IRModule(mod.functions) and len({mod, more}) == 2  # identity, like nodes


def test_node_cache_keeps_two_generations_and_promotes_hits():
    cache = NodeCache("test", max_entries=2)
    keys = [object() for _ in range(5)]
    cache.put(keys[0], "a")
    cache.put(keys[1], "b")
    cache.put(keys[2], "c")  # the young generation was full: it became the old one
    assert len(cache) == 3 and cache.get(keys[0]) == "a"  # found in the old generation, moved back to young
    cache.put(keys[3], "d")  # young (c, a) is full again: the old (a, b) generation is dropped
    assert cache.get(keys[1]) is None and cache.get(keys[1], "gone") == "gone"
    assert cache.get(keys[0]) == "a" and cache.get(keys[3]) == "d"
    cache.clear()
    assert len(cache) == 0 and cache.get(keys[0]) is None


def test_metadata_arrays_round_trip_exactly():
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3) / 7, np.array([-1, 2**40], dtype=np.int64),
              np.zeros((0, 4), np.float16), np.array([True, False])]
    for a in arrays:
        back = decode_array(encode_array(a))
        assert back.dtype == a.dtype and back.shape == a.shape and back.tobytes() == a.tobytes()
        assert back.flags.writeable
    fortran = np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert (decode_array(encode_array(fortran)) == fortran).all()
    assert decode_array([1, 2]).tolist() == [1, 2]
    lines = metadata_lines(arrays[:1])
    assert lines[0] == 'metadata = {"relax.expr.Constant": [' and lines[-1] == "]}" and len(lines) == 3


@pytest.mark.parametrize("entry, message", [
    ({"dtype": "float32", "shape": [2]}, "a metadata entry has keys dtype, shape and base64"),
    ({"dtype": "object", "shape": [1], "base64": ""}, "metadata arrays are numeric, got dtype object"),
    ({"dtype": "float32", "shape": [3], "base64": base64.b64encode(b"12345678").decode()},
     r"metadata entry of shape \(3,\) and dtype float32 has 8 bytes"),
])
def test_malformed_metadata_is_refused(entry, message):
    with pytest.raises(ValueError, match=message):
        decode_array(entry)


def test_metadata_refuses_text_that_is_not_base64():
    with pytest.raises(ValueError):
        decode_array({"dtype": "int8", "shape": [2], "base64": "!!not base64!!"})
