"""A model compiled from a register-tile (micro-kernel) trace: the weights are stored as the kernel reads
them (contiguous ``[N / cols][K][cols]`` panels) and the whole model still equals numpy."""
from __future__ import annotations

import json

import numpy as np

import tunefarm
from tunefarm import nn
from tunefarm.database.records import Record
from tunefarm.runtime.measure_result import MeasureResult, MeasureStatus
from tunefarm.nn.models import mlp
from tunefarm.graph.pipeline import prepare
from tunefarm.graph.tasks import extract_tasks
from tunefarm.ir.serialize import to_json
from tunefarm.nn.models import mlp
from tunefarm.search.postprocs import apply_postprocs, default_postprocs
from tunefarm.search.space import AutoSpace
from tunefarm.target import Target

from graph_helpers import numpy_mlp


def _register_tile_trace(func, space):
    for seed in range(200):
        sch = space.sample(func, seed)
        tiles = [d for i, d in sorted(sch.trace.decisions.items()) if sch.trace.insts[i].kind == "SamplePerfectTile"]
        if any(i.kind == "CacheWrite" for i in sch.trace.insts) and len(tiles) == 3 and len(tiles[0]) == 4 \
                and tiles[0][2] == tiles[1][2] == 1 and tiles[0][3] == 4 and tiles[1][3] == 16:
            apply_postprocs(sch, default_postprocs())
            return sch.trace
    raise AssertionError("no 4 x 16 register tile in 200 samples")


def test_mlp_from_a_register_tile_trace_matches_numpy(tmp_path, mlp_params):
    target = Target("llvm -num-cores=1")
    mod, params = mlp(mlp_params).export({"forward": {"x": nn.spec.Tensor((16, 784), "float32")}})
    dense1 = extract_tasks(prepare(mod, params, None), prepared=True)[0]
    func = dense1.func.with_name("main")
    trace = _register_tile_trace(func, AutoSpace(n_cores=1, vector_lanes=8))
    db = tunefarm.Database(str(tmp_path / "micro.sqlite"))
    db.commit_workload(dense1.workload_key, dense1.name, json.dumps(to_json(func)))
    db.commit_records([Record(dense1.workload_key, trace.as_json(), None, str(target),
                              MeasureResult(MeasureStatus.OK, [1e-4], 0.1, None, "test"))])
    exe = tunefarm.compile(mod, params, database=db, target=target)
    assert exe.kernels[dense1.name] == "tuned" and exe.kind == "native"
    packed = [c for c in exe.constants if c.size == 784 * 128]
    assert len(packed) == 1 and packed[0].shape[-1] == 16  # the weights: panels of 16 columns
    w_t = mlp_params["w0"].T  # [784, 128] as the kernel indexes it
    # the column tiles come first and K before the tile's 16 columns: whatever the outer splits, the
    # constant is [128 / 16][784][16], panel p holding columns 16p .. 16p + 15 for all of K, contiguous
    panels = packed[0].reshape(8, 784, 16)
    for p in (0, 3, 7):
        np.testing.assert_array_equal(panels[p], w_t[:, 16 * p:16 * p + 16])
    xs = np.random.default_rng(7).random((20, 16, 784), dtype=np.float32)
    got = np.stack([exe(x) for x in xs])
    ref = np.stack([numpy_mlp(x, mlp_params) for x in xs])
    assert np.max(np.abs(got - ref)) <= 1e-4 and np.array_equal(got.argmax(-1), ref.argmax(-1))
