"""Search work as a worker does it (``search/generate.py``) and the specs that rebuild a task there."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest

from search_spaces.matmul import stochastic_schedule_mm
from search_spaces.registry import resolve_space
from tunefarm.ir.serialize import to_json
from tunefarm.ir.structural import structural_equal
from tunefarm.schedule import Schedule, Trace
from tunefarm.search.features import extract_features
from tunefarm.search.generate import TaskCache, decode_features, generate
from tunefarm.search.postprocs import Postproc, VerifyCodeSize, default_postprocs
from tunefarm.search.program import program_hash
from tunefarm.search.space import AutoSpace, ScheduleFn
from tunefarm.search.task_spec import postprocs_from_spec, postprocs_spec, space_from_spec, space_spec

from search_work import task_cache


def test_every_reply_row_describes_its_program_exactly(mm64):
    cache = task_cache(mm64, AutoSpace(n_cores=1), seed=3)
    reply = generate(cache, {"fresh": 6, "seed": 1})
    assert reply["valid"] >= 6 and len(reply["programs"]) >= 1
    for h, trace, feats, sketch, origin in reply["programs"]:
        # the full trace, as the farm replays it
        func = Schedule.from_trace(Trace.from_json(json.loads(trace)), mm64).mod["main"]
        assert program_hash(func) == h and origin == "fresh" and len(sketch) == 12
        np.testing.assert_array_equal(decode_features(feats), extract_features(func, 1).astype(np.float32))
        assert structural_equal(cache.scheduled(h), func)  # kept for measuring without a replay


def test_designs_are_evaluated_in_order_and_bad_ones_are_none(mm64):
    cache = task_cache(mm64, AutoSpace(n_cores=1), seed=0)
    first = generate(cache, {"fresh": 3, "seed": 5})["programs"]
    texts = [row[1] for row in first]
    reply = generate(task_cache(mm64, AutoSpace(n_cores=1)), {"designs": [texts[0], "[[\"Nope\"]]", texts[1],
                                                                          texts[0]], "seed": 0})
    ev = reply["evaluated"]
    assert ev[1] is None and ev[0] == ev[3] and ev[0] != ev[2]
    assert [reply["programs"][i][0] for i in (ev[0], ev[2])] == [first[0][0], first[1][0]]
    assert reply["invalid"] == 1 and all(r[4] == "design" for r in reply["programs"])


def test_a_program_sampled_again_is_described_from_the_worker_cache(mm64, monkeypatch):
    import tunefarm.search.generate as gen

    cache = task_cache(mm64, AutoSpace(n_cores=1), seed=0)
    first = generate(cache, {"fresh": 3, "seed": 5})["programs"]
    calls = []
    real = gen.extract_features
    monkeypatch.setattr(gen, "extract_features", lambda *a: calls.append(a) or real(*a))
    again = generate(cache, {"designs": [row[1] for row in first], "seed": 0})["programs"]
    assert [row[:4] for row in again] == [row[:4] for row in first]  # the same descriptions, origin aside
    assert calls == []  # not featurized a second time


def test_mutants_and_local_steps_keep_their_parents_sketch(mm64):
    cache = task_cache(mm64, AutoSpace(n_cores=1), seed=2)
    parent = generate(cache, {"fresh": 1, "seed": 0})["programs"][0]
    reply = generate(cache, {"mutate": [[parent[1], 6]], "local": [[parent[1], 4]], "seed": 9})
    origins = {r[4] for r in reply["programs"]}
    assert origins <= {"mutant", "local"} and reply["programs"]
    assert {r[3] for r in reply["programs"]} == {parent[3]}


def test_a_space_that_raises_is_reported_not_raised(mm64):
    def buggy(sch):
        raise KeyError("oops")

    reply = generate(task_cache(mm64, ScheduleFn(buggy)), {"fresh": 2, "seed": 0})
    assert "raised KeyError" in reply["error"]


def test_auto_space_spec_rebuilds_the_same_space(mm64):
    space = AutoSpace.for_target("llvm -num-cores=2")
    again = space_from_spec(json.loads(json.dumps(space_spec(space))))
    assert vars(again).keys() == vars(space).keys()
    assert structural_equal(again.sample(mm64, 7).mod["main"], space.sample(mm64, 7).mod["main"])


def test_schedule_functions_are_found_by_module_or_file_and_closures_have_no_spec(tmp_path, mm64):
    assert space_spec(ScheduleFn(stochastic_schedule_mm))["origin"] == ["module", "search_spaces.matmul",
                                                                       "stochastic_schedule_mm"]
    f = tmp_path / "my_space.py"
    f.write_text(textwrap.dedent('''
        def space(sch):
            i, j, k = sch.get_loops(sch.get_block("C"))
            sch.split(j, factors=[None, 8])
    '''))
    from_file = resolve_space(f"{f}:space")
    spec = json.loads(json.dumps(space_spec(from_file)))
    assert spec["origin"] == ["file", str(f), "space"]
    rebuilt = space_from_spec(spec)
    assert structural_equal(rebuilt.sample(mm64, 0).mod["main"], from_file.sample(mm64, 0).mod["main"])

    def local_fn(sch):
        return sch

    assert space_spec(ScheduleFn(local_fn)) is None


def test_postprocessor_specs_round_trip_and_custom_ones_have_none():
    posts = default_postprocs() + [VerifyCodeSize(max_size=64)]
    again = postprocs_from_spec(json.loads(json.dumps(postprocs_spec(posts))))
    assert [type(p) for p in again] == [type(p) for p in posts] and again[-1].max_size == 64

    class Mine(Postproc):
        def apply(self, sch):
            pass

    assert postprocs_spec([Mine()]) is None


def test_a_task_rebuilt_from_its_spec_makes_the_same_programs(mm64):
    space = AutoSpace(n_cores=1)
    here = task_cache(mm64, space, seed=4)
    spec = {"key": here.task.key, "name": "t", "space": space_spec(space),
            "postprocs": postprocs_spec(default_postprocs()), "n_cores": 1}
    there = TaskCache.from_spec(json.loads(json.dumps(spec)), json.dumps(to_json(mm64)))
    a = generate(here, {"fresh": 4, "seed": 11})["programs"]
    b = generate(there, {"fresh": 4, "seed": 11})["programs"]
    assert [r[0] for r in a] == [r[0] for r in b]
