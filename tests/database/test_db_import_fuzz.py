"""Fuzz of the import path: random mutations of a real export are each refused with a one-line
``DatabaseError`` or imported intact (every record exactly as the file gives it), and the records already in
the database and ``PRAGMA integrity_check`` never change.

The database holds one study; the file is the export of another study of the same workloads (other jobs,
other record uids); a record of a program the database (or the file, above it) already holds on its target is
skipped and counted. Mutations: bytes flipped, inserted, deleted or cut off; lines duplicated, swapped or
dropped; a JSON field replaced by an odd value, dropped or added; a trace instruction's kind, inputs,
attributes or decision changed; a record given another record's trace (with or without its hash).
"""
from __future__ import annotations

import json
import random
import sqlite3

import pandas as pd
import pytest

from dbtest_helpers import populate_real
from tunefarm.database import Database, DatabaseError

ODD_VALUES = [None, 0, -1, 1, 2 ** 70, -2 ** 63, 1e308, 1e-300, float("nan"), float("inf"), "", "x" * 500,
              "\x1b[31mred", "\ud800", [], {}, [[[]]], {"a": {"b": []}}, True, False, 3.5, "ok", "timeout",
              "Split", ["b0"], [1, 2], "l1"]
_RECORD_SQL = ("SELECT r.uid, w.key, t.target, r.trial, r.trace_json, r.program_hash, r.status, r.run_secs_json, "
               "r.build_secs, r.error, r.host, r.created_us FROM records r JOIN workloads w ON w.id = r.workload_id "
               "JOIN targets t ON t.id = r.target_id")


@pytest.fixture(scope="module")
def fuzz_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    base = Database(root / "base.sqlite")
    populate_real(base, seed=3)
    base.close()
    other = Database(root / "other.sqlite")
    populate_real(other, seed=11)
    other.export(root / "export.jsonl")
    return root, (root / "export.jsonl").read_bytes()


def _paths(obj, prefix=()):
    """Every path to a value inside a JSON value (dict keys and list indexes)."""
    yield prefix
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        yield from _paths(v, prefix + (k,))


def _set(obj, path, value):
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _mutate_json(rng: random.Random, lines: list[bytes]) -> None:
    i = rng.randrange(1, len(lines))
    d = json.loads(lines[i])
    paths = [p for p in _paths(d) if p]
    path = rng.choice(paths)
    op = rng.random()
    if op < 0.15 and isinstance(d, dict) and len(path) == 1:
        del d[path[0]]
    elif op < 0.2:
        d["extra_" + str(rng.randrange(9))] = rng.choice(ODD_VALUES)
    elif op < 0.5 and d.get("type") == "record":
        _mutate_trace(rng, d, lines)
    else:
        _set(d, path, rng.choice(ODD_VALUES))
    lines[i] = json.dumps(d).encode()


def _mutate_trace(rng: random.Random, record: dict, lines: list[bytes]) -> None:
    trace = record["trace"]
    insts = trace["insts"] if isinstance(trace, dict) else trace
    op = rng.randrange(6)
    if op == 0:  # another record's program (valid, but not this record's hash unless it is taken along)
        donor = json.loads(rng.choice([ln for ln in lines if b'"type":"record"' in ln]))
        record["trace"] = donor["trace"]
        if rng.random() < 0.5:
            record["program_hash"] = donor["program_hash"]
    elif op == 1:
        rng.choice(insts)[0] = rng.choice(["Split", "Fuse", "Reorder", "Vectorize", "Unroll", "Parallel",
                                           "ComputeInline", "MakeItFast", ""])
    elif op == 2:
        inst = rng.choice(insts)
        inst[rng.randrange(1, 4)] = rng.choice([[], ["b0"], ["l1", "l2"], [None], [4, 4], {"x": 1}, [2 ** 40]])
    elif op == 3 and isinstance(trace, dict) and trace.get("decisions"):
        rng.choice(trace["decisions"])[1] = rng.choice([[1, 16], [3, 5], [-1, -16], 7, None, [16, 1]])
    elif op == 4:
        insts.insert(rng.randrange(len(insts) + 1), rng.choice(insts)[:])
    else:
        del insts[rng.randrange(len(insts))]


