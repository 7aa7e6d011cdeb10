"""``tunefarm.tvm`` beyond the course notes' happy paths: arrays copied as TVM copies them, the adapters' errors, the
TOPI and relax.op names checked against numpy, and what importing the facade loads."""
from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pytest

import tunefarm
from tunefarm import tvm
from tunefarm.tvm import meta_schedule as ms
from tunefarm.tvm import relax, te, topi
from tunefarm.tvm.script import relax as R
from tunefarm.tvm.script import tir as T


def test_nd_array_copies_like_tvm_and_numpy_does_not():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    nd = tvm.nd.array(a, device=tvm.cpu())
    a[0, 0] = 9
    assert isinstance(nd, tvm.nd.NDArray) and nd[0, 0] == 0 and not np.shares_memory(nd, a)  # a copy
    assert nd.ctypes.data % 64 == 0  # aligned as TVM's allocator aligns
    assert type(nd.numpy()) is np.ndarray and np.shares_memory(nd.numpy(), nd)  # .numpy(): the same memory
    assert nd.device == tvm.cpu(0) and nd.shape == (2, 3) and nd.dtype == np.float32
    again = tvm.nd.array(nd)
    assert not np.shares_memory(again, nd) and (again.numpy() == nd.numpy()).all()
    t = tvm.nd.array(a.T)  # native code reads C order
    assert not np.shares_memory(t, a) and t.flags.c_contiguous and (t.numpy() == a.T).all()
    assert tvm.nd.array([[1, 2]]).dtype == np.int64 and tvm.nd.array(2.5).shape == ()
    from_other = tvm.nd.from_dlpack(a)  # any DLPack producer (torch tensors in the course): no copy
    assert isinstance(from_other, tvm.nd.NDArray) and np.shares_memory(from_other, a)
    e = tvm.nd.empty((3, 4), "int32")
    assert e.shape == (3, 4) and e.dtype == np.int32 and isinstance(e, tvm.nd.NDArray)
    with pytest.raises(TypeError, match="numeric data"):
        tvm.nd.array([object()])
    with pytest.raises(TypeError, match="tvm device such as tvm.cpu"):
        tvm.nd.array(a, device="cpu")


def test_devices():
    assert tvm.cpu() == tvm.device("cpu") == tvm.device("llvm", 0) and repr(tvm.cpu(1)) == "cpu(1)"
    assert tvm.cpu(0).device_type == 1 and len({tvm.cpu(0), tvm.cpu()}) == 1
    with pytest.raises(ValueError, match="CPU only; there is no 'cuda' device"):
        tvm.device("cuda")
    with pytest.raises(ValueError, match="device ids are integers >= 0"):
        tvm.cpu(-1)


@T.prim_func
def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] + T.float32(1)


@tvm.script.ir_module
class Model:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y


