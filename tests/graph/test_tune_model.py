"""``tune_model`` drives the task scheduler on a farm; ``compile`` then uses the best trace of every kernel."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.graph import extract_tasks
from tunefarm.ir.structural import workload_key
from tunefarm.nn.models import mlp

from graph_helpers import numpy_mlp


@pytest.fixture(scope="module")
def farm():
    from tunefarm.farm import LocalFarm

    with LocalFarm(num_workers=2) as f:
        yield f


def test_tuned_mlp_compiles_from_the_database_and_matches_numpy(farm, tmp_path, mlp_params):
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    db = tunefarm.Database(str(tmp_path / "mlp.sqlite"))
    result = tunefarm.tune_model(mod, params, max_trials=8, database=db, farm=farm, seed=1)
    assert result.trials == 8
    tasks = extract_tasks(mod, params)
    best = {t.name: db.best(workload_key(t.func), target=str(farm.target)) for t in tasks}
    assert any(rec is not None for rec in best.values())
    exe = tunefarm.compile(mod, params, database=db, target=farm.target)
    for name, rec in best.items():
        assert exe.kernels[name] == ("tuned" if rec is not None else "default")
    rng = np.random.default_rng(3)
    xs = rng.random((200, 1, 784), dtype=np.float32)
    got = np.stack([exe(x) for x in xs])[:, 0]
    ref = numpy_mlp(xs[:, 0], mlp_params)
    assert np.max(np.abs(got - ref)) <= 1e-4 and np.array_equal(got.argmax(1), ref.argmax(1))
    # a rerun with the same budget resumes: nothing new is measured
    again = tunefarm.tune_model(mod, params, max_trials=8, database=db, farm=farm, seed=1)
    assert again.trials == 0


def test_conv_net_tunes_and_matches_numpy(farm, tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, seed=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3, seed=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 3 * 3, 10, seed=3))
    mod, params = model.export({"forward": {"x": nn.spec.Tensor((2, 1, 16, 16), "float32")}})
    names = [t.name for t in extract_tasks(mod, params)]
    assert names == ["fused_conv2d_add_relu", "max_pool2d", "fused_conv2d1_add1_relu1",
                     "fused_max_pool2d1_flatten", "fused_matmul_add2"]
    db = tunefarm.Database(str(tmp_path / "conv.sqlite"))
    tunefarm.tune_model(mod, params, max_trials=10, database=db, farm=farm, seed=2)
    exe = tunefarm.compile(mod, params, database=db, target=farm.target)
    assert "tuned" in exe.kernels.values()
    x = np.random.default_rng(4).random((2, 1, 16, 16), dtype=np.float32)
    np.testing.assert_allclose(exe(x), model(x), rtol=1e-4, atol=1e-5)