def mutate(rng: random.Random, data: bytes) -> bytes:
    lines = data.rstrip(b"\n").split(b"\n")
    op = rng.randrange(9)
    if op == 0:
        pos = rng.randrange(len(data))
        return data[:pos] + bytes([data[pos] ^ (1 << rng.randrange(8))]) + data[pos + 1:]
    if op == 1:
        pos = rng.randrange(len(data))
        return data[:pos] + rng.randbytes(rng.randrange(1, 8)) + data[pos:]
    if op == 2:
        pos = rng.randrange(len(data))
        return data[:pos] + data[pos + rng.randrange(1, 200):]
    if op == 3:
        return data[:rng.randrange(len(data))]
    if op == 4:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines)), lines[i])
    elif op == 5:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 6:
        del lines[rng.randrange(1, len(lines))]
    else:
        _mutate_json(rng, lines)
    return b"\n".join(lines) + b"\n"


def _stored_records(path) -> dict[str, tuple]:
    with sqlite3.connect(path) as raw:
        return {r[0]: r[1:] for r in raw.execute(_RECORD_SQL)}


def _integrity(path) -> str:
    with sqlite3.connect(path) as raw:
        return raw.execute("PRAGMA integrity_check").fetchone()[0]


def _check_intact(data: bytes, stored: dict[str, tuple]) -> tuple[int, int]:
    """Every record line of an accepted file is stored exactly as written, or skipped as a program already stored
    on its target; returns (records stored from the file, record lines)."""
    uids, lines = set(), 0
    programs = {(r[0], r[1], r[4]) for r in stored.values()}
    for raw in data.split(b"\n"):
        try:
            d = json.loads(raw)
        except ValueError:
            continue  # an accepted file has no such line, but blank ones are skipped
        if not isinstance(d, dict) or d.get("type") != "record":
            continue
        lines += 1
        if d["uid"] not in stored or d["uid"] in uids:  # skipped: the program was stored before it
            assert d.get("program_hash") is None or (d["workload"], d["target"], d["program_hash"]) in programs
            continue
        uids.add(d["uid"])
        key, target, trial, trace, phash, status, run_json, build, error, host, created = stored[d["uid"]]
        assert (key, target, trial, status) == (d["workload"], d["target"], d["trial"], d["status"])
        assert json.loads(trace) == d["trace"]
        assert json.loads(run_json) == [float(s) for s in d.get("run_secs") or []]
        assert phash == d.get("program_hash") or d.get("program_hash") is None
        assert (build, error, host, created) == (float(d.get("build_secs") or 0), d.get("error"),
                                                 d.get("host") or "", d["created_us"])
    return len(uids), lines


def run_fuzz(setup, n: int, seed: int) -> None:
    root, export = setup
    base_records = _stored_records(root / "base.sqlite")
    base_frame = Database(root / "base.sqlite", create=False).records()
    outcomes = {"refused": 0, "imported": 0}
    for i in range(n):
        rng = random.Random(seed * 100003 + i)
        data = mutate(rng, export)
        path = root / f"case{i}.sqlite"
        with sqlite3.connect(root / "base.sqlite") as src, sqlite3.connect(path) as dst:
            src.backup(dst)
        (root / "case.jsonl").write_bytes(data)
        db = Database(path)
        try:
            new = db.import_(root / "case.jsonl")
        except DatabaseError as e:
            assert "\n" not in str(e) and len(str(e)) < 1000, (i, str(e)[:2000])
            outcomes["refused"] += 1
        else:
            outcomes["imported"] += 1
            stored = _stored_records(path)
            intact, lines = _check_intact(data, stored)
            assert intact == new["records"] == len(stored) - len(base_records), i
            assert lines == new["records"] + new["skipped"], i
        after = db.records()
        db.close()
        kept = after[after.record_id.isin(base_frame.record_id)].reset_index(drop=True)
        pd.testing.assert_frame_equal(kept.drop(columns="job_status"), base_frame.drop(columns="job_status"))
        assert {u: r for u, r in _stored_records(path).items() if u in base_records} == base_records, i
        assert _integrity(path) == "ok", i
        path.unlink()
    # both outcomes happen, or the mutations are not exploring the boundary
    assert outcomes["refused"] >= n // 5 and outcomes["imported"] >= n // 10, outcomes


def test_import_fuzz(fuzz_setup):
    run_fuzz(fuzz_setup, 80, seed=1)


@pytest.mark.slow
def test_import_fuzz_many(fuzz_setup):
    run_fuzz(fuzz_setup, 1000, seed=2)