def test_build_and_compile_pick_by_what_the_module_holds():
    lib = tvm.compile(tvm.IRModule({"main": add_one}), "llvm")
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    lib["main"](a, b)
    np.testing.assert_array_equal(b, a + 1)
    ex = tvm.compile(Model, tvm.target.Target("llvm"))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    x = np.array([-1, 2, -3, 4], "float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.maximum(x, 0))
    with pytest.raises(TypeError, match="relax.build or tvm.compile"):
        tvm.build(Model)
    with pytest.raises(TypeError, match="takes an IRModule or a PrimFunc"):
        tvm.build("main")
    with tvm.transform.PassContext(opt_level=3) as ctx:
        assert ctx.opt_level == 3
    with pytest.raises(ValueError, match="opt_level is an integer from 0 to 4"):
        tvm.transform.PassContext(opt_level=9)


def test_virtual_machine_errors_and_timer():
    ex = relax.build(Model, target="llvm")
    with pytest.raises(TypeError, match="what relax.build / tvm.compile returns"):
        relax.VirtualMachine(tvm.build(add_one), tvm.cpu())
    with pytest.raises(TypeError, match="the device is tvm.cpu()"):
        relax.VirtualMachine(ex, "cpu")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    with pytest.raises(KeyError, match="executable has entry 'main', not 'forward'"):
        vm["forward"]
    with pytest.raises(KeyError, match="not 'forward'"):
        vm.module.time_evaluator("forward", tvm.cpu())
    timer = vm.module.time_evaluator("main", tvm.cpu(), number=5, repeat=2)
    result = timer(tvm.nd.array(np.ones(4, "float32")))
    assert result.mean > 0 and len(result.results) == 2 and result.number == 5


def test_relax_var_const_and_the_older_types():
    v = relax.Var("v", relax.TensorStructInfo((2, 3), "float32"))
    assert relax.Var("r", R.Tensor((2, 3), "float32")).type == v.type  # R.Tensor as a plain Python type
    old = relax.Var("w", (2, 3), relax.DynTensorType(2, "float32"))
    assert isinstance(v, relax.Var) and isinstance(old, relax.Var) and old.type == v.type
    bb = relax.BlockBuilder()
    with bb.function("main", [v]):
        with bb.dataflow():
            lv = bb.emit(relax.op.relu(v))
            assert isinstance(lv, relax.Var)
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    with pytest.raises(TypeError, match="takes relax.TensorStructInfo"):
        relax.Var("x", (2, 3))
    with pytest.raises(ValueError, match="has 2 dims but the DynTensorType says 3"):
        relax.Var("x", (2, 3), relax.DynTensorType(3, "float32"))
    with pytest.raises(ValueError, match="ndim is an integer >= -1"):
        relax.DynTensorType(-2)
    c = relax.const(np.ones((2, 2)), relax.DynTensorType(2, "float32"))
    assert c.dtype == "float32" and c.shape == (2, 2)
    with pytest.raises(ValueError, match="DynTensorType says 1"):
        relax.const(np.ones((2, 2)), relax.DynTensorType(1, "float32"))
    assert relax.const(np.ones(3), "float32").dtype == "float32"


def test_register_func_hands_ndarrays_to_the_function():
    seen = []

    @tvm.register_func
    def facade_test_negate(x, out):
        seen.append((type(x).__name__, type(out).__name__))
        np.negative(x.numpy(), out=out.numpy())

    assert tunefarm.graph.get_func("facade_test_negate") is not None
    with pytest.raises(KeyError, match="already registered"):
        tvm.register_func("facade_test_negate", facade_test_negate)
    assert tvm.register_func("facade_test_negate", facade_test_negate, override=True) is facade_test_negate

    @tvm.script.ir_module
    class CallsPython:
        @R.function
        def main(x: R.Tensor((3,), "float32")):
            with R.dataflow():
                y = R.call_dps_packed("facade_test_negate", (x,), R.Tensor((3,), "float32"))
                R.output(y)
            return y

    vm = relax.VirtualMachine(relax.build(CallsPython), tvm.cpu())
    np.testing.assert_array_equal(vm["main"](np.array([1, -2, 3], "float32")).numpy(), [-1, 2, -3])
    assert seen == [("NDArray", "NDArray")]
    with pytest.raises(TypeError, match="needs a callable"):
        tvm.register_func("x", 3)


TOPI = [  # (function, arguments as shapes or values, numpy reference)
    (topi.add, [(2, 3), (3,)], np.add),
    (topi.subtract, [(2, 3), (2, 3)], np.subtract),
    (topi.multiply, [(2, 3), (2, 1)], np.multiply),
    (topi.divide, [(2, 3), (2, 3)], np.divide),
    (topi.maximum, [(2, 3), (2, 3)], np.maximum),
    (topi.minimum, [(2, 3), (2, 3)], np.minimum),
    (topi.exp, [(2, 3)], np.exp),
    (topi.log, [(2, 3)], np.log),
    (topi.sqrt, [(2, 3)], np.sqrt),
    (topi.tanh, [(2, 3)], np.tanh),
    (topi.sigmoid, [(2, 3)], lambda x: 1 / (1 + np.exp(-x))),
    (topi.negative, [(2, 3)], np.negative),
    (topi.matmul, [(2, 3), (3, 4)], np.matmul),
    (topi.transpose, [(2, 3)], np.transpose),
    (lambda x: topi.reshape(x, (3, 2)), [(2, 3)], lambda x: x.reshape(3, 2)),
    (topi.nn.dense, [(2, 3), (4, 3)], lambda x, w: x @ w.T),
    (topi.nn.relu, [(2, 3)], lambda x: np.maximum(x, 0)),
    (topi.nn.flatten, [(2, 3, 2)], lambda x: x.reshape(2, 6)),
    (lambda x: topi.nn.pad(x, (1, 0)), [(2, 3)], lambda x: np.pad(x, ((1, 1), (0, 0)))),  # pad_after defaults to pad_before
]


@pytest.mark.parametrize("fn, shapes, ref", TOPI, ids=[str(i) for i in range(len(TOPI))])
def test_topi_names_compute_what_numpy_does(fn, shapes, ref):
    rng = np.random.default_rng(0)
    holders = [te.placeholder(s, name=f"a{i}", dtype="float32") for i, s in enumerate(shapes)]
    out = fn(*holders)
    arrays = [(rng.random(s, dtype=np.float32) + 0.5) for s in shapes]
    result = np.zeros([int(d) for d in out.shape], "float32")
    tvm.build(te.create_prim_func([*holders, out]))["main"](*arrays, result)
    np.testing.assert_allclose(result, ref(*arrays), rtol=1e-5)


def test_relax_op_names_compute_what_numpy_does():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3)).astype("float32")
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            h = bb.emit(relax.op.linear(x, relax.const(w)))
            h = bb.emit(relax.op.add(bb.emit(relax.op.nn.relu(h)), bb.emit(relax.op.dense(x, relax.const(w)))))
            h = bb.emit(relax.op.matmul(h, relax.const(w)))
            h = bb.emit(relax.op.permute_dims(h))
            gv = bb.emit_output(bb.emit(relax.op.flatten(bb.emit(relax.op.reshape(h, (3, 2))))))
        bb.emit_func_output(gv)
    a = rng.standard_normal((2, 3)).astype("float32")
    expected = ((np.maximum(a @ w.T, 0) + a @ w.T) @ w).T.reshape(3, 2)
    got = relax.VirtualMachine(relax.build(bb.get()), tvm.cpu())["main"](a).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_tuning_arguments_are_checked_before_anything_runs(tmp_path):
    mod = tvm.IRModule({"main": add_one})
    two = tvm.IRModule({"a": add_one, "b": add_one})
    common = dict(target="llvm", work_dir=str(tmp_path / "w"))
    with pytest.raises(ValueError, match="max_trials_global must be an integer >= 1"):
        ms.tune_tir(mod, max_trials_global=0, **common)
    with pytest.raises(ValueError, match="name it 'main'"):
        ms.tune_tir(two, max_trials_global=1, **common)
    with pytest.raises(TypeError, match="tune_tir: expected a PrimFunc or an IRModule, got Function"):
        ms.tune_tir(Model["main"], max_trials_global=1, **common)
    with pytest.raises(ValueError, match="space must be ms.space_generator.ScheduleFn"):
        ms.tune_tir(mod, max_trials_global=1, space="union", **common)
    with pytest.raises(ValueError, match="runner is 'local' or a tunefarm farm"):
        ms.tune_tir(mod, max_trials_global=1, runner="rpc", **common)
    with pytest.raises(ValueError, match="num_tuning_cores is 'physical', 'logical' or an integer >= 1"):
        ms.tune_tir(mod, max_trials_global=1, num_tuning_cores=0, **common)
    with pytest.raises(TypeError, match="takes a schedule function"):
        ms.space_generator.ScheduleFn("stochastic_schedule_mm")
    assert not (tmp_path / "w").exists()  # nothing was created for a call that could not run
    db = tunefarm.Database(str(tmp_path / "empty.sqlite"))
    assert ms.tir_integration.compile_tir(db, mod, "llvm") is None  # TVM's answer when nothing is stored


