"""Workloads by name or file, spaces by name or path, and the ``tunefarm tune`` command."""
from __future__ import annotations

import json
import textwrap

import pytest

from search_spaces.registry import load_space, register_space, registered_names
from host_targets import not_this_host
from tunefarm.cli import main
from tunefarm.search.space import SpaceError
from tunefarm.search.workloads import WorkloadError, builtin_workload, load_workload


def _shapes(func):
    return [p.const_shape() for p in func.params]


def test_builtin_workloads():
    assert _shapes(builtin_workload("matmul-128")) == [(128, 128)] * 3
    assert _shapes(builtin_workload("matmul-32x16x8")) == [(32, 8), (8, 16), (32, 16)]
    assert _shapes(builtin_workload("dense-relu-784-128")) == [(1, 784), (128, 784), (128,), (1, 128)]
    assert _shapes(builtin_workload("dense-relu-784-128-b4"))[0] == (4, 784)
    assert _shapes(builtin_workload("conv2d-1x64x28x28-64x3x3"))[-1] == (1, 64, 28, 28)
    assert _shapes(builtin_workload("conv2d-1x3x32x32-8x3x3-s2-p0"))[-1] == (1, 8, 15, 15)
    assert _shapes(builtin_workload("relu-16")) == [(16, 16)] * 2
    from tunefarm.search.block_info import leaf_blocks

    assert leaf_blocks(builtin_workload("matmul-128")) == ["C"]  # the course's block name
    with pytest.raises(WorkloadError, match="unknown workload 'matmul'.*matmul-128"):
        builtin_workload("matmul")


def test_workload_files(tmp_path):
    (tmp_path / "wl.py").write_text(textwrap.dedent('''
        from tunefarm import te
        from tunefarm.script import T

        @T.prim_func
        def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
               C: T.Buffer((16, 16), "float32")):
            for i, j, k in T.grid(16, 16, 16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = 0.0
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

        def te_relu():
            A = te.placeholder((8, 8), name="A")
            return [A, te.compute((8, 8), lambda i, j: te.max(A[i, j], 0.0), name="relu")]

        NOT_A_WORKLOAD = 3
    '''))
    name, func = load_workload(f"{tmp_path}/wl.py:mm")
    assert name == "mm" and _shapes(func) == [(16, 16)] * 3
    name, func = load_workload(f"{tmp_path}/wl.py:te_relu")
    assert _shapes(func) == [(8, 8)] * 2
    with pytest.raises(WorkloadError, match="not a PrimFunc"):
        load_workload(f"{tmp_path}/wl.py:NOT_A_WORKLOAD")
    with pytest.raises(WorkloadError, match="has no 'missing'"):
        load_workload(f"{tmp_path}/wl.py:missing")
    with pytest.raises(WorkloadError, match="no such file"):
        load_workload(f"{tmp_path}/nope.py:mm")


def test_space_registry(tmp_path):
    assert {"stochastic_schedule_mm", "multi_level_tiling_mm", "dense_bias_relu", "conv2d",
            "elementwise"} <= set(registered_names())
    from search_spaces.matmul import stochastic_schedule_mm

    assert load_space("stochastic_schedule_mm") is stochastic_schedule_mm
    assert load_space("search_spaces/matmul.py:stochastic_schedule_mm") is stochastic_schedule_mm
    (tmp_path / "my_space.py").write_text("def space(sch):\n    return sch\nVALUE = 1\n")
    assert load_space(f"{tmp_path}/my_space.py:space").__name__ == "space"
    with pytest.raises(SpaceError, match="not a schedule function"):
        load_space(f"{tmp_path}/my_space.py:VALUE")
    with pytest.raises(SpaceError, match="must be a .py file"):
        load_space(f"{tmp_path}/my_space.txt:space")
    with pytest.raises(SpaceError, match="not a Python identifier"):
        load_space(f"{tmp_path}/my_space.py:1+1")
    register_space("mine", stochastic_schedule_mm)
    assert load_space("mine") is stochastic_schedule_mm
    with pytest.raises(SpaceError, match="without ':'"):
        register_space("a:b", stochastic_schedule_mm)


