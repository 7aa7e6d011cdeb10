"""Task schedulers: round-robin cycles; the gradient scheduler warms up, then follows expected gains."""
from __future__ import annotations

import io
import logging

import pytest

from tunefarm.search.progress import Progress, task_table
from tunefarm.search.task_scheduler import GradientScheduler, RoundRobin, TaskState, create


def measured_round(task: TaskState, n_trials: int, best_latency: float) -> None:
    """A round of ``n_trials`` trials whose best took ``best_latency`` seconds."""
    for i in range(n_trials):
        task.record_trial(best_latency if i == 0 else None)
    task.close_round()


def test_round_robin_cycles_and_skips_done_tasks():
    tasks = [TaskState("a"), TaskState("b"), TaskState("c")]
    rr = RoundRobin()
    assert [rr.next_task(tasks) for _ in range(4)] == [0, 1, 2, 0]
    tasks[1].done = True
    assert [rr.next_task(tasks) for _ in range(3)] == [2, 0, 2]
    for t in tasks:
        t.done = True
    assert rr.next_task(tasks) is None


def test_gradient_warm_up_then_the_task_with_most_to_gain():
    tasks = [TaskState("small", weight=1.0), TaskState("big", weight=10.0)]
    gs = GradientScheduler(epsilon=0.0, seed=0)
    assert gs.next_task(tasks) == 0
    measured_round(tasks[0], 8, 1e-3)
    assert gs.next_task(tasks) == 1
    measured_round(tasks[1], 8, 1e-3)
    # same latency, but 'big' counts ten times in the objective
    assert gs.next_task(tasks) == 1
    # 'big' stalls for several rounds while 'small' keeps improving fast
    for _ in range(6):
        measured_round(tasks[1], 8, 1e-3)
    for lat in (5e-4, 2.5e-4, 1.2e-4, 6e-5):
        measured_round(tasks[0], 8, lat)
    g_small, g_big = gs.gradient(tasks[0]), gs.gradient(tasks[1])
    assert g_small < 0 and g_big < 0
    assert gs.next_task(tasks) == (0 if g_small < g_big else 1)
    # a task without any successful measurement is tried first
    tasks.append(TaskState("new"))
    assert gs.next_task(tasks) == 2


def test_a_round_in_flight_counts_as_the_warm_up():
    # with the driver pipeline the next batch is chosen before the first one is measured: the task whose first
    # round is in flight must not get a second warm-up round ahead of the task that has none
    s = GradientScheduler(epsilon=0.0)
    tasks = [TaskState("a"), TaskState("b")]
    first = s.next_task(tasks)
    tasks[first].inflight += 1
    second = s.next_task(tasks)
    assert {first, second} == {0, 1}
    tasks[second].inflight += 1
    tasks[first].inflight -= 1
    measured_round(tasks[first], 16, 1e-3)
    assert s.next_task(tasks) == first  # the other's warm-up is under way; gradients decide among the measured


def test_gradient_explores_with_epsilon():
    tasks = [TaskState("a"), TaskState("b")]
    for t in tasks:
        measured_round(t, 4, 1e-3)
    measured_round(tasks[0], 4, 1e-4)
    gs = GradientScheduler(epsilon=1.0, seed=1)
    picks = {gs.next_task(tasks) for _ in range(40)}
    assert picks == {0, 1}


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown task scheduler"):
        create("fifo")
    assert isinstance(create("round-robin"), RoundRobin)
    assert isinstance(create("gradient", seed=0), GradientScheduler)


def test_task_table_and_live_progress(caplog):
    tasks = [TaskState("main", flop=4194304.0)]
    text = task_table(tasks)
    assert "ID | Name" in text and "Speed (GFLOPS)" in text and "N/A" in text and "Total trials: 0" in text
    measured_round(tasks[0], 64, 5.481e-6)
    text = task_table(tasks)
    assert "765.2" in text and "5.4810" in text and "Total trials: 64" in text
    stream = io.StringIO()
    prog = Progress(tasks, 64, live=True, stream=stream)
    with caplog.at_level(logging.INFO, logger="tunefarm.search"):
        prog.round(0, 64)
        prog.finish()
    assert "trials 64/64" in stream.getvalue() and stream.getvalue().endswith("\n")
    assert "[Updated] Task #0" in caplog.text and "Tuning finished" in caplog.text
    quiet = io.StringIO()
    Progress(tasks, 64, stream=quiet).round(0, 1)  # not a terminal: no live line
    assert quiet.getvalue() == ""
