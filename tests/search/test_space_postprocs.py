"""Spaces and postprocessors: sampled programs have the intended structure and compute the right thing."""
from __future__ import annotations

import numpy as np
import pytest

from tunefarm.ir import stmt as S
from tunefarm.runtime import build
from tunefarm.schedule import Schedule, ScheduleError
from tunefarm.search import block_info
from tunefarm.search.postprocs import PostprocError, apply_postprocs, default_postprocs, verify_program
from search_spaces.registry import create, resolve_space
from tunefarm.search.space import AutoSpace, ScheduleFn, SpaceError
from tunefarm.search.workloads import builtin_workload
from tunefarm.target import Target


def _loops(func):
    out = []
    stack = [func.body]
    while stack:
        n = stack.pop()
        if isinstance(n, S.For):
            out.append(n)
            stack.append(n.body)
        elif isinstance(n, S.SeqStmt):
            stack.extend(n.seq)
        elif isinstance(n, S.BlockRealize):
            stack.append(n.block.body)
    return out


def _check_numerics(orig, scheduled, target):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype(p.dtype) for p in orig.params]
    ref = [a.copy() for a in arrays]
    build(orig, target)["main"](*ref)
    got = [a.copy() for a in arrays]
    build(scheduled, target)["main"](*got)
    np.testing.assert_allclose(got[-1], ref[-1], rtol=1e-4, atol=1e-4)


def _first_accepted(space, func, seeds):
    """The first sample among ``seeds`` the postprocessors accept (they may reject one, e.g. for code size)."""
    for seed in seeds:
        sch = space.sample(func, seed)
        try:
            return apply_postprocs(sch, default_postprocs())
        except PostprocError:
            continue
    raise AssertionError(f"no sample of seeds {list(seeds)} passed the postprocessors")


def _without_code_size_check():
    """The postprocessors for hand-made schedules whose structure a test checks, whatever their size."""
    return [p for p in default_postprocs() if p.name != "verify_code_size"]


@pytest.mark.parametrize("name,seed", [("matmul-64", 0), ("matmul-64", 5), ("dense-relu-64-32", 2),
                                       ("conv2d-1x4x8x8-8x3x3", 1), ("add-64", 0)])
def test_auto_space_programs_are_correct(name, seed, target):
    func = builtin_workload(name)
    sch = _first_accepted(AutoSpace(n_cores=2), func, range(seed, seed + 20))
    out = sch.mod["main"]
    verify_program(out)
    assert not out.root_block.annotations  # the meta_schedule.* hints were consumed
    _check_numerics(func, out, target)


def test_auto_space_matmul_structure():
    func = builtin_workload("matmul-128")
    kinds_seen = set()
    for seed in range(12):
        sch = AutoSpace(n_cores=2).sample(func, seed)
        kinds = [i.kind for i in sch.trace.insts]
        assert kinds.count("SamplePerfectTile") >= 3  # i, j in 4 levels, k in 2
        assert "Reorder" in kinds
        tiles = [d for i, d in sch.trace.decisions.items() if sch.trace.insts[i].kind == "SamplePerfectTile"]
        assert sorted(len(d) for d in tiles)[:3] == [2, 4, 4]
        kinds_seen.add("CacheWrite" in kinds)
        apply_postprocs(sch, default_postprocs())
        func_out = sch.mod["main"]
        loops = _loops(func_out)
        assert sum(lp.kind == "parallel" for lp in loops) <= 2  # update nest + init share one, write-back
        for lp in loops:
            if lp.kind == "vectorized":
                assert lp.const_extent() <= 64
        assert all(r.block.init is None for r in _realizes(func_out))  # reductions were decomposed
    assert kinds_seen == {True, False}  # both sketches (with and without the local write cache) occur


def _realizes(func):
    out = []
    stack = [func.body]
    while stack:
        n = stack.pop()
        if isinstance(n, S.BlockRealize):
            out.append(n)
            stack.append(n.block.body)
        elif isinstance(n, S.For):
            stack.append(n.body)
        elif isinstance(n, S.SeqStmt):
            stack.extend(n.seq)
    return out


def test_auto_space_inlines_bias_into_relu_and_one_core_has_no_parallel():
    func = builtin_workload("dense-relu-64-32")
    sch = AutoSpace(n_cores=1).sample(func, 0)
    assert "T_add" not in block_info.leaf_blocks(sch.mod["main"])
    assert not any(i.kind == "SampleCategorical" and 1 in i.attrs[0] for i in sch.trace.insts)
    apply_postprocs(sch, default_postprocs())
    assert not any(lp.kind == "parallel" for lp in _loops(sch.mod["main"]))