def test_the_stochastic_schedule_mm_of_the_course_is_verbatim():
    import inspect

    from search_spaces.matmul import stochastic_schedule_mm

    body = inspect.getsource(stochastic_schedule_mm).splitlines()[1:]
    assert [line.strip() for line in body] == [
        'block_C = sch.get_block("C", "main")',
        "i, j, k = sch.get_loops(block=block_C)",
        "j_factors = sch.sample_perfect_tile(loop=j, n=2)",
        "j_0, j_1 = sch.split(loop=j, factors=j_factors)",
        "sch.reorder(i, j_0, k, j_1)",
        "sch.decompose_reduction(block_C, k)",
        "return sch",
    ]


def test_cli_tune_then_refuse_without_resume_then_resume(tmp_path, capsys):
    db = str(tmp_path / "cli.sqlite")
    base = ["tune", "matmul-32", "--space", "search_spaces/matmul.py:stochastic_schedule_mm", "--db", db,
            "--farm", "local", "--workers", "1", "--target", "llvm -num-cores=1", "--seed", "0"]
    assert main(base + ["--trials", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 new trials" in out and "best:" in out and "sample_perfect_tile(loop=l2, n=2" in out
    assert main(base + ["--trials", "4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tunefarm tune: error: ") and "pass --resume" in err and err.count("\n") == 1
    assert main(base + ["--trials", "4", "--resume"]) == 0
    assert "2 new trials" in capsys.readouterr().out
    assert main(["tune", "no-such-workload", "--db", db, "--farm", "local"]) == 2
    assert "unknown workload" in capsys.readouterr().err


def test_cli_bench_retimes_the_best_kernel_against_the_unscheduled_program(tmp_path, capsys):
    db = str(tmp_path / "bench.sqlite")
    assert main(["tune", "matmul-32", "--space", "search_spaces/matmul.py:stochastic_schedule_mm", "--db", db,
                 "--farm", "local", "--workers", "1", "--target", "llvm -num-cores=1", "--seed", "1",
                 "--trials", "3"]) == 0
    capsys.readouterr()
    assert main(["bench", "--db", db, "--rounds", "3", "--format", "json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["workload"] == "matmul-32" and row["check"] == "ok" and row["trials"] == 3
    assert row["tuned_us"] > 0 and row["untuned_us"] > 0
    assert abs(row["speedup"] - row["untuned_us"] / row["tuned_us"]) < 1e-9
    assert row["gflops"] == 2 * 32 ** 3 / (row["tuned_us"] * 1e3)
    assert main(["bench", "--db", db, "--rounds", "3"]) == 0
    assert "speedup" in capsys.readouterr().out
    assert main(["bench", "--db", db, "--workload", "matmul-32", "--target", not_this_host()]) == 1


def test_cli_bench_waits_while_a_farm_worker_of_this_host_times(tmp_path, capsys, monkeypatch):
    """``tunefarm bench`` times with the whole host's timing slots, as a confirmation does: a worker's timing
    loop in progress (its slot of the host measurement lock) holds it back until the slot is free."""
    import threading
    import time

    from tunefarm.farm.measure_lock import ENV_VAR, HostMeasureLock

    lock_path = str(tmp_path / "measure.lock")
    monkeypatch.setenv(ENV_VAR, lock_path)
    db = str(tmp_path / "bench.sqlite")
    assert main(["tune", "matmul-32", "--db", db, "--farm", "local", "--workers", "1",
                 "--target", "llvm -num-cores=1", "--seed", "1", "--trials", "2"]) == 0
    capsys.readouterr()
    worker = HostMeasureLock(lock_path)
    assert worker.try_acquire()  # a farm worker of this host is timing
    ended = []
    bench = threading.Thread(target=lambda: ended.append((main(["bench", "--db", db, "--rounds", "2", "--format",
                                                                 "json"]), time.monotonic())))
    bench.start()
    bench.join(2.0)
    released = time.monotonic()
    worker.release()
    bench.join(120)
    assert ended and ended[0][0] == 0
    assert ended[0][1] >= released, "tunefarm bench timed while a worker held a timing slot"
    (row,) = json.loads(capsys.readouterr().out)
    assert row["check"] == "ok" and row["tuned_us"] > 0
