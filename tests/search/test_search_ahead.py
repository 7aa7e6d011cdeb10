"""Room that no pick can take goes to search ahead: a full request beyond the task's credit, at most one search
request in flight per worker, so a worker the pools cannot feed searches instead of idling; a used-up space still
runs out of requests and ends its job."""
from __future__ import annotations

import failure_spaces as fs

import tunefarm
from tunefarm.database import Database
from tunefarm.search.generate import requested
from tunefarm.tuning.api import tune_tasks
from tunefarm.tuning.job_task import REQUEST_MAX, SEARCH_HANDLER


class WatchedFarm:
    """The real farm, noting each item the job puts and the search requests in flight after each put."""

    def __init__(self, farm):
        self.farm = farm
        self.put_log: list[tuple[str, int, int]] = []  # (handler, candidates asked for, search requests in flight)
        self._searching: set[int] = set()

    def put(self, work) -> int:
        ticket = self.farm.put(work)
        asked = 0
        if work.handler == SEARCH_HANDLER:
            self._searching.add(ticket)
            asked = requested(work.payload["request"])
        self.put_log.append((work.handler, asked, len(self._searching)))
        return ticket

    def poll(self, timeout_s=None):
        out = self.farm.poll(timeout_s)
        for d in out:
            self._searching.discard(d.ticket)
        return out

    def __getattr__(self, name):
        return getattr(self.farm, name)


def test_both_workers_search_while_the_pool_is_empty_and_the_budget_is_measured_once(tmp_path, farm, target, mm64):
    watched = WatchedFarm(farm)
    path = str(tmp_path / "d.sqlite")
    r = tunefarm.tune(mm64, target=target, max_trials=24, trials_per_round=8, database=path, farm=watched, seed=5,
                      progress=False)
    df = Database(path).records()
    assert r.trials == 24 == len(df) == df.program_hash.nunique()
    searches = [(asked, n) for handler, asked, n in watched.put_log if handler == SEARCH_HANDLER]
    # the job starts with an empty pool and no credit: the first request is the credit's, the second (the other
    # worker's room) a full one ahead; before it, one worker idled until the first reply came back
    assert [h for h, _, _ in watched.put_log[:2]] == [SEARCH_HANDLER, SEARCH_HANDLER], watched.put_log[:4]
    assert searches[1] == (REQUEST_MAX, 2)
    assert max(n for _, n in searches) <= farm.num_workers  # capacity // 2 == num_workers on this farm


def test_a_used_up_space_still_ends_its_job(tmp_path, farm, target):
    watched = WatchedFarm(farm)
    result = tune_tasks([("wrong", fs.ill_conditioned_sum(), 1.0)], target=target, max_trials=16,
                        trials_per_round=4, space={"wrong": fs.reorder_reduction_space},
                        database=str(tmp_path / "used_up.sqlite"), farm=watched, seed=0, postprocs=[],
                        strategy="random", timeout_s=60)
    df = result.database.records()
    assert len(df) == 2 and df.program_hash.nunique() == 2  # the space holds two programs, and it ended
    assert list(result.database.jobs().status) == ["finished"]
