"""Apache TVM 0.27 MetaSchedule on tunefarm's benchmark workloads, run here, so benchmarks print measured ratios.

    python benchmarks/tvm_side.py --workload matmul-128 --trials 256 [--json]
    python benchmarks/tvm_side.py --workload mlp --trials 256 [--batch 1 --batch 64] [--params w.npz] [--json]

Kernels (``matmul-N``, ``matmul-MxNxK``, ``dense-relu-IN-OUT``, ``conv2d-NxCxHxW-FxKHxKW``; the same math as
``tunefarm.search.workloads.builtin_workload``, see ``tvm_workloads.py``): ``tune_tir`` with the stock
evolutionary search + XGBoost model in a temporary work dir, then the five best records are rebuilt and re-timed
with ``time_evaluator`` (number=1, repeat=30, min_repeat_ms=2, median: the same protocol as bench_tune's
``remeasure``), checked against numpy; reported: best latency (us), trials run, tuning wall seconds, trials/s.
``mlp``: the course MLP 784-128-ReLU-10 as Relax with the weights bound, tuned per batch size with
``tune_relax`` on the legalized + fused module and compiled with ``compile_relax`` from the ORIGINAL module
(given the fused module it silently finds no record); the records found for the fused kernels are counted
(``tuned_kernels``), the output is checked against numpy, and one call through Python is timed like
bench_model (median over rounds of ~0.1 s loops): ``call_numpy_us`` numpy in -> numpy out, the interface of
tunefarm's ``exe(x)``, by TVM's cheapest route (x copied into a staged aligned TVM tensor through a numpy
view, result returned as a zero-copy numpy view); ``call_numpy_naive_us`` the same through
``tvm.runtime.tensor(x)`` / ``.numpy()`` (85-110 us of conversions here); ``call_tensor_us`` with TVM tensors in
and out; ``native_us`` the VM's time_evaluator.

Target: ``{"kind": "llvm", "mcpu": <host cpu, as llvmlite names it>, "num-cores": 1}`` and
``TVM_NUM_THREADS=1`` (``--mcpu`` / ``--cores`` to change). Pitfalls handled:
apache-tvm-ffi must be 0.1.14.post1; the stock builder re-imports ``tvm.s_tir.tensor_intrin`` in every
worker and times out, so ``_build_without_intrin_import`` replaces it; ``compile_tir`` is given
``mod["main"]``. The benchmarks call ``run_tvm`` / ``run_tvm_mlp``, which run this file in a subprocess (own
process group, killed whole on a timeout) with its own TMPDIR (a crash cannot leave TVM's per-build temp
dirs behind), so TVM's threads, worker pools and crashes never touch tunefarm's process; only
``tvm_available`` and the subprocess helpers are imported there. Without ``--params`` the MLP gets seeded
random weights (tunefarm's ``random_mlp_params`` recipe); the weights do not change its latency.

Install (never a tunefarm dependency):
    pip install apache-tvm "apache-tvm-ffi==0.1.14.post1" psutil cloudpickle

Measured on this machine (AMD Zen 3, ``mcpu=znver3``, AVX2+FMA, 1 core, 2 cores shared with other jobs),
apache-tvm 0.27.0.post1, 256 trials each, one run of
    for w in matmul-128 matmul-512 dense-relu-784-128 conv2d-1x64x28x28-64x3x3 mlp; do
        python benchmarks/tvm_side.py --workload $w --trials 256; done
(2026-11-21, load average 1.6-2.8 from other jobs; trials/s excludes the one-time 40-51 s import of TVM's
tensor intrinsics per process; "retimed" = best median of the top 5 re-timed, "tuning" = MetaSchedule's own):

    workload                    retimed us   tuning us   trials   wall s   trials/s
    matmul-128                        47.8        47.9      256      165       1.56
    matmul-512                      3465        3418        256      162       1.58
    dense-relu-784-128                20.6        18.3      256      162       1.58
    conv2d-1x64x28x28-64x3x3        1011         958        256      334       0.77
    mlp batch 1  (per call)           14.0 numpy->numpy, 10.8 TVM tensors, 7.1 native, 98.8 via
                                      tvm.runtime.tensor/.numpy(); 256 trials, 131 s, 1.96 trials/s
    mlp batch 64 (per call)          195.6 numpy->numpy, 182.7 TVM tensors, 173.6 native, 304.5 via
                                      tvm.runtime.tensor/.numpy(); 256 trials, 138 s, 1.85 trials/s

(For comparison, TVM's figures measured on a znver4 / AVX-512 machine: 36.0 us, 2.34 ms, 10.1 us; MLP 5.1
and 116 us; 2.3-3.3 trials/s.) All outputs matched numpy; both MLP kernels had records at both batch sizes.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

RESULT_KEY = "tvm_side"  # the JSON line a subprocess prints carries this key
SCRIPT = os.path.abspath(__file__)
KERNELS_TOP_K = 5
_LOG_LEVEL = {"level": None}  # MetaSchedule's console level; None keeps its own (INFO/DEBUG)


# ----------------------------------------------------------------------------- caller side (no tvm import)
def tvm_available() -> bool:
    """True when ``import tvm`` would find a package (checked without importing it into this process)."""
    return importlib.util.find_spec("tvm") is not None


def host_cpu() -> str:
    """LLVM's name of this CPU (``znver3`` here), as tunefarm's host target names it."""
    try:
        import llvmlite.binding as llvm

        return llvm.get_host_cpu_name()
    except Exception:  # llvmlite missing or broken: let TVM ask LLVM itself
        return ""


def _parse_result(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{") and RESULT_KEY in line:
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and obj.get(RESULT_KEY) == 1:
                return obj
    return None


def run_tvm(workload: str, trials: int, *, mcpu: str | None = None, cores: int = 1, seed: int = 0,
            timeout: float | None = None, extra_args: tuple = ()) -> dict:
    """Run this file for ``workload`` in a fresh Python process; returns its result dict.

    On any failure (TVM missing, crash, timeout, no result line) the dict has an ``error`` key with the
    reason and the tail of the subprocess's output, so a benchmark can print it and carry on.
    """
    cmd = [sys.executable, SCRIPT, "--workload", workload, "--trials", str(trials), "--cores", str(cores),
           "--seed", str(seed), "--json", *map(str, extra_args)]
    if mcpu is None:
        mcpu = host_cpu()
    if mcpu:
        cmd += ["--mcpu", mcpu]
    with tempfile.TemporaryDirectory(prefix="tvm_side-") as tmp:
        env = dict(os.environ, TMPDIR=tmp, TVM_SIDE_TMP=tmp, TVM_NUM_THREADS=str(cores), OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        t0 = time.perf_counter()
        # its own process group: on a timeout, TVM's builder/runner worker processes go down with it
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            return {"workload": workload, "error": f"TVM timed out after {timeout:.0f} s",
                    "log": (stderr or stdout or "")[-2000:]}
        wall = time.perf_counter() - t0
    result = _parse_result(stdout)
    if result is None or proc.returncode != 0:
        tail = (stderr or stdout or "")[-2000:]
        return {"workload": workload, "error": f"TVM subprocess exited with {proc.returncode} and "
                f"{'no' if result is None else 'a'} result line", "log": tail}
    result["process_wall_s"] = wall
    return result


def run_tvm_mlp(params: dict, trials: int, batches=(1, 64), *, seed: int = 0, rounds: int = 7,
                seconds: float = 0.1, **kw) -> dict:
    """TVM's tuned Relax MLP with exactly these weights (handed over as an .npz, never a pickle)."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="tvm_side-params-") as tmp:
        path = os.path.join(tmp, "mlp_params.npz")
        np.savez(path, **{k: np.asarray(params[k], dtype="float32") for k in ("w0", "b0", "w1", "b1")})
        extra = ["--params", path, "--rounds", rounds, "--seconds", seconds]
        for b in batches:
            extra += ["--batch", b]
        return run_tvm("mlp", trials, seed=seed, extra_args=tuple(extra) + tuple(kw.pop("extra_args", ())), **kw)


