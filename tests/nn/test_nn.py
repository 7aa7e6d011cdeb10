"""``tunefarm.nn``: PyTorch-style layers on numpy arrays, parameters, state dicts and export."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm
from tunefarm import nn
from tunefarm.graph.params import load_params


def _convnet():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, seed=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, stride=2, seed=2), nn.ReLU(), nn.Flatten(), nn.Linear(6, 5, seed=3))


def test_sequential_is_indexable_like_pytorch():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    assert len(model) == 3 and isinstance(model[0], nn.Linear) and isinstance(model[-1], nn.Linear)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear"]
    head = model[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is model[0]
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_parameters_are_numpy_and_assignable():
    layer = nn.Linear(4, 3)
    assert layer.weight.shape == (3, 4) and layer.bias.shape == (3,) and layer.weight.dtype == np.float32
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    layer.weight = w
    np.testing.assert_array_equal(layer.weight, w)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(layer(x), x @ w.T + layer.bias)
    with pytest.raises(ValueError, match=r"expected shape \(3, 4\), got \(4, 3\)"):
        layer.weight = w.T.copy()
    assert nn.Linear(4, 3, bias=False).bias is None
    with pytest.raises(RuntimeError, match="super\\(\\).__init__"):
        class Bad(nn.Module):
            def __init__(self):
                self.fc = nn.Linear(1, 1)

        Bad()


def test_state_dict_round_trip_and_errors(tmp_path):
    a, b = _convnet(), _convnet()
    for layer in b:
        if getattr(layer, "weight", None) is not None:
            layer.weight = layer.weight + 1
    path = tmp_path / "w.npz"
    np.savez(path, **a.state_dict())
    b.load_state_dict(load_params(path))
    x = np.random.default_rng(0).random((2, 1, 8, 8), dtype=np.float32)
    np.testing.assert_array_equal(a(x), b(x))
    c = _convnet()
    c[0].weight = c[0].weight * 2
    c.load_params(path)
    np.testing.assert_array_equal(a(x), c(x))
    with pytest.raises(KeyError, match="missing"):
        b.load_state_dict({"0.weight": a[0].weight})
    with pytest.raises(ValueError, match="expected shape"):
        b.load_state_dict({**a.state_dict(), "0.weight": np.zeros((1, 1), np.float32)})


def test_eager_layers_match_plain_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 7, 7)).astype(np.float32)
    conv = nn.Conv2d(3, 2, 3, stride=2, padding=1)
    ref = np.zeros((2, 2, 4, 4), np.float32)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for n in range(2):
        for o in range(2):
            for i in range(4):
                for j in range(4):
                    ref[n, o, i, j] = np.sum(xp[n, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] * conv.weight[o]) + conv.bias[o]
    np.testing.assert_allclose(conv(x), ref, rtol=1e-5, atol=1e-5)
    pool = nn.MaxPool2d(2)(x[:, :, :6, :6])
    np.testing.assert_array_equal(pool, x[:, :, :6, :6].reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5)))
    np.testing.assert_array_equal(nn.Flatten()(x), x.reshape(2, -1))
    np.testing.assert_array_equal(nn.ReLU()(x), np.maximum(x, 0))


def test_export_names_inputs_and_params_and_compiles_equal_to_eager():
    model = _convnet()
    mod, params = model.export({"forward": {"x": nn.spec.Tensor((2, 1, 8, 8), "float32")}})
    fn = mod["forward"]
    assert [p.name for p in fn.params] == ["x", *params]
    assert fn.attrs == {"num_input": 1}
    assert list(params) == ["p_0_weight", "p_0_bias", "p_3_weight", "p_3_bias", "p_6_weight", "p_6_bias"]
    x = np.random.default_rng(2).random((2, 1, 8, 8), dtype=np.float32)
    np.testing.assert_allclose(tunefarm.compile(mod, params)(x), model(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tunefarm.compile(mod)(x, *params.values()), model(x), rtol=1e-4, atol=1e-5)


def test_symbolic_batch_export():
    model = nn.Sequential(nn.Linear(5, 4), nn.ReLU())
    mod, params = model.export({"forward": {"x": nn.spec.Tensor(("batch", 5), "float32")}})
    exe = tunefarm.compile(mod, params)
    for n in (1, 7):
        x = np.random.default_rng(n).random((n, 5), dtype=np.float32)
        np.testing.assert_allclose(exe(x), model(x), rtol=1e-5, atol=1e-6)


def test_export_errors():
    class Leaky(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return nn.functional.linear(x, np.ones((3, 3), np.float32))

    with pytest.raises(ValueError, match="not a registered parameter"):
        Leaky().export({"forward": {"x": nn.spec.Tensor((1, 3), "float32")}})

    class Constant(nn.Module):
        def forward(self, x):
            return np.zeros(3)

    with pytest.raises(TypeError, match="must return a tensor"):
        Constant().export({"forward": {"x": nn.spec.Tensor((1, 3), "float32")}})
    with pytest.raises(tunefarm.graph.ShapeError, match="linear: x has 4 features, weight expects 3"):
        nn.Linear(3, 2).export({"forward": {"x": nn.spec.Tensor((1, 4), "float32")}})
