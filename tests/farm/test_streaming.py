"""Streaming work items with put / poll on LocalFarm and RayFarm: real processes and real Ray actors running the
handlers of tunefarm/testing/handlers.py, which fail for real (a NULL dereference kills the worker, a hang never
returns). Each test runs on both farms (``farm_kind``)."""
from __future__ import annotations

import hashlib
import os
import signal
import time

import pytest

from farm_programs import candidate, matmul_func
from tunefarm.farm import Done, DoneStatus, FarmError, Work, create
from tunefarm.testing import batch

pytestmark = pytest.mark.timeout(300)  # a farm bug must fail the test, not hang CI

H = "tunefarm.testing.handlers:"
KINDS = ["local", "ray"]


def make_farm(kind: str, request, lock_path: str, **kw):
    """A 2-worker farm of ``kind``; Ray farms reserve no CPU so several can share the module's local Ray."""
    kw.setdefault("num_workers", 2)
    if kind == "ray":
        request.getfixturevalue("local_ray")
        kw.update(worker_cpus=0, metrics=False)
    return create(kind, lock_path=lock_path, **kw)


@pytest.fixture(scope="module", params=KINDS)
def farm_kind(request):
    return request.param


@pytest.fixture(scope="module")
def farm(farm_kind, request, lock_path):
    with make_farm(farm_kind, request, lock_path) as f:
        yield f


def run_all(farm, works: list[Work], timeout_s: float = 120.0) -> dict[int, Done]:
    """Stream ``works`` the way a job does (pending kept at the farm's capacity); every ticket exactly once."""
    todo = list(works)
    tickets, done = [], {}
    deadline = time.monotonic() + timeout_s
    while todo or farm.pending:
        while todo and farm.pending < farm.capacity:
            tickets.append(farm.put(todo.pop(0)))
        for d in farm.poll(max(0.0, deadline - time.monotonic())):
            assert d.ticket not in done, f"ticket {d.ticket} returned twice"
            done[d.ticket] = d
        assert time.monotonic() < deadline, "the farm did not finish in time"
    assert sorted(done) == sorted(tickets)
    return done


def by_tag(done: dict[int, Done]) -> dict:
    return {d.work.tag: d for d in done.values()}


