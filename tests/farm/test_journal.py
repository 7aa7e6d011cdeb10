"""The worker's trial journal: what a restarted worker reports about the process that died."""
from __future__ import annotations

import json
import os

from tunefarm.farm.journal import _KEEP, TrialJournal


def test_a_new_incarnation_sees_finished_and_crashed_trials(tmp_path):
    path = str(tmp_path / "actor.json")
    first = TrialJournal(path)
    first.started(1)
    first.finished(1, {"status": "ok", "costs": [1e-5]}, compiles=1)
    first.started(2)  # the process dies here
    assert first.snapshot() == {"done": {1: [{"status": "ok", "costs": [1e-5]}, 1]}, "crashed": []}
    second = TrialJournal(path)
    snap = second.snapshot()
    assert snap["done"] == {1: [{"status": "ok", "costs": [1e-5]}, 1]}
    assert snap["crashed"] == [2]
    second.started(3)  # running in the live process: neither done nor crashed
    assert second.snapshot()["crashed"] == [2]
    assert 3 not in second.snapshot()["done"]


def test_the_journal_keeps_a_bounded_tail(tmp_path):
    path = str(tmp_path / "actor.json")
    j = TrialJournal(path)
    n = 10 * _KEEP
    for token in range(n):
        j.started(token)
        j.finished(token, {"status": "ok"}, compiles=token)
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    assert len(lines) <= 8 * _KEEP + 1 and lines[-1]["token"] == n - 1  # compacted now and then
    assert sorted(TrialJournal(path).snapshot()["done"]) == list(range(n - _KEEP, n))


def test_a_damaged_file_recovers_nothing_and_a_failed_write_turns_the_journal_off(tmp_path):
    path = str(tmp_path / "actor.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"token": 1, "pid": "x"}\n{"token": 1, "pid": "x", "resu')  # the second write cut short
    assert TrialJournal(path).snapshot() == {"done": {}, "crashed": [1]}
    j = TrialJournal(str(tmp_path / "no-such-dir" / "actor.json"))
    j.started(5)  # cannot write: trials go on, and the journal says it knows nothing
    assert j.broken and j.snapshot() is None
    assert not os.path.exists(tmp_path / "no-such-dir")
