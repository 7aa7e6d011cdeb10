"""Candidate validation and its wire form."""
from __future__ import annotations

import json

import pytest

from tunefarm.farm import Candidate, CandidateError

T = "llvm -num-cores=1"


def test_defaults_and_task_name():
    c = Candidate("key1", {"a": 1}, {"insts": [], "decisions": []}, T)
    assert c.task == "key1"
    assert c.timeout_s == 10.0 and c.repeat >= 1 and c.check


@pytest.mark.parametrize("field, value, words", [
    ("workload_key", "", "workload_key"),
    ("workload_json", 3, "workload_json"),
    ("trace_json", None, "trace_json"),
    ("target", " ", "target"),
    ("timeout_s", 0, "timeout_s"),
    ("timeout_s", float("nan"), "timeout_s"),
    ("repeat", 0, "repeat"),
    ("number", 1.5, "number"),
    ("min_repeat_ms", -1, "min_repeat_ms"),
    ("reference_json", [1], "reference_json"),
])
def test_bad_fields_are_named(field, value, words):
    kwargs = dict(workload_key="k", workload_json={}, trace_json=[], target=T)
    kwargs[field] = value
    with pytest.raises(CandidateError, match=words):
        Candidate(**kwargs)


def test_wire_round_trip_keeps_every_field():
    c = Candidate("k", {"f": [1, 2]}, {"insts": [["X", [], [], []]]}, T, timeout_s=3.5, number=2, repeat=5,
                  min_repeat_ms=1.5, check=False, task="mm", reference_json={"r": 1})
    back = Candidate.from_wire(json.loads(json.dumps(c.to_wire())))
    assert back == c
    text = c.with_workload_text()
    assert isinstance(text.workload_json, str) and text.workload_dict() == {"f": [1, 2]}
    assert Candidate.from_wire(c.to_wire("{}")).workload_dict() == {}


def test_bad_text_forms_raise_clear_errors():
    with pytest.raises(CandidateError, match="not valid JSON"):
        Candidate("k", "{oops", [], T).workload_dict()
    with pytest.raises(CandidateError, match="JSON object"):
        Candidate("k", "[1]", [], T).workload_dict()
    with pytest.raises(CandidateError, match="trace_json is not valid JSON"):
        Candidate("k", {}, "[", T).trace_value()
    with pytest.raises(CandidateError, match="12-tuple"):
        Candidate.from_wire(("k",))


def test_stop_above_s_crosses_the_wire_and_old_wire_form_still_loads():
    c = Candidate("k", {"f": 1}, [], T, stop_above_s=0.25)
    wire = json.loads(json.dumps(c.to_wire()))
    assert len(wire) == 12 and Candidate.from_wire(wire).stop_above_s == 0.25
    old = Candidate.from_wire(tuple(wire[:11]))  # a sender from before the field: no early stop
    assert old.stop_above_s is None and old.workload_key == "k"
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(CandidateError, match="stop_above_s"):
            Candidate("k", {}, [], T, stop_above_s=bad)