# ----------------------------------------------------------------------------- TVM side (subprocess)
def _build_without_intrin_import(mod, target, _params):
    """MetaSchedule's ``default_build`` minus ``import tvm.s_tir.tensor_intrin`` (~20 s per fresh worker)."""
    from tvm.driver import build as tvm_build
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm_build(mod, target=target)


def _target(mcpu: str, cores: int):
    import tvm

    spec = {"kind": "llvm", "num-cores": cores}
    if mcpu:
        spec["mcpu"] = mcpu
    return tvm.target.Target(spec)


def _builder():
    from tvm.s_tir import meta_schedule as ms

    return ms.builder.LocalBuilder(f_build=_build_without_intrin_import, timeout_sec=60.0)


def _quiet_logs() -> None:
    """Reset MetaSchedule's console level before each tuning call: every call re-creates its loggers and
    adopts the logger's current level, which the previous call left at DEBUG."""
    if _LOG_LEVEL["level"] is not None:
        import logging

        logging.getLogger("tvm.s_tir.meta_schedule").setLevel(_LOG_LEVEL["level"])


def _setup_seconds() -> float:
    """Import ``tvm.s_tir.tensor_intrin`` now and return how long it took.

    ``TuneContext`` imports it unconditionally (TVMScript-parses ~250 intrinsics: 20-80 s here, once per
    process); done before the clock starts so the tuning wall and trials/s are not charged for it, like
    tunefarm's, which start after its farm is up. Reported separately as ``setup_s``.
    """
    t0 = time.perf_counter()
    import tvm.s_tir.tensor_intrin  # noqa: F401

    return time.perf_counter() - t0