def test_the_tuning_log_is_shown_only_where_logging_is_not_configured(monkeypatch):
    from tunefarm.tvm.meta_schedule.tune import _show_tuning_log

    log = logging.getLogger("tunefarm.search")
    with _show_tuning_log():  # pytest configures logging: nothing is added
        assert log.handlers == []
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    with _show_tuning_log():
        assert len(log.handlers) == 1 and log.getEffectiveLevel() == logging.INFO
    assert log.handlers == [] and log.level == logging.NOTSET


def test_structural_equality_under_tvm_ir():
    sch = tvm.tir.Schedule(add_one)
    tvm.ir.assert_structural_equal(sch.mod["main"], add_one)
    sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[2, 2])
    assert not tvm.ir.structural_equal(sch.mod["main"], add_one)
    with pytest.raises(AssertionError, match="structurally different"):
        tvm.ir.assert_structural_equal(sch.mod["main"], add_one)


def test_testing_assert_allclose_takes_ndarrays():
    tvm.testing.assert_allclose(tvm.nd.array(np.ones(3)), np.ones(3))
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(tvm.nd.array(np.ones(3)), np.zeros(3))


def test_importing_the_facade_loads_neither_the_tuning_stack_nor_the_farm():
    code = ("import sys\nfrom tunefarm import tvm\nfrom tunefarm.tvm import relax, te, topi, meta_schedule\n"
            "from tunefarm.tvm.script import tir, relax as R\n"
            "print(sorted(m for m in ('ray', 'xgboost', 'pandas', 'tunefarm.farm', 'tunefarm.search')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