def worker_ids(farm, n: int = 2, timeout_s: float = 120.0) -> list[str]:
    """Ids of ``n`` distinct ready workers: pairs of short spins run side by side until ``n`` answered."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while len(seen) < n:
        assert time.monotonic() < deadline, f"only {seen} answered"
        for d in run_all(farm, [Work(H + "spin", {"secs": 0.3}) for _ in range(n)]).values():
            assert d.status is DoneStatus.OK, d.error
            if d.worker not in seen:
                seen.append(d.worker)
    return seen


def pid_of(worker_id: str) -> int:
    return int(worker_id.rsplit(":", 1)[1])


def test_mixed_handlers_stream_and_every_put_ends_in_one_done(farm, farm_kind):
    works = [Work(H + "echo", {"i": i}, tag=("echo", i)) for i in range(8)]
    works[2:2] = [Work(H + "spin", {"secs": 0.2}, tag="spin"), Work(H + "fail", {"message": "boom"}, tag="fail"),
                  Work(H + "unserializable", None, tag="unserializable"), Work(H + "segfault", None, tag="segv"),
                  Work(H + "hang", None, timeout_s=1.0, tag="hang"), Work(H + "no_such_handler", 1, tag="missing"),
                  Work("tunefarm.no_such_module:f", 1, tag="no module")]
    done = by_tag(run_all(farm, works))
    for i in range(8):
        d = done[("echo", i)]
        assert d.status is DoneStatus.OK and d.value["payload"] == {"i": i} and d.error is None
        assert d.worker == d.value["worker"] and d.host and d.busy_secs >= 0
    assert done["spin"].status is DoneStatus.OK and done["spin"].value["end"] > done["spin"].value["start"]
    assert done["fail"].status is DoneStatus.ERROR and done["fail"].error.startswith("ValueError: boom")
    assert done["fail"].value is None and done["fail"].worker
    assert done["unserializable"].status is DoneStatus.ERROR and "not JSON" in done["unserializable"].error
    assert done["missing"].status is DoneStatus.ERROR and "no_such_handler" in done["missing"].error
    assert done["no module"].status is DoneStatus.ERROR and "ModuleNotFoundError" in done["no module"].error
    assert done["segv"].status is DoneStatus.LOST and done["segv"].value is None
    if farm_kind == "local":
        assert "SIGSEGV" in done["segv"].error
    assert done["hang"].status is DoneStatus.TIMEOUT and "1 s budget" in done["hang"].error
    assert farm.stats.by_status["lost"] >= 1 and farm.stats.by_status["timeout"] >= 1
    # the crashed and the killed worker were replaced: the farm streams on with all its workers
    assert farm.num_workers == 2
    assert len(worker_ids(farm, 2)) == 2
    assert all(d.status is DoneStatus.OK for d in run_all(farm, [Work(H + "echo", i) for i in range(6)]).values())


def test_prefer_is_honoured_when_the_worker_has_room_and_not_waited_for_when_it_has_none(farm):
    w1, w2 = worker_ids(farm, 2)
    for want in (w2, w1, w2, w2, w1):  # an idle preferred worker always gets the item
        (d,) = run_all(farm, [Work(H + "echo", None, prefer=want)]).values()
        assert d.worker == want
    # w2 full (long spins), w1 busy but with room: an item preferring w2 goes to w1 instead of waiting. Full is
    # what the farm says: a RayFarm also closes a worker at two calls, and long items go few to a call
    t1 = farm.put(Work(H + "spin", {"secs": 0.3}, prefer=w1))
    secs, long, got = max(0.5, 4.0 / farm.items_per_worker), [], {}
    while w2 in farm.rooms():
        long.append(farm.put(Work(H + "spin", {"secs": secs}, prefer=w2)))
        got.update((d.ticket, d) for d in farm.poll(0))  # (sends what it can)
        assert len(long) <= farm.items_per_worker
    assert w1 in farm.rooms()
    t_echo = farm.put(Work(H + "echo", "x", prefer=w2))
    order = list(got)
    while farm.pending:
        for d in farm.poll(60):
            order.append(d.ticket)
            got[d.ticket] = d
    assert got[t_echo].worker == w1 and got[t1].worker == w1
    assert order.index(t_echo) < max(order.index(t) for t in long), "the item waited for its busy worker"
    assert got[long[0]].worker == w2
    # a worker id nobody has is no obstacle
    (d,) = run_all(farm, [Work(H + "echo", None, prefer="no-such-host:1")]).values()
    assert d.status is DoneStatus.OK


def test_rooms_say_which_worker_takes_the_next_item_at_once(farm):
    w1, w2 = worker_ids(farm, 2)
    n = farm.items_per_worker  # (a RayFarm's moves with the length of the items it ran)
    assert farm.rooms() == {w1: n, w2: n}
    spins = [farm.put(Work(H + "spin", {"secs": 1.0}, prefer=w2)) for _ in range(n)]
    assert farm.rooms() == {w1: n}  # w2 holds (or has queued) its items: a put preferring it would run elsewhere
    t = farm.put(Work(H + "echo", "x", prefer=w1))
    assert farm.rooms() == {w1: n - 1}
    got = {}
    while farm.pending:
        for d in farm.poll(60):
            got[d.ticket] = d
    assert got[t].worker == w1 and got[spins[0]].worker == w2  # (the second spin may move to idle w1)
    n = farm.items_per_worker
    assert farm.rooms() == {w1: n, w2: n}


def test_shared_texts_reach_the_handler_once_per_worker(farm):
    texts = {"wl-a": "a" * 300_000 + "end", "wl-b": '{"workload": "' + "b" * 200_000 + '"}'}  # > a pipe's buffer
    works = [Work(H + "read_shared", {"key": k}, shared={k: texts[k]}, tag=k) for _ in range(8) for k in texts]
    done = run_all(farm, works)
    workers = set()
    for d in done.values():
        # (a LocalFarm worker fails an item whose text it received twice; a Ray worker fetches a key once)
        assert d.status is DoneStatus.OK, d.error
        assert d.value["sha256"] == hashlib.sha256(texts[d.work.tag].encode()).hexdigest()
        assert d.value["same_object"], "the worker received the text again"
        workers.add(d.worker)
    assert len(workers) == 2
    with pytest.raises(ValueError, match="different text"):
        farm.put(Work(H + "read_shared", {"key": "wl-a"}, shared={"wl-a": "another text"}))
    assert farm.pending == 0


@pytest.mark.parametrize("idle_s", [0.5, 5.0])
def test_shared_texts_survive_a_worker_that_died_idle(farm, idle_s):
    """A worker that had a text dies between items; the driver has not noticed when it sends the next item that
    uses the text. The item still gets it (Ray: a call to the restarting actor fails and is re-run; once the
    actor is back, the call reaches the new process without the text, which asks for it again)."""
    text = "w" * 50_000
    w1, w2 = worker_ids(farm, 2)
    first = run_all(farm, [Work(H + "read_shared", {"key": "wl-c"}, shared={"wl-c": text}, prefer=w)
                           for w in (w1, w2)])
    assert {d.worker for d in first.values()} == {w1, w2}
    os.kill(pid_of(w1), signal.SIGKILL)
    time.sleep(idle_s)
    done = run_all(farm, [Work(H + "read_shared", {"key": "wl-c"}, shared={"wl-c": text}, prefer=w1)
                          for _ in range(3)])
    for d in done.values():
        assert d.status is DoneStatus.OK, d.error
        assert d.value["sha256"] == hashlib.sha256(text.encode()).hexdigest() and d.worker != w1


def test_a_worker_killed_while_running_an_item_loses_only_that_item(farm, farm_kind):
    w1, w2 = worker_ids(farm, 2)
    victim = farm.put(Work(H + "spin", {"secs": 4.0}, prefer=w1))
    others = [farm.put(Work(H + "spin", {"secs": 0.05}, tag=i)) for i in range(8)]
    time.sleep(1.0)  # the long spin has started on w1
    os.kill(pid_of(w1), signal.SIGKILL)
    got = {}
    while farm.pending:
        for d in farm.poll(60):
            got[d.ticket] = d
    assert got[victim].status is DoneStatus.LOST and got[victim].worker == w1
    assert all(got[t].status is DoneStatus.OK for t in others), [got[t].error for t in others]
    assert w1 not in worker_ids(farm, 2)


def test_a_hung_item_times_out_and_its_worker_is_replaced(farm):
    w1, w2 = worker_ids(farm, 2)
    done = by_tag(run_all(farm, [Work(H + "hang", None, timeout_s=1.0, prefer=w2, tag="hang")]
                          + [Work(H + "echo", i, tag=i) for i in range(4)]))
    assert done["hang"].status is DoneStatus.TIMEOUT and done["hang"].worker == w2
    assert "1 s budget" in done["hang"].error and "killed" in done["hang"].error
    assert all(done[i].status is DoneStatus.OK for i in range(4))
    assert w2 not in worker_ids(farm, 2)


def test_paused_time_is_not_charged(farm):
    (d,) = run_all(farm, [Work(H + "pause", {"secs": 1.5}, timeout_s=0.5)]).values()
    assert d.status is DoneStatus.OK, d.error
    assert d.busy_secs >= 1.4  # busy: the handler's wall time, paused or not


def test_busy_and_worker_seconds_are_accounted(farm):
    before = (farm.stats.busy_secs, farm.stats.completed, dict(farm.stats.by_status))
    done = run_all(farm, [Work(H + "spin", {"secs": 0.3}) for _ in range(4)])
    assert all(d.busy_secs >= 0.25 for d in done.values())
    assert farm.stats.busy_secs - before[0] >= 4 * 0.25
    assert farm.stats.completed - before[1] == 4
    assert farm.stats.by_status["ok"] - before[2].get("ok", 0) == 4
    assert farm.stats.worker_secs >= farm.stats.busy_secs > 0
    assert 0 < farm.stats.busy_fraction <= 1


@pytest.mark.parametrize("slots", [2, 1])
def test_timing_slots_bound_how_many_timing_loops_overlap(farm_kind, request, tmp_path, slots):
    with make_farm(farm_kind, request, str(tmp_path / "lock"), timing_slots=slots) as f:
        worker_ids(f, 2)  # both workers up, so the holds start together
        done = run_all(f, [Work(H + "timed_hold", {"secs": 1.0 if slots == 2 else 0.3}) for _ in range(4)])
    spans = sorted((d.value["start"], d.value["end"]) for d in done.values())
    assert all(d.value["slots"] == slots for d in done.values())
    assert len({d.worker for d in done.values()}) == 2
    overlaps = [a[1] > b[0] for a, b in zip(spans, spans[1:])]
    if slots == 1:
        assert not any(overlaps), f"timing loops overlapped with one slot: {spans}"
    else:
        assert any(overlaps), f"two slots, yet the timing loops never overlapped: {spans}"


def test_a_recycled_worker_keeps_streaming(farm_kind, request, tmp_path):
    # two items per worker (not the default): a retiring worker still runs what it holds, so with 4 held one
    # worker could run 6 of the 10 builds; the count below is for one more queued when it retires
    with make_farm(farm_kind, request, str(tmp_path / "lock"), num_workers=1, max_compiles=3,
                   inflight_per_worker=2) as f:
        done = run_all(f, [Work(H + "compile_count", {"n": 1}, tag=i) for i in range(10)])
        assert all(d.status is DoneStatus.OK for d in done.values())
        workers = [by_tag(done)[i].worker for i in range(10)]
        assert len(set(workers)) >= 3  # 10 builds, 3 per worker (one more may be queued when it retires)
        assert all(d.value["compiles"] <= 3 + f.inflight_per_worker - 1 for d in done.values())
        assert f.stats.workers_recycled >= 2
    with pytest.raises(FarmError, match="closed"):
        f.put(Work(H + "echo", 1))


def test_bad_work_is_refused_and_batches_do_not_mix_with_streaming(farm):
    with pytest.raises(ValueError, match="handler"):
        farm.put(Work("os:system", "echo hi"))
    with pytest.raises(TypeError, match="JSON"):
        farm.put(Work(H + "echo", {"x": object()}))
    with pytest.raises(ValueError, match="timeout_s"):
        farm.put(Work(H + "echo", 1, timeout_s=0))
    with pytest.raises(TypeError, match="prefer"):
        farm.put(Work(H + "echo", 1, prefer=3))
    with pytest.raises(TypeError, match=r"Work\.shared must map str keys to str texts"):
        farm.put(Work(H + "echo", 1, shared={"k": b"bytes"}))
    with pytest.raises(TypeError, match="Work"):
        farm.put({"handler": H + "echo"})
    with pytest.raises(ValueError, match="timeout_s"):
        farm.poll(-1)
    assert farm.pending == 0 and farm.poll(0) == []
    # streaming items must be collected before a batch (testing.batch) is measured on the farm
    ticket = farm.put(Work(H + "spin", {"secs": 0.2}))
    with pytest.raises(FarmError, match="pending"):
        batch.measure(farm, [candidate(matmul_func(16))])
    (d,) = farm.poll(60)
    assert d.ticket == ticket and d.status is DoneStatus.OK
    ((i, r),) = list(batch.submit(farm, [candidate(matmul_func(16))]))
    assert i == 0 and r.ok, r.error
    assert farm.pending == 0


def _pid_running(farm, ticket: int) -> int | None:
    """The pid of the worker running ``ticket`` once it has started there (drill tooling: farm internals)."""
    if hasattr(farm, "_workers"):  # LocalFarm
        for w in farm._workers:
            if w.sent and w.sent[0].item.ticket == ticket and w.started is not None:
                return w.process.pid
        return None
    for s in farm._slots:  # RayFarm: its worker id is "host:pid"
        head = s.head()
        if s.state == "ready" and head is not None and head.item.ticket == ticket and head.progress_ref is None:
            return int(s.worker_id.rsplit(":", 1)[1])
    return None


def test_a_frozen_worker_is_killed_long_before_its_items_budget_and_nothing_waits_behind_it(farm):
    # a search or training item has a budget of minutes; a worker frozen in one (SIGSTOP) must not hold the job
    # that long: silence is found the same way whatever the item's budget
    t = farm.put(Work(H + "hang", None, timeout_s=300.0))
    pid, done = None, {}
    deadline = time.monotonic() + 60
    while pid is None:
        assert time.monotonic() < deadline, "the item never started"
        for d in farm.poll(0.2):
            done[d.ticket] = d
        pid = _pid_running(farm, t)
    behind = [farm.put(Work(H + "echo", i, timeout_s=30.0)) for i in range(6)]
    os.kill(pid, signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        while farm.pending:
            for d in farm.poll(120):
                done[d.ticket] = d
                if d.ticket == t:
                    killed_after = time.monotonic() - frozen_at
    finally:
        try:
            os.kill(pid, signal.SIGKILL)  # (the farm killed it already; never leave a stopped process behind)
        except ProcessLookupError:
            pass
    assert done[t].status is DoneStatus.TIMEOUT and "stopped answering" in done[t].error, done[t].error
    assert killed_after < 60.0, f"a frozen worker held its item {killed_after:.0f} s"
    assert all(done[b].status is DoneStatus.OK for b in behind), [done[b].error for b in behind]