def _trial_counts(db) -> tuple[int, int]:
    """(records committed = trials run, records with a valid run time)."""
    recs = db.get_all_tuning_records()
    ok = sum(1 for r in recs if r.run_secs and all(float(s) < 1e9 for s in r.run_secs))
    return len(recs), ok


def tune_kernel(name: str, trials: int, mcpu: str, cores: int = 1, seed: int = 0,
                trials_per_iter: int = 64) -> dict:
    """Tune one kernel with ``tune_tir``; re-time the best records here; see the module doc."""
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.schedule import Schedule

    from tvm_workloads import kernel_workload

    mod, ref, in_shapes, out_shape = kernel_workload(name)
    target = _target(mcpu, cores)
    rng = np.random.default_rng(1)
    inputs = [rng.uniform(-1, 1, s).astype("float32") for s in in_shapes]
    expect = ref(*inputs)
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a, dev) for a in inputs] + [tvm.runtime.tensor(np.zeros(out_shape, "float32"), dev)]
    setup = _setup_seconds()
    _quiet_logs()
    with tempfile.TemporaryDirectory(prefix="tvm_tune-") as work_dir:
        t0 = time.perf_counter()
        db = ms.tune_tir(mod, target, work_dir, max_trials_global=trials,
                         num_trials_per_iter=min(trials_per_iter, trials), builder=_builder(), seed=seed)
        wall = time.perf_counter() - t0
        n_trials, n_ok = _trial_counts(db)
        records = db.get_top_k(db.commit_workload(mod), KERNELS_TOP_K)
        if not records:
            raise RuntimeError(f"TVM found no valid schedule for {name} in {n_trials} trials")
        db_best_us = min(float(np.mean([float(s) for s in r.run_secs])) for r in records) * 1e6
        best_us, max_err = float("inf"), None
        for rec in records:  # the same re-timing protocol as bench_tune's remeasure
            sch = Schedule(rec.workload.mod)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
            lib = tvm.compile(sch.mod, target=target).mod
            timer = lib.time_evaluator("main", dev, number=1, repeat=30, min_repeat_ms=2)
            us = statistics.median(timer(*args).results) * 1e6
            lib["main"](*args)
            err = float(np.max(np.abs(args[-1].numpy() - expect)))
            if err > 1e-3 * max(1.0, float(np.max(np.abs(expect)))):
                raise RuntimeError(f"TVM's {name} schedule differs from numpy by {err:.2e}")
            if us < best_us:
                best_us, max_err = us, err
        best_sch = ms.tir_integration.compile_tir(db, mod["main"], target)  # TVM's own pick, as a cross-check
        picked = best_sch is not None
    return {"workload": name, "best_us": best_us, "db_best_us": db_best_us, "trials": n_trials,
            "valid_trials": n_ok, "wall_s": wall, "trials_per_s": n_trials / wall if wall > 0 else None,
            "setup_s": setup, "max_abs_err": max_err, "compile_tir_found": picked, "retimed_top_k": len(records)}