def test_parallel_postproc_fuses_only_data_parallel_outer_loops(mm64):
    sch = Schedule(mm64)
    sch.annotate(sch.get_block("root"), "meta_schedule.parallel", 16)
    sch.annotate(sch.get_block("root"), "meta_schedule.vectorize", 64)
    sch.annotate(sch.get_block("root"), "meta_schedule.unroll_explicit", 16)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    i0, i1 = sch.split(i, factors=[4, 16])
    sch.reorder(i0, k, i1, j)
    apply_postprocs(sch, _without_code_size_check())
    loops = _loops(sch.mod["main"])
    par = [lp for lp in loops if lp.kind == "parallel"]
    # i0 (4) is data parallel; k would race, so it is not fused in even though 4 * 64 fits no limit
    assert [lp.const_extent() for lp in par] == [4]
    assert par[0].annotations.get("pragma_auto_unroll_max_step") == 16
    assert any(lp.kind == "vectorized" and lp.const_extent() == 64 for lp in loops)


def test_verify_rejects_racy_and_nested_parallel_loops(mm64):
    sch = Schedule(mm64)
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    sch.reorder(k, i, j)
    func = sch.mod["main"]
    outer = func.body.block.body
    assert isinstance(outer, S.For)
    racy = func.with_body(func.body.replace(block=func.body.block.replace(body=outer.replace(kind="parallel"))))
    with pytest.raises(PostprocError, match="reduction variable"):
        verify_program(racy)
    sch = Schedule(mm64)
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    func = sch.mod["main"]
    outer = func.body.block.body
    nested = func.with_body(func.body.replace(block=func.body.block.replace(
        body=outer.replace(body=outer.body.replace(kind="parallel")))))
    with pytest.raises(PostprocError, match="nested"):
        verify_program(nested)


def test_schedule_fn_space_and_resolution(mm64):
    def inplace(sch):
        sch.get_loops(sch.get_block("C"))

    sch = ScheduleFn(inplace).sample(mm64, 0)
    assert [i.kind for i in sch.trace.insts] == ["GetBlock", "GetLoops"]
    with pytest.raises(SpaceError, match="returned int"):
        ScheduleFn(lambda sch: 3).sample(mm64, 0)
    with pytest.raises(SpaceError, match="must be callable"):
        ScheduleFn(42)
    assert isinstance(resolve_space(None), AutoSpace)
    assert resolve_space("stochastic_schedule_mm").name == "stochastic_schedule_mm"
    assert resolve_space("search_spaces/dense.py:dense_bias_relu_space").fn.__name__ == "dense_bias_relu_space"
    with pytest.raises(SpaceError, match="unknown space"):
        resolve_space("no_such_space")
    with pytest.raises(SpaceError):
        resolve_space(3.5)


def test_a_space_is_created_by_name():
    target = Target("llvm -num-cores=4")
    auto = create("auto", target)
    assert type(auto) is AutoSpace and auto.init_args() == AutoSpace.for_target(target).init_args()
    assert resolve_space(None, target).init_args() == resolve_space("auto", target).init_args() == auto.init_args()
    named = create("stochastic_schedule_mm")
    assert type(named) is ScheduleFn and named.name == "stochastic_schedule_mm"
    assert named.origin == ("module", "search_spaces.matmul", "stochastic_schedule_mm")  # workers import it
    by_path = create("search_spaces/matmul.py:multi_level_tiling_mm")
    assert by_path.fn.__name__ == "multi_level_tiling_mm" and by_path.origin[0] == "module"
    with pytest.raises(SpaceError, match="unknown space 'annealed'"):
        create("annealed")


@pytest.mark.parametrize("space,workload", [("stochastic_schedule_mm", "matmul-64"),
                                            ("multi_level_tiling_mm", "matmul-64"),
                                            ("dense_bias_relu", "dense-relu-64-32"),
                                            ("conv2d", "conv2d-1x4x8x8-8x3x3"),
                                            ("elementwise", "add-64")])
def test_handwritten_spaces_are_correct(space, workload, target):
    func = builtin_workload(workload)
    sch = resolve_space(space).sample(func, 3)
    apply_postprocs(sch, default_postprocs())
    _check_numerics(func, sch.mod["main"], target)


