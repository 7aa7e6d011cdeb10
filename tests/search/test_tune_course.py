"""The course's tuning flow, line by line: ``stochastic_schedule_mm`` + ``tune`` + ``compile`` from the database
(the course's ``compile_tir``)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import tunefarm
from tunefarm.script import T

from course_programs import MatmulModule as MyModule  # the course's 128^3 matmul: function "main", block "C"


def test_course_flow_tune_print_best_trace_and_compile(tmp_path, target, farm, capsys):
    from search_spaces.matmul import stochastic_schedule_mm

    db_path = str(tmp_path / "tune.sqlite")
    result = tunefarm.tune(MyModule, target=target, max_trials=64, trials_per_round=64,
                           space=stochastic_schedule_mm, database=db_path, farm=farm, seed=0)
    # the space has exactly five programs (inner j factor 1, 2, 4, 8, 16): all measured once, never twice
    db = result.database
    df = db.records()
    assert len(df) == 5 == result.trials
    assert df.program_hash.nunique() == 5
    assert (df.status == "ok").all()
    inner = sorted(next(iter(tunefarm.Trace.from_json(json.loads(j)).decisions.values()))[1]
                   for j in df.trace_json)
    assert inner == [1, 2, 4, 8, 16]

    best = result.best_trace
    print(best)
    out = capsys.readouterr().out
    assert "sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[" in out
    assert best.decisions  # the decision of the sampled tile is part of the best trace
    # the best ranks by its confirmed median (the end of the job re-timed the best on a quiet host)
    assert df.confirmed_us.notna().sum() == 5
    assert result.best_latency_us == df.confirmed_us.fillna(df.median_us).min()

    mod = tunefarm.compile(MyModule, database=db_path, target=target)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128), dtype=np.float32)
    b = rng.standard_normal((128, 128), dtype=np.float32)
    c = np.zeros((128, 128), np.float32)
    mod["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # without a target: built for the one the workload was tuned for
    c2 = np.zeros_like(c)
    tunefarm.compile(MyModule, database=db_path)["main"](a, b, c2)
    np.testing.assert_allclose(c2, c, rtol=1e-6)


def test_space_by_path_string_and_resume_does_not_remeasure(tmp_path, target, farm, mm64):
    db_path = str(tmp_path / "r.sqlite")
    space = "search_spaces/matmul.py:multi_level_tiling_mm"
    r1 = tunefarm.tune(mm64, target=target, max_trials=6, trials_per_round=3, space=space, database=db_path,
                       farm=farm, seed=3)
    assert r1.trials == 6
    db = r1.database
    first = set(db.records().program_hash)
    assert len(first) == 6
    # same job again with a bigger budget: 4 more, none of them already known
    r2 = tunefarm.tune(mm64, target=target, max_trials=10, trials_per_round=4, space=space, database=db_path,
                       farm=farm, seed=3)
    assert r2.trials == 4
    assert r2.cost_model.n_samples == 10  # warm-started from the 6 stored records, then 4 new ones
    df = db.records()
    assert len(df) == 10 and df.program_hash.nunique() == 10
    # and the budget counts stored trials: re-running with the same total measures nothing
    r3 = tunefarm.tune(mm64, target=target, max_trials=10, space=space, database=db_path, farm=farm, seed=4)
    assert r3.trials == 0 and db.count_records() == 10
    assert len(db.jobs()) == 3


def test_compile_from_a_database_without_records_is_a_clear_error(tmp_path, target, mm64):
    import pytest

    from tunefarm.database import DatabaseError
    from tunefarm.search import SearchError

    path = tmp_path / "empty.sqlite"
    with pytest.raises(DatabaseError, match="no tunefarm database at"):  # compiling only reads: nothing created
        tunefarm.compile(mm64, database=str(path), target=target)
    assert not path.exists()
    tunefarm.Database(path).close()
    with pytest.raises(SearchError, match="no successful tuning record"):
        tunefarm.compile(mm64, database=str(path), target=target)


def test_tune_tasks_shares_the_budget_between_workloads(tmp_path, target, farm, caplog):
    import logging

    from tunefarm.search.workloads import builtin_workload
    from tunefarm.tuning import tune_tasks

    tasks = [("mm", builtin_workload("matmul-32"), 2.0), ("relu", builtin_workload("relu-64"), 1.0)]
    with caplog.at_level(logging.INFO, logger="tunefarm.search"):
        result = tune_tasks(tasks, target=target, max_trials=16, trials_per_round=4,
                                     database=str(tmp_path / "multi.sqlite"), farm=farm, seed=0)
    df = result.database.records()
    assert len(df) == 16 == result.trials
    counts = df.workload.value_counts().to_dict()
    # each gets its first round, also on a farm that holds the whole budget at once (the task whose first search
    # answered first took it all; a budget of 8 let a task whose first search answered late end up with one)
    assert set(counts) == {"mm", "relu"} and all(v >= 4 for v in counts.values())
    assert [t.name for t in result.tasks] == ["mm", "relu"] and sum(t.trials for t in result.tasks) == 16
    assert "| mm " in caplog.text and "| relu " in caplog.text  # the task table lists both
    config = json.loads(result.database.jobs().config_json.iloc[0])
    assert [t[0] for t in config["tasks"]] == ["mm", "relu"] and config["max_trials"] == 16
    for name in ("mm", "relu"):
        assert result.best_record(name).status.value == "ok"


def test_early_stop_cutoff_is_a_multiple_of_the_best_latency_so_far(tmp_path, target, mm64):
    """One worker measures in the order the driver picks; each program's simulated latency (1 to 10 times
    ``run_secs``) is fixed by its hash, and the programs sampled differ from host to host. A program timed twice
    instead of five times was slower than ``multiple`` times the best measured before it was handed out (at most
    ``capacity`` items are in flight), and a program timed five times was not. With a multiple of 2, 24 evenly
    spread latencies include a cut one except about once in 15,000 program sets, whatever the host."""
    from tunefarm.farm import LocalFarm
    from tunefarm.testing.simulated_job import SimulatedFarm
    from tunefarm.tuning.api import tune

    multiple = 2.0
    with SimulatedFarm(LocalFarm(1, target=target), build_secs=0.0, run_secs=1e-4) as farm:
        tune(mm64, target=target, max_trials=24, trials_per_round=8, database=str(tmp_path / "a.sqlite"),
             farm=farm, seed=0, early_stop=multiple)
        lag = farm.capacity + 1
        runs = farm_records(tmp_path / "a.sqlite")
        lats = [min(r) for r in runs]
        counts = [len(r) for r in runs]
        assert counts[0] == 5 and 2 in counts  # nothing measured yet: no cutoff; later ones cut
        for k, (lat, n) in enumerate(zip(lats, counts)):
            best_before = min(lats[:k - lag + 1], default=float("inf")) if k >= lag else None
            if n == 2:
                assert lat > multiple * min(lats[:k])
            elif best_before is not None:
                assert lat <= multiple * best_before
        # each record says which cost model version chose it: none at first, then the newest finished one
        versions = tunefarm.Database(str(tmp_path / "a.sqlite")).records().sort_values("trial").model_version
        assert versions.iloc[0] == 0 and versions.max() >= 1 and versions.is_monotonic_increasing
        tune(mm64, target=target, max_trials=16, trials_per_round=8, database=str(tmp_path / "b.sqlite"),
             farm=farm, seed=0, early_stop=None)
        assert all(len(r) == 5 for r in farm_records(tmp_path / "b.sqlite"))
        with pytest.raises(ValueError, match="early_stop"):
            tune(mm64, target=target, max_trials=8, database=str(tmp_path / "c.sqlite"), farm=farm,
                 early_stop=0.5)


def farm_records(path) -> list[list[float]]:
    """The timings of every record, in the order they were measured."""
    from tunefarm.database import Database

    recs = Database(str(path)).top_k("main", k=10_000)  # every record is ok in a simulation
    return [r.result.run_secs for r in sorted(recs, key=lambda r: r.trial)]


def test_a_worker_killed_during_search_work_loses_only_that_work(tmp_path, target, monkeypatch):
    """The space runs on the workers; one of them SIGKILLs itself in the middle of a search request. The job
    goes on with the budget it was given, and no program is measured twice."""
    from tunefarm.farm import LocalFarm
    from tunefarm.testing.spaces import KILL_FILE, dies_once
    from tunefarm.tuning.api import tune

    kill = tmp_path / "kill"
    monkeypatch.setenv(KILL_FILE, str(kill))
    from tunefarm.search.workloads import builtin_workload

    func = builtin_workload("matmul-128")
    with LocalFarm(2, target=target) as farm:
        kill.write_text("")
        result = tune(func, target=target, max_trials=5, trials_per_round=5, space=dies_once,
                      database=str(tmp_path / "k.sqlite"), farm=farm, seed=3, strategy="random")
        lost = farm.stats.by_status.get("lost", 0)
    died = list(tmp_path.glob("kill.*"))
    assert len(died) == 1 and not kill.exists()  # one worker process died, during search work
    assert lost == 1 and farm.stats.workers_started >= 3
    df = result.database.records()
    assert len(df) == 5 == df.program_hash.nunique() and set(df.status) == {"ok"}


@T.prim_func
def mm(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0.0
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


ModuleWithMm = tunefarm.IRModule({"mm": mm})


@pytest.mark.parametrize("workload", [mm, ModuleWithMm], ids=["prim_func_mm", "module_with_mm"])
def test_course_flow_on_a_function_not_named_main(tmp_path, target, farm, workload):
    """As in TVM, a PrimFunc is tuned as ``IRModule({"main": f})``: the course's space, which asks for
    ``sch.get_block("C", "main")``, gives ok trials, and ``compile`` builds the tuned function under its own
    name, as it builds the untuned one."""
    from search_spaces.matmul import stochastic_schedule_mm

    db_path = str(tmp_path / "mm.sqlite")
    result = tunefarm.tune(workload, target=target, max_trials=8, space=stochastic_schedule_mm, database=db_path,
                           farm=farm, seed=0)
    df = result.database.records()
    assert len(df) == 5 and (df.status == "ok").all(), df.error.tolist()  # 64-wide j: inner 1, 2, 4, 8, 16
    assert list(df.workload.unique()) == ["mm"]  # the task keeps the function's own name
    lib = tunefarm.compile(workload, database=db_path, target=target)
    assert lib.function_names == tunefarm.compile(workload, target=target).function_names == ["mm"]
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 64, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    lib["mm"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert tunefarm.Database(db_path).best(workload).trusted_secs * 1e6 == result.best_latency_us
