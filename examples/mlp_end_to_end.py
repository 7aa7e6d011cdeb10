"""The course's end-to-end flow for the FashionMNIST MLP, on tunefarm.

1. the numpy model (``relu(x @ w0.T + b0) @ w1.T + b1``);
2. the same model with ``tunefarm.nn`` (PyTorch-style layers) exported like ``export_tvm``;
3. tune every kernel of the model on a farm (``tunefarm.tune_model``, records in SQLite);
4. compile the whole model from the best traces (``tunefarm.compile``): one native function;
5. check it against numpy, save it, load it back, and time it against numpy;
6. the course's other route: tune ``linear0`` of ``MyModuleMixture`` on its own and swap it into the module.

    python examples/mlp_end_to_end.py --trials 64 [--params weights.npz]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import tunefarm  # noqa: E402
from tunefarm import nn  # noqa: E402
from tunefarm.farm import LocalFarm  # noqa: E402
from tunefarm.graph.params import find_mlp_params  # noqa: E402


def numpy_mlp(data, w0, b0, w1, b1):
    lv0 = data @ w0.T + b0
    lv1 = np.maximum(lv0, 0)
    lv2 = lv1 @ w1.T + b1
    return lv2


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear0 = nn.Linear(784, 128, bias=True)
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(128, 10, bias=True)

    def forward(self, x):
        x = self.linear0(x)
        x = self.relu(x)
        x = self.linear1(x)
        return x


def per_call_us(fn, *args, n=2000):
    fn(*args)
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - t0) / n * 1e6


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default=None, help="weights file (default: the course's, shipped with tunefarm)")
    p.add_argument("--trials", type=int, default=64, help="tuning budget for the whole model")
    p.add_argument("--db", default=None, help="trace database (default: a temporary file)")
    args = p.parse_args(argv)
    work = tempfile.mkdtemp(prefix="tunefarm-mlp-")
    db_path = args.db or os.path.join(work, "tune.sqlite")

    # 1. weights (the course's, shipped with tunefarm and checked by sha256; or --params PATH)
    mlp_params, source = find_mlp_params(args.params)
    print(f"weights: {source}")
    data = np.random.default_rng(0).random((1, 784), dtype=np.float32)  # a flattened 28x28 image in [0, 1)
    ref = numpy_mlp(data, **mlp_params)
    print("numpy prediction:", int(ref.argmax(1)[0]))

    # 2. nn.Module + export (the course's export_tvm), weights loaded from the course's names
    model = MLP()
    model.linear0.weight, model.linear0.bias = mlp_params["w0"], mlp_params["b0"]
    model.linear1.weight, model.linear1.bias = mlp_params["w1"], mlp_params["b1"]
    mod, params = model.export_tvm(spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    mod.show()

    # 3. tune (one job for all kernels; the task scheduler shares the budget)
    with LocalFarm(num_workers=2) as farm:
        result = tunefarm.tune_model(mod, params, max_trials=args.trials, database=db_path, farm=farm, seed=0)
        target = farm.target
    print(f"tuned {result.trials} trials in {result.wall_secs:.0f} s; records in {db_path}")

    # 4. compile the whole model from the database: one native function, one call from Python
    ex = tunefarm.compile(mod, params, database=db_path, target=target)
    print("kernels:", ex.kernels)
    out = ex(data)
    print(f"tunefarm prediction: {int(out.argmax(1)[0])}, max |diff| to numpy {np.abs(out - ref).max():.1e}")

    # 5. save / load (the load needs neither ray nor xgboost) and time against numpy
    path = os.path.join(work, "mlp.tfx")
    ex.save(path)
    loaded = tunefarm.load(path)
    assert np.array_equal(loaded(data), out)
    ours = per_call_us(loaded, data)
    theirs = per_call_us(numpy_mlp, data, *mlp_params.values())
    print(f"per call: tunefarm {ours:.2f} us, numpy {theirs:.2f} us ({theirs / ours:.2f}x)")

    # 6. the course's manual route: tune linear0 alone, then swap the tuned function into the module
    from course_modules import MyModuleMixture  # registers env.linear / env.relu (numpy)

    bound = tunefarm.graph.BindParams("main", mlp_params)(MyModuleMixture)
    # linear0 is written for any (1, m) x (n, m); the graph calls it with static shapes, which the pipeline
    # substitutes (SpecializeShapes) so the tuner gets constant loop extents
    static = tunefarm.graph.prepare(bound)["linear0"]
    bound = bound.with_function("linear0", static)
    with LocalFarm(num_workers=2) as farm:
        tunefarm.tune(static.with_name("main"), max_trials=min(args.trials, 32), database=db_path, farm=farm,
                      seed=0, task_name="linear0")
    from tunefarm.database import best_schedule

    best = best_schedule(tunefarm.Database(db_path), static, target)
    if best is not None:
        bound = bound.with_function("linear0", best.func.with_name("linear0"))
        print("linear0 replaced by its tuned version")
    ex2 = tunefarm.compile(bound, target=target)
    print(f"MyModuleMixture (linear0 {'tuned' if best else 'default'} + numpy env functions): max |diff| to "
          f"numpy {np.abs(ex2(data) - ref).max():.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