def test_a_bad_decision_is_a_schedule_error(mm64):
    from search_spaces.matmul import stochastic_schedule_mm

    sch = stochastic_schedule_mm(Schedule(mm64, seed=0))
    idx = next(i for i, inst in enumerate(sch.trace.insts) if inst.kind == "SamplePerfectTile")
    with pytest.raises(ScheduleError):
        Schedule.from_trace(sch.trace.with_decision(idx, [3, 21]), mm64)


def test_rfactor_sketch_for_a_one_row_dense_layer(target):
    func = builtin_workload("dense-relu-64-32")
    assert block_info.rfactor_candidate(func, "T_matmul_NT", 4096) == 2  # k: innermost index of X and W
    assert block_info.rfactor_candidate(builtin_workload("matmul-128"), "C", 4096) is None  # 16384 outputs
    space = AutoSpace(n_cores=1)
    seeds = [s for s in range(40) if any(i.kind == "RFactor" for i in space.sample(func, s).trace.insts)]
    assert 4 <= len(seeds) <= 25  # one sketch of four
    out = _first_accepted(space, func, seeds).mod["main"]
    rf = block_info.locate(out, "T_matmul_NT_rf")
    inner = rf[1][-1]
    assert inner.kind == "vectorized"  # partial sums over k are vector lanes: contiguous loads of X and W
    _check_numerics(func, out, target)


def test_innermost_tiles_lean_towards_whole_vectors(mm128):
    space = AutoSpace(n_cores=1, vector_lanes=8)
    whole = 0
    for seed in range(40):
        trace = space.sample(mm128, seed).trace
        tiles = [d for i, d in sorted(trace.decisions.items()) if trace.insts[i].kind == "SamplePerfectTile"]
        j_tile = tiles[1]  # i, j (the output's contiguous dimension), k
        whole += j_tile[-1] % 8 == 0
    assert whole >= 24  # uniform tilings would give about a third


def test_packing_sketch_copies_b_panels_and_stays_correct(target):
    func = builtin_workload("matmul-64")
    assert block_info.packable_read(func, "C") == (1, {1})  # B[k, j]: ignores i, walks k down its rows
    assert block_info.packable_read(builtin_workload("dense-relu-64-32"), "T_matmul_NT") is None
    space = AutoSpace(n_cores=1)
    seeds = [s for s in range(30) if any(i.kind == "CacheRead" for i in space.sample(func, s).trace.insts)]
    assert seeds
    sch = space.sample(func, seeds[0])
    apply_postprocs(sch, default_postprocs())
    out = sch.mod["main"]
    panel, loops = block_info.locate(out, "B_local")
    assert panel.block.writes[0].buffer.scope == "local"
    # two copy loops (k, the panel's columns) under the two outer j tiles (the course's ``j`` is ``i1``):
    # every i tile below them reuses the panel
    assert len(loops) == 4 and [lp.loop_var.name[:3] for lp in loops[:2]] == ["i1_", "i1_"]
    assert loops[2].const_extent() == 64
    _check_numerics(func, out, target)


def test_auto_inline_keeps_padding_but_inlines_plain_elementwise_producers():
    """MetaSchedule's CPU rule: a conditional producer (padding) is not inlined; a plain one is."""
    from tunefarm import te

    conv = builtin_workload("conv2d-1x3x32x32-8x3x3-s2")  # padded (pad 1), stride 2
    assert block_info.has_conditional_value(conv, "pad_temp")
    A = te.placeholder((16, 16), "float32", "A")
    W = te.placeholder((16, 16), "float32", "W")
    scaled = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="scaled")
    k = te.reduce_axis((0, 16), "k")
    C = te.compute((16, 16), lambda i, j: te.sum(scaled[i, k] * W[k, j], axis=k), name="C")
    mm = te.create_prim_func([A, W, C])
    assert not block_info.has_conditional_value(mm, "scaled")
    rng = np.random.default_rng(0)
    for seed in range(4):
        got = AutoSpace(1).sample(conv, seed)
        assert "pad_temp" in block_info.leaf_blocks(got.mod["main"])
        sch = AutoSpace(1).sample(mm, seed)
        assert "scaled" not in block_info.leaf_blocks(sch.mod["main"])
    apply_postprocs(got, default_postprocs())
    arrays = [rng.uniform(-1, 1, p.const_shape()).astype("float32") for p in conv.params]
    expect = [a.copy() for a in arrays]
    build(conv, "llvm")["main"](*expect)
    build(got.mod["main"], "llvm")["main"](*arrays)
    np.testing.assert_allclose(arrays[-1], expect[-1], rtol=1e-4, atol=1e-4)