def _per_call_us(fn, seconds: float) -> float:
    """Mean per-call time of ``fn()`` over a loop of about ``seconds`` (bench_model's per_call_us)."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return dt / n * 1e6
        n = n * 2 if dt < seconds / 8 else int(n * seconds / max(dt, 1e-9)) + 1


def _fuse_for_tuning(mod, target):
    """The preparation ``compile_relax`` applies before ``MetaScheduleApplyDatabase`` (so task keys match)."""
    import tvm
    from tvm import relax
    from tvm.relax import pipeline as rp

    try:
        dispatch = list(rp.library_dispatch_passes(target))
    except (ValueError, AttributeError):
        dispatch = []
    seq = [*dispatch, relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
           relax.transform.FoldConstant(), relax.transform.FuseOps(), relax.transform.FuseTIR()]
    with target:
        return tvm.transform.Sequential(seq)(mod)


def _count_tuned_kernels(db, fused, target) -> tuple[int, int]:
    """(kernels the database schedules, kernels) of the fused module: shows the records were found."""
    import tvm
    from tvm.relax.transform import MetaScheduleApplyDatabase

    with target, db, tvm.transform.PassContext(opt_level=3):
        applied = MetaScheduleApplyDatabase()(fused)
    kernels = [gv for gv in applied.functions if isinstance(applied[gv], tvm.tirx.PrimFunc)]
    tuned = [gv for gv in kernels if applied[gv].attrs and applied[gv].attrs.get("tirx.is_scheduled")]
    return len(tuned), len(kernels)


def tune_mlp(params: dict, trials: int, batches, mcpu: str, cores: int = 1, seed: int = 0,
             trials_per_iter: int = 64, rounds: int = 7, seconds: float = 0.1) -> dict:
    """Tune and time the Relax MLP for each batch size; see the module doc."""
    import numpy as np
    import tvm
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms

    from tvm_workloads import mlp_module, mlp_reference

    target = _target(mcpu, cores)
    dev = tvm.cpu()
    out = {"workload": "mlp", "batches": {}, "setup_s": _setup_seconds()}
    for batch in batches:
        mod = mlp_module(params, batch)
        fused = _fuse_for_tuning(mod, target)
        _quiet_logs()
        with tempfile.TemporaryDirectory(prefix="tvm_tune-") as work_dir:
            t0 = time.perf_counter()
            db = ms.relax_integration.tune_relax(fused, {}, target, work_dir, max_trials_global=trials,
                                                 num_trials_per_iter=min(trials_per_iter, trials),
                                                 builder=_builder(), seed=seed)
            wall = time.perf_counter() - t0
            n_trials, n_ok = _trial_counts(db)
            tuned, kernels = _count_tuned_kernels(db, fused, target)
            exe = ms.relax_integration.compile_relax(db, mod, target, None)  # the ORIGINAL module
        vm = relax.VirtualMachine(exe, dev)
        f = vm["main"]
        x = np.random.default_rng(seed).random((batch, 784), dtype=np.float32)  # bench_model's input
        xt = tvm.runtime.tensor(x, dev)
        err = float(np.max(np.abs(f(xt).numpy() - mlp_reference(x, params))))
        if err > 1e-4:
            raise RuntimeError(f"TVM's MLP (batch {batch}) differs from numpy by {err:.2e}")

        # numpy in, numpy out (what tunefarm's exe(x) does), TVM's cheapest way: x copied into a staged
        # 64-byte-aligned TVM tensor through a numpy view (from_dlpack refuses numpy's own alignment, and
        # tvm.runtime.tensor(x) costs ~50 us here), the result returned as a zero-copy numpy view.
        staged = tvm.runtime.empty((batch, 784), "float32", dev)
        staged_np = np.from_dlpack(staged)

        def call_numpy():
            staged_np[...] = x
            return np.from_dlpack(f(staged))

        def call_numpy_naive():  # the documented conversions: tvm.runtime.tensor in, .numpy() out
            return f(tvm.runtime.tensor(x, dev)).numpy()

        def call_tensor():
            return f(xt)

        first = call_numpy()
        staged_np[...] = 0
        np.from_dlpack(f(staged))
        if not np.allclose(first, mlp_reference(x, params), atol=1e-4):  # views stay valid after later calls
            raise RuntimeError("TVM's VM reused the output buffer: numpy views of it are not results")

        contenders = {"call_numpy_us": call_numpy, "call_numpy_naive_us": call_numpy_naive,
                      "call_tensor_us": call_tensor}
        times = {k: [] for k in contenders}
        for fn in contenders.values():
            fn()
        for _ in range(rounds):
            for k, fn in contenders.items():
                times[k].append(_per_call_us(fn, seconds))
        native = vm.time_evaluator("main", dev, number=1, repeat=30, min_repeat_ms=2)(xt)
        out["batches"][str(batch)] = {
            **{k: statistics.median(v) for k, v in times.items()},
            "native_us": statistics.median(native.results) * 1e6, "trials": n_trials, "valid_trials": n_ok,
            "wall_s": wall, "trials_per_s": n_trials / wall if wall > 0 else None, "max_abs_err": err,
            "tuned_kernels": tuned, "kernels": kernels}
    return out


def _load_params(path: str | None, seed: int) -> tuple[dict, str]:
    import numpy as np

    if path is None:
        rng = np.random.default_rng(seed)  # the recipe of tunefarm.graph.params.random_mlp_params(seed)
        return {"w0": (rng.standard_normal((128, 784)) * 0.05).astype("float32"),
                "b0": (rng.standard_normal(128) * 0.05).astype("float32"),
                "w1": (rng.standard_normal((10, 128)) * 0.1).astype("float32"),
                "b1": (rng.standard_normal(10) * 0.1).astype("float32")}, f"seeded random weights (seed {seed})"
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k].astype("float32") for k in ("w0", "b0", "w1", "b1")}, path
    from tunefarm.graph.params import load_params  # the course .pkl, through tunefarm's safe reader

    return {k: np.asarray(v, dtype="float32") for k, v in load_params(path).items()}, path


def _print_human(res: dict) -> None:
    if res["workload"] == "mlp":
        for b, r in res["batches"].items():
            print(f"mlp batch {b}: {r['call_numpy_us']:.2f} us per call numpy->numpy ({r['call_numpy_naive_us']:.2f} "
                  f"via tvm.runtime.tensor/.numpy()), {r['call_tensor_us']:.2f} us with TVM tensors, "
                  f"{r['native_us']:.2f} us native; {r['trials']} trials "
                  f"({r['valid_trials']} valid) in {r['wall_s']:.0f} s = {r['trials_per_s']:.2f} trials/s; "
                  f"{r['tuned_kernels']}/{r['kernels']} kernels tuned; max err {r['max_abs_err']:.1e}")
    else:
        print(f"{res['workload']}: best {res['best_us']:.2f} us (tuning measured {res['db_best_us']:.2f}); "
              f"{res['trials']} trials ({res['valid_trials']} valid) in {res['wall_s']:.0f} s = "
              f"{res['trials_per_s']:.2f} trials/s; max err {res['max_abs_err']:.1e}")
    print(f"target {res['target']}, TVM {res['tvm_version']}; one-time import of TVM's tensor intrinsics "
          f"{res['setup_s']:.0f} s (not in the tuning wall)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True, help="matmul-128, dense-relu-784-128, conv2d-..., or mlp")
    ap.add_argument("--trials", type=int, default=256, help="tuning budget (per batch size for mlp)")
    ap.add_argument("--trials-per-iter", type=int, default=64, help="MetaSchedule's num_trials_per_iter")
    ap.add_argument("--mcpu", default=None, help="LLVM cpu name (default: this host's, from llvmlite)")
    ap.add_argument("--cores", type=int, default=1, help="target num-cores and TVM_NUM_THREADS")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, action="append", help="mlp batch sizes (default 1 and 64)")
    ap.add_argument("--params", default=None, help="mlp weights: .npz (w0,b0,w1,b1) or the course .pkl")
    ap.add_argument("--rounds", type=int, default=7, help="mlp timing rounds (median)")
    ap.add_argument("--seconds", type=float, default=0.1, help="mlp: length of one timing loop")
    ap.add_argument("--json", action="store_true", help="print one JSON result line (for the benchmarks)")
    ap.add_argument("--verbose", action="store_true", help="keep MetaSchedule's INFO logging")
    args = ap.parse_args(argv)
    if args.trials < 1:
        ap.error("--trials must be at least 1")
    if os.environ.get("TVM_SIDE_TMP") is None:  # run directly: keep the builder's temp dirs in one of ours
        with tempfile.TemporaryDirectory(prefix="tvm_side-") as tmp:
            os.environ.update(TMPDIR=tmp, TVM_SIDE_TMP=tmp)
            tempfile.tempdir = None  # re-read TMPDIR here; the worker processes inherit it
            try:
                return _run(args)
            finally:
                tempfile.tempdir = None
    return _run(args)


def _run(args) -> int:
    os.environ["TVM_NUM_THREADS"] = str(args.cores)  # before tvm starts its thread pool
    sys.path.insert(0, os.path.dirname(SCRIPT))  # tvm_workloads.py
    import logging

    logging.basicConfig(level=logging.WARNING)
    if not args.verbose:
        _LOG_LEVEL["level"] = logging.WARNING
    import tvm

    mcpu = host_cpu() if args.mcpu is None else args.mcpu
    t0 = time.perf_counter()
    if args.workload == "mlp":
        params, source = _load_params(args.params, args.seed)
        res = tune_mlp(params, args.trials, args.batch or [1, 64], mcpu, args.cores, args.seed,
                       args.trials_per_iter, args.rounds, args.seconds)
        res["params"] = source
    else:
        res = tune_kernel(args.workload, args.trials, mcpu, args.cores, args.seed, args.trials_per_iter)
    res.update({RESULT_KEY: 1, "tvm_version": tvm.__version__, "target": str(_target(mcpu, args.cores)),
                "total_s": time.perf_counter() - t0})
    if args.json:
        print(json.dumps(res), flush=True)
    else:
        _print_human(res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
