"""The optional PyTorch importer (torch.fx): the course's models import, compile and match torch."""
from __future__ import annotations

import numpy as np
import pytest

import tunefarm

from tunefarm.graph.frontend_torch import UnsupportedTorchOp, from_fx, from_torch

pytestmark = pytest.mark.torch
torch = None  # bound by the fixture below, so the default run (torch deselected) neither imports nor skips


@pytest.fixture(scope="module", autouse=True)
def _import_torch():
    global torch
    torch = pytest.importorskip("torch")


def _torch_out(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def test_course_mlp_with_real_weights(mlp_params):
    import torch.fx as fx
    from torch import nn

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

    model = MLP()
    model.linear0.weight.data = torch.from_numpy(mlp_params["w0"])
    model.linear0.bias.data = torch.from_numpy(mlp_params["b0"])
    model.linear1.weight.data = torch.from_numpy(mlp_params["w1"])
    model.linear1.bias.data = torch.from_numpy(mlp_params["b1"])
    mod = from_fx(fx.symbolic_trace(model), [((1, 784), "float32")])
    assert [c.op for c in mod["main"].calls()] == ["dense", "relu", "dense"]
    exe = tunefarm.compile(mod)
    x = np.random.default_rng(0).random((1, 784), dtype=np.float32)
    np.testing.assert_allclose(exe(x), _torch_out(model, x), atol=1e-4)


def test_matmul_relu_model_from_the_course():
    from torch import nn

    class MyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(128, 128))

        def forward(self, x):
            x = torch.matmul(x, self.weight)
            x = torch.relu(x)
            return x

    model = MyModel()
    mod = from_torch(model, [((1, 128), "float32")])
    assert [c.op for c in mod["main"].calls()] == ["matmul", "relu"]
    x = np.random.default_rng(1).standard_normal((1, 128)).astype(np.float32)
    np.testing.assert_allclose(tunefarm.compile(mod)(x), _torch_out(model, x), rtol=1e-4, atol=1e-4)


def test_conv_net_with_params_as_inputs():
    from torch import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, stride=1),
                        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 6 * 6, 16), nn.ReLU(),
                        nn.Linear(16, 10))
    mod, params = from_torch(net, [((2, 1, 28, 28), "float32")], keep_params_as_input=True)
    assert sorted(params) == sorted(k.replace(".", "_") if not k[0].isdigit() else "p_" + k.replace(".", "_")
                                    for k in net.state_dict())
    x = np.random.default_rng(2).random((2, 1, 28, 28), dtype=np.float32)
    np.testing.assert_allclose(tunefarm.compile(mod, params)(x), _torch_out(net, x), rtol=1e-4, atol=1e-4)


def test_functional_forms_and_unsupported_ops():
    from torch import nn
    import torch.nn.functional as F

    class Functional(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(12, 6)

        def forward(self, x):
            y = F.relu(x.view(x.size(0), -1))
            return F.linear(y, self.fc.weight, self.fc.bias) + self.fc(y)

    model = Functional()
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    mod = from_torch(model, [((2, 3, 4), "float32")])
    np.testing.assert_allclose(tunefarm.compile(mod)(x), _torch_out(model, x), rtol=1e-5, atol=1e-5)

    class Softmaxed(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    with pytest.raises(UnsupportedTorchOp, match="softmax"):
        from_torch(Softmaxed(), [((1, 4), "float32")])
    with pytest.raises(ValueError, match="input_info describes 2"):
        from_torch(Softmaxed(), [((1, 4), "float32"), ((1, 4), "float32")])
