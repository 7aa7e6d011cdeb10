"""Graph passes: BindParams, constant folding, LegalizeOps, FuseOps + FuseTIR, DCE, task extraction —
each checked structurally and numerically (interpreting the PrimFuncs they produce)."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.graph import (BindParams, BlockBuilder, DeadCodeElimination, FuseOps, FuseTIR, LegalizeOps,
                            extract_tasks, ops, prepare, var)
from tunefarm.graph.passes.fuse import kernel_kind
from tunefarm.ir.expr import Var
from tunefarm.ir.graph_expr import Call, Constant

from course_programs import MLPModuleWithMain as MyModule, MyModuleMixture


def _run_prepared(mod, entry, *inputs):
    """Run a prepared module binding by binding with the reference interpreter (kernels only)."""
    fn = mod[entry]
    env = dict(zip(fn.params, inputs))
    for b in fn.bindings():
        v = b.value
        if isinstance(v, Constant):
            env[b.var] = v.data
            continue
        if not isinstance(v, Call):
            env[b.var] = env[v]
            continue
        args = [a.data if isinstance(a, Constant) else env[a] for a in v.args]
        out = np.empty(tuple(v.type.shape), v.type.dtype)
        tunefarm.interpret(mod[v.attrs["func"]], *args, out)
        env[b.var] = out
    return env[fn.ret] if not isinstance(fn.ret, Constant) else fn.ret.data


def test_bind_params_errors():
    with pytest.raises(KeyError, match=r"no parameters \['nope'\]"):
        BindParams("main", {"nope": np.zeros(3, np.float32)})(MyModule)
    with pytest.raises(ValueError, match="dtype float64"):
        BindParams("main", {"w0": np.zeros((4, 3))})(MyModule)
    with pytest.raises(ValueError, match="dimension m would be both 3 and 5"):
        BindParams("main", {"w0": np.zeros((4, 3), np.float32), "w1": np.zeros((2, 4), np.float32),
                            "x": np.zeros((1, 5), np.float32)})(MyModule)


def test_bind_params_substitutes_dims_everywhere():
    bound = BindParams("main", {"w0": np.zeros((4, 3), np.float32)})(MyModule)
    fn = bound["main"]
    assert [p.name for p in fn.params] == ["x", "b0", "w1", "b1"]
    x, b0, w1, b1 = fn.params
    assert x.type.shape == (1, 3) and b0.type.shape == (4,)
    assert isinstance(w1.type.shape[0], Var) and w1.type.shape[1] == 4
    assert [b.var.type.shape[1] for b in fn.bindings()][:2] == [4, 4]


def _mlp_module(batch=2):
    model = nn.Sequential(nn.Linear(6, 8, seed=1), nn.ReLU(), nn.Linear(8, 4, seed=2))
    mod, params = model.export({"forward": {"x": nn.spec.Tensor((batch, 6), "float32")}})
    return model, mod, params


def test_prepare_folds_weights_fuses_and_matches_numpy():
    model, mod, params = _mlp_module()
    p = prepare(mod, params)
    fn = p["forward"]
    calls = list(fn.calls())
    assert [c.op for c in calls] == ["call_tir", "call_tir"]
    assert [c.attrs["func"] for c in calls] == ["fused_matmul_add_relu", "fused_matmul1_add1"]
    # the dense weight is stored transposed: the kernel reads (in_features, out_features)
    assert calls[0].args[1].data.shape == (6, 8)
    np.testing.assert_array_equal(calls[0].args[1].data, model[0].weight.T)
    assert sorted(p.prim_funcs()) == ["fused_matmul1_add1", "fused_matmul_add_relu"]
    x = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    np.testing.assert_allclose(_run_prepared(p, "forward", x), model(x), rtol=1e-5, atol=1e-6)


def test_fold_constant_evaluates_constant_subgraphs():
    x = var("x", (2, 3))
    w = Constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            wt = bb.emit(ops.permute_dims(w))                      # constant: folded
            wr = bb.emit(ops.reshape(wt, (3, 4)))                  # constant of a constant: folded too
            y = bb.emit(ops.matmul(x, wr))
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    p = prepare(bb.get(), fuse=False)
    calls = list(p["main"].calls())
    assert [c.attrs["func"] for c in calls] == ["matmul"]
    np.testing.assert_array_equal(calls[0].args[1].data, w.data.T.reshape(3, 4))


def test_fuse_ops_groups_anchor_with_elementwise_chain_only():
    x = var("x", (4, 8))
    w = Constant(np.ones((8, 8), np.float32))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(ops.matmul(x, w))
            b = bb.emit(ops.relu(a))
            c = bb.emit(ops.add(b, x))       # elementwise, joins the group
            d = bb.emit(ops.matmul(c, w))    # a second anchor starts a new group
            e = bb.emit(ops.relu(d))
            f = bb.emit(ops.add(e, d))       # d is used twice: d, e, f cannot all fuse with d's group
            gv = bb.emit_output(f)
        bb.emit_func_output(gv)
    legal = DeadCodeElimination()(LegalizeOps()(bb.get()))
    assert kernel_kind(legal["matmul"]) == "anchor" and kernel_kind(legal["relu"]) == "elementwise"
    fused = FuseTIR()(FuseOps()(legal))
    names = [c.attrs["func"] for c in fused["main"].calls()]
    assert names == ["fused_matmul_relu_add", "matmul", "fused_relu_add"]
    xv = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    a = np.maximum(xv @ w.data, 0) + xv
    d = a @ w.data
    ref = np.maximum(d, 0) + d
    dce = DeadCodeElimination()(fused)
    assert "relu" not in dce.functions and "fused_matmul_relu_add" in dce.functions
    np.testing.assert_allclose(_run_prepared(dce, "main", xv), ref, rtol=1e-5, atol=1e-5)


def test_dead_code_elimination_drops_unused_bindings_and_kernels():
    x = var("x", (3,))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            bb.emit(ops.relu(x))                     # unused
            y = bb.emit(ops.add(x, x))
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    mod = LegalizeOps()(bb.get())
    assert sorted(mod.prim_funcs()) == ["add", "relu"]
    out = DeadCodeElimination()(mod)
    assert sorted(out.prim_funcs()) == ["add"]
    assert [b.var.name for b in out["main"].bindings()] == ["lv1"]


def test_extract_tasks_counts_identical_kernels_once():
    x = var("x", (2, 16))
    w = Constant(np.ones((16, 16), np.float32))
    bb = BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            v = x
            for _ in range(3):
                v = bb.emit(ops.relu(bb.emit(ops.matmul(v, w))))
            gv = bb.emit_output(v)
        bb.emit_func_output(gv)
    tasks = extract_tasks(bb.get())
    assert len(tasks) == 1
    (t,) = tasks
    assert t.weight == 3 and t.name == "fused_matmul_relu"
    assert len({t.workload_key}) == 1


def test_extract_tasks_skips_python_functions_and_keys_by_structure(mlp_params):
    tasks = extract_tasks(MyModuleMixture)
    assert [(t.name, t.weight) for t in tasks] == [("linear0", 1)]
    _, mod, params = _mlp_module(batch=1)
    _, mod2, params2 = _mlp_module(batch=1)
    k1 = [t.workload_key for t in extract_tasks(mod, params)]
    k2 = [t.workload_key for t in extract_tasks(mod2, params2)]
    assert k1 == k2 and len(set(k1)) == 2


def test_specialize_shapes_gives_static_kernels(mlp_params):
    from tunefarm.graph import passes

    bound = BindParams("main", mlp_params)(MyModule)
    spec = passes.SpecializeShapes()(bound)
    calls = [c.attrs["func"] for c in spec["main"].calls()]
    assert calls == ["linear0_1", "relu0", "linear0_2"]  # two signatures of linear0, one of relu0
    assert spec["relu0"].symbolic_vars() == [] and spec["linear0_1"].symbolic_vars() == []
    assert [tuple(s.value for s in p.shape) for p in spec["linear0_2"].params] == [(1, 128), (10, 128), (10,),
                                                                                  (1, 10)]
    assert spec["linear0"].symbolic_vars()  # the generic original is still there (DCE drops it later)
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    ref = np.maximum(x @ mlp_params["w0"].T + mlp_params["b0"], 0) @ mlp_params["w1"].T + mlp_params["b1"]
    np.testing.assert_allclose(_run_prepared(prepare(bound), "main", x), ref, atol=1e-4)
    tasks = extract_tasks(BindParams("main", mlp_params)(MyModuleMixture))
    assert [(t.name, [tuple(s.value for s in p.shape) for p in t.func.params]) for t in tasks] == [
        ("linear0", [(1, 784), (128, 784), (128,), (1, 128)])]
    unbound = passes.SpecializeShapes()(MyModule)  # symbolic call sites: nothing to specialize
    assert unbound["main"] is MyModule["main"]
