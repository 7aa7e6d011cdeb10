"""MeasureInput validation and its wire form."""
from __future__ import annotations

import json

import pytest

from tunefarm.farm import MeasureInput, MeasureInputError

T = "llvm -num-cores=1"


def test_defaults_and_task_name():
    c = MeasureInput("key1", {"a": 1}, {"insts": [], "decisions": []}, T)
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
    with pytest.raises(MeasureInputError, match=words):
        MeasureInput(**kwargs)


def test_wire_round_trip_keeps_every_field():
    c = MeasureInput("k", {"f": [1, 2]}, {"insts": [["X", [], [], []]]}, T, timeout_s=3.5, number=2, repeat=5,
                  min_repeat_ms=1.5, check=False, task="mm", reference_json={"r": 1})
    back = MeasureInput.from_wire(json.loads(json.dumps(c.to_wire())))
    assert back == c
    text = c.with_workload_text()
    assert isinstance(text.workload_json, str) and text.workload_dict() == {"f": [1, 2]}
    assert MeasureInput.from_wire(c.to_wire("{}")).workload_dict() == {}


def test_bad_text_forms_raise_clear_errors():
    with pytest.raises(MeasureInputError, match="not valid JSON"):
        MeasureInput("k", "{oops", [], T).workload_dict()
    with pytest.raises(MeasureInputError, match="JSON object"):
        MeasureInput("k", "[1]", [], T).workload_dict()
    with pytest.raises(MeasureInputError, match="trace_json is not valid JSON"):
        MeasureInput("k", {}, "[", T).trace_value()
    with pytest.raises(MeasureInputError, match="12-tuple"):
        MeasureInput.from_wire(("k",))


def test_stop_above_s_crosses_the_wire_and_old_wire_form_still_loads():
    c = MeasureInput("k", {"f": 1}, [], T, stop_above_s=0.25)
    wire = json.loads(json.dumps(c.to_wire()))
    assert len(wire) == 12 and MeasureInput.from_wire(wire).stop_above_s == 0.25
    old = MeasureInput.from_wire(tuple(wire[:11]))  # a sender from before the field: no early stop
    assert old.stop_above_s is None and old.workload_key == "k"
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(MeasureInputError, match="stop_above_s"):
            MeasureInput("k", {}, [], T, stop_above_s=bad)
