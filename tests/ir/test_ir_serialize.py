"""Lossless JSON: round trips (also through a fresh process), and clear errors for malformed documents."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

import course_programs as cp
from tunefarm.ir import expr as E
from tunefarm.ir import stmt as S
from tunefarm.ir.buffer import Buffer
from tunefarm.ir.function import PrimFunc, wrap_root
from tunefarm.ir.module import IRModule
from tunefarm.ir.serialize import dumps, from_json, loads, to_json
from tunefarm.ir.structural import assert_structural_equal, structural_equal, structural_hash, workload_key

TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(cp.PRIM_FUNCS))
def test_course_functions_round_trip(name):
    f = cp.PRIM_FUNCS[name]
    g = loads(dumps(f))
    assert_structural_equal(f, g)
    assert g.name == f.name and g.attrs == f.attrs
    assert [p.name for p in g.params] == [p.name for p in f.params]  # names survive too (lossless)
    assert g.script() == f.script()


def test_modules_round_trip_with_attrs():
    mod = IRModule(dict(cp.MyModule.functions, linear0=cp.linear0), {"system_lib_prefix": "x"})
    again = from_json(json.loads(json.dumps(to_json(mod))))
    assert isinstance(again, IRModule) and list(again) == ["mm_relu", "linear0"]
    assert again.attrs == {"system_lib_prefix": "x"}
    assert structural_equal(mod, again)


def test_sharing_is_preserved():
    f = cp.linear0
    g = loads(dumps(f))
    X, W, B, Z = g.params
    assert W.shape[0] is Z.shape[1] is B.shape[0]  # one `n`
    blk = g.root_block.body.seq[0].body.body.body.block
    assert blk.reads[0].buffer is X and blk.writes[0].buffer is g.root_block.alloc_buffers[0]


def test_every_node_kind_and_odd_values_survive():
    n = E.Var("n", "int64")
    A = Buffer("A", (n, 4), "float16")
    L = Buffer("L", (4,), "float32", "local")
    i = E.Var("i", "int64")
    v = E.Var("v", "int64")
    exprs = E.Select(E.Not(E.Binary("<", v, n)), E.Cast("float16", E.Call("exp", (E.FloatImm(float("inf"), "float32"),))),
                     E.FloatImm(float("nan"), "float16"))
    store = S.BufferStore(A, exprs, (v, E.IntImm(3)))
    blk = S.Block("b", [S.IterVar(v, S.Range(E.IntImm(0, "int64"), n), "S")],
                  (S.BufferRegion(A, (S.Range(v, E.IntImm(1, "int64")), S.Range(E.IntImm(0), E.IntImm(4)))),),
                  (S.BufferRegion(A, (S.Range(v, E.IntImm(1, "int64")), S.Range(E.IntImm(3), E.IntImm(1)))),),
                  S.seq(S.IfThenElse(E.IntImm(1, "bool"), store, S.Evaluate(E.IntImm(0))), S.SeqStmt(())),
                  S.BufferStore(A, E.FloatImm(-0.0, "float16"), (v, E.IntImm(0))), [],
                  {"expr": E.Binary("*", n, E.IntImm(2, "int64")), "inf": float("-inf"), "list": [1, (2, 3)],
                   "flag": True, "none": None, "nested": {"k": "v"}})
    body = S.Allocate(L, S.For(i, E.IntImm(0, "int64"), n, "parallel",
                               S.BlockRealize([i], E.Binary("<", i, E.IntImm(100, "int64")), blk),
                               {"pragma_auto_unroll_max_step": 16}))
    f = PrimFunc([A], wrap_root(body), {"tir.noalias": True, "layout_free_buffers": [0]}, name="odd")
    text = dumps(f)
    assert "NaN" not in text and "Infinity" not in text  # strict JSON
    g = loads(text)
    assert_structural_equal(f, g)
    gblk = g.root_block.body.body.body.block
    assert gblk.annotations["inf"] == float("-inf") and gblk.annotations["list"] == [1, [2, 3]]
    assert isinstance(gblk.annotations["expr"], E.Binary) and gblk.annotations["expr"].a is g.params[0].shape[0]


def test_statements_and_expressions_serialize_alone():
    i = E.Var("i")
    e = E.Binary("+", i, E.IntImm(1))
    e2 = from_json(to_json(e))
    assert structural_equal(e, e2) and e2.a is not i
    s = S.For(i, 0, 4, "serial", S.Evaluate(e))
    assert structural_equal(from_json(to_json(s)), s)


def test_to_json_rejects_unknown_values():
    i = E.Var("i")
    A = Buffer("A", (4,))
    s = S.For(i, 0, 4, "serial", S.BufferStore(A, E.FloatImm(0.0), (i,)), {"obj": object()})
    with pytest.raises(TypeError, match="cannot serialize attribute value"):
        to_json(s)
    with pytest.raises(TypeError, match="cannot serialize"):
        to_json(object())


def _doc():
    return to_json(cp.mm_relu)


MALFORMED = [
    (lambda d: d.update(format="other"), "$.format"),
    (lambda d: d.update(version=99), "$.version"),
    (lambda d: d.pop("vars"), "missing field 'vars'"),
    (lambda d: d["vars"][0].update(dtype="float128"), "$.vars[0]"),
    (lambda d: d["buffers"][0].update(scope="texture"), "unknown scope"),
    (lambda d: d["buffers"][0]["shape"].append(["float", 1.0, "float32"]), "shape entries must be integers"),
    (lambda d: d["root"].update(kind="Mystery"), "unknown statement kind 'Mystery'"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(for_kind="sideways"), "unknown loop kind"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(loop_var=999), "bad variable reference 999"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(min=["bin", "**", ["int", 1, "int32"],
                                                                         ["int", 2, "int32"]]), "unknown operator"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(min=["call", "system", "int32",
                                                                         [["int", 1, "int32"]]]), "unknown intrinsic"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(min=["int", "0", "int32"]),
     "integer literal value"),
    (lambda d: d["root"]["body"]["block"]["body"]["seq"][0].update(min=["int", 0]), "expects 2 operands"),
    (lambda d: d["root"]["body"]["block"].update(alloc_buffers=[42]), "bad buffer reference 42"),
    (lambda d: d["root"].update(params="A"), "expected list"),
]


@pytest.mark.parametrize("mutate,message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_malformed_documents_raise_value_error_naming_the_problem(mutate, message):
    doc = copy.deepcopy(_doc())
    mutate(doc)
    with pytest.raises(ValueError, match="malformed tunefarm IR JSON") as info:
        from_json(doc)
    assert message in str(info.value)


def test_malformed_text_and_types():
    with pytest.raises(ValueError, match="malformed tunefarm IR JSON"):
        loads("{not json")
    with pytest.raises(ValueError, match=r"\$: expected an object"):
        from_json([1, 2, 3])
    with pytest.raises(TypeError):
        loads(42)
    deep = ["not"] * 1
    for _ in range(5000):
        deep = ["not", deep]
    doc = _doc()
    doc["root"]["body"]["predicate"] = deep
    with pytest.raises(ValueError, match="malformed"):
        from_json(doc)


def test_loading_never_executes_code(tmp_path):
    marker = tmp_path / "ran"
    doc = _doc()
    doc["root"]["body"]["block"]["name"] = f"__import__('os').system('touch {marker}')"
    doc["root"]["attrs"]["global_symbol"] = {"__expr__": ["call", "eval", "int32", [["int", 1, "int32"]]]}
    with pytest.raises(ValueError, match="unknown intrinsic"):
        from_json(doc)
    assert not marker.exists()


CHILD = r"""
import json, sys
sys.path.insert(0, {tests!r})
from tunefarm.ir.serialize import loads, dumps
from tunefarm.ir.structural import workload_key, structural_hash
data = json.load(sys.stdin)
out = {{}}
for name, text in data.items():
    f = loads(text)
    out[name] = [dumps(f), workload_key(f), structural_hash(f)]
json.dump(out, sys.stdout)
"""


def test_round_trip_in_a_fresh_process_keeps_structure_and_workload_key():
    programs = dict(cp.PRIM_FUNCS)
    payload = {name: dumps(f) for name, f in programs.items()}
    proc = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(TESTS))], input=json.dumps(payload),
                          capture_output=True, text=True, timeout=120, env={"PYTHONHASHSEED": "12345",
                                                                            "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    back = json.loads(proc.stdout)
    for name, f in programs.items():
        text, key, h = back[name]
        g = loads(text)
        assert_structural_equal(f, g)
        assert key == workload_key(f), name
        assert h == structural_hash(f), name
    assert len({v[1] for v in back.values()}) == len(programs)  # distinct programs, distinct keys
