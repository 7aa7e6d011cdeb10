"""Search work lost with its worker (SIGKILL, OOM killer, a node that left) is retried: it says nothing about the
space, so it never counts toward the failures that end a task. Six workers die in a row in search work and the
job still measures its whole budget, on worker processes and on Ray actors."""
from __future__ import annotations

import pytest

from tunefarm.search.workloads import builtin_workload
from tunefarm.testing.spaces import KILL_DIR, dies_per_ticket
from tunefarm.tuning.api import tune

pytestmark = pytest.mark.timeout(400)

KILLS = 6


def _tickets(tmp_path, monkeypatch):
    folder = tmp_path / "tickets"
    folder.mkdir()
    for i in range(KILLS):
        (folder / f"t{i}").write_text("")
    monkeypatch.setenv(KILL_DIR, str(folder))
    return folder


def _check(result, folder, lost: int, trials: int) -> None:
    taken = [p for p in folder.iterdir() if p.name.startswith("taken.")]
    assert len(taken) == KILLS == len(list(folder.iterdir()))  # every ticket killed one worker in search work
    assert len({p.name.rsplit(".", 1)[1] for p in taken}) == KILLS  # six different processes died
    assert lost >= KILLS
    df = result.database.records()
    assert len(df) == trials == df.program_hash.nunique() and set(df.status) == {"ok"}
    assert result.errors == {}


def test_six_workers_killed_in_search_work_do_not_end_the_job(tmp_path, target, monkeypatch):
    from tunefarm.farm import LocalFarm

    folder = _tickets(tmp_path, monkeypatch)
    with LocalFarm(2, target=target) as farm:
        result = tune(builtin_workload("matmul-64"), target=target, max_trials=5, trials_per_round=5,
                      space=dies_per_ticket, database=str(tmp_path / "k.sqlite"), farm=farm, seed=5,
                      strategy="random")
        lost = farm.stats.by_status.get("lost", 0)
    _check(result, folder, lost, 5)


@pytest.mark.slow  # a private Ray starts for it (run by CI in the slow step)
def test_six_actors_killed_in_search_work_do_not_end_the_job(tmp_path, target, monkeypatch):
    ray = pytest.importorskip("ray")
    from tunefarm.farm import RayFarm

    folder = _tickets(tmp_path, monkeypatch)
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with RayFarm(target=target) as farm:
            result = tune(builtin_workload("matmul-64"), target=target, max_trials=5, trials_per_round=5,
                          space=dies_per_ticket, database=str(tmp_path / "r.sqlite"), farm=farm, seed=5,
                          strategy="random")
            lost = farm.stats.by_status.get("lost", 0)
    finally:
        ray.shutdown()
    _check(result, folder, lost, 5)
