"""Every bad argument of ``tune`` / ``tune-model`` is one line on stderr and exit status 2, before a farm starts
and before a job row is written: trial timeouts that are not a positive finite number, a negative seed, a CPU
LLVM does not know, an empty database path, a workload whose buffers no host can allocate, more workers than
the host can hold, a batch size too large to allocate, and weights files of the wrong names, shapes or dtype."""
from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from tunefarm.cli import main
from tunefarm.database import Database
from tunefarm.graph.params import course_mlp_params
from tunefarm.cli.named_models import ACTIVATION_FLOATS
from tunefarm.tuning.limits import MEASURE_COPIES, WORKER_MEMORY_BYTES, WORKERS_PER_CORE, host_memory_bytes

# the drill's figures, or more where a host could hold them (so each is refused on any host)
TOO_MANY_WORKERS = max(1000, WORKERS_PER_CORE * (os.cpu_count() or 1) + 1)
TOO_BIG_BATCH = max(100_000_000, 2 * (host_memory_bytes() or 0) // (4 * MEASURE_COPIES * ACTIVATION_FLOATS["mlp"]))


def _refused(capsys, command: str, argv: list[str], *needles: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tunefarm {command}: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


def _tune(db, *extra) -> list[str]:
    return ["tune", "matmul-16", "--farm", "local", "--workers", "1", "--trials", "2", "--db", str(db), *extra]


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf"])
def test_tune_refuses_a_trial_timeout_that_is_not_a_positive_finite_number(tmp_path, capsys, value):
    db = tmp_path / "t.sqlite"
    _refused(capsys, "tune", _tune(db, f"--timeout={value}"), "--timeout", "positive, finite")
    assert not db.exists()  # refused before the database (and a job row in it) was written


def test_tune_refuses_a_negative_seed(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    _refused(capsys, "tune", _tune(db, "--seed=-1"), "--seed", "-1")
    assert not db.exists()


def test_tune_refuses_a_cpu_llvm_does_not_know(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    _refused(capsys, "tune", _tune(db, "--target", "llvm -mcpu=no-such-cpu-here"), "unknown CPU 'no-such-cpu-here'")
    assert not db.exists()


def test_tune_model_refuses_a_cpu_llvm_does_not_know(tmp_path, capsys):
    db = tmp_path / "m.sqlite"
    _refused(capsys, "tune-model", ["tune-model", "mlp", "--farm", "local", "--workers", "1", "--trials", "1",
                                    "--db", str(db), "--target", "llvm -mcpu=no-such-cpu-here"], "unknown CPU")


def test_tune_refuses_an_empty_database_path(tmp_path, capsys):
    _refused(capsys, "tune", _tune(""), "--db")
    _refused(capsys, "tune", _tune("   "), "--db")


def test_tune_refuses_a_workload_whose_buffers_cannot_be_allocated(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    argv = ["tune", "matmul-99999999", "--farm", "local", "--workers", "1", "--trials", "2", "--db", str(db)]
    _refused(capsys, "tune", argv, "'matmul-99999999'", "PiB")
    assert not db.exists()  # no build_error record, no job row: nothing was written


def test_tune_refuses_more_workers_than_the_host_holds(tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    too_many = WORKERS_PER_CORE * (os.cpu_count() or 1) + 1
    _refused(capsys, "tune", ["tune", "matmul-16", "--farm", "local", "--workers", str(too_many), "--db", str(db)],
             f"{too_many} workers", "cores")
    assert not db.exists()
    n = str(TOO_MANY_WORKERS)
    _refused(capsys, "tune", ["tune", "matmul-16", "--farm", "ray", "--workers", n, "--db", str(db)], f"{n} workers")
    _refused(capsys, "tune-model", ["tune-model", "mlp", "--farm", "local", "--workers", n, "--db", str(db)],
             f"{n} workers")


def test_a_worker_count_is_also_refused_by_memory(monkeypatch):
    """On a host with cores to spare, the memory this host has available now bounds the workers."""
    from tunefarm.tuning import limits

    memory = host_memory_bytes()
    assert memory is not None  # Linux: /proc/meminfo
    fit = memory // WORKER_MEMORY_BYTES
    monkeypatch.setattr(limits, "host_cores", lambda: 10**9)
    with pytest.raises(ValueError, match=f"{2 * fit + 2} workers need about .* GiB available"):
        limits.check_workers(2 * fit + 2)  # twice what fits: what is available may move a little meanwhile
    limits.check_workers(1)


def test_tune_model_refuses_a_batch_too_large_to_allocate(tmp_path, capsys):
    db = tmp_path / "m.sqlite"
    _refused(capsys, "tune-model", ["tune-model", "mlp", "--farm", "local", "--workers", "1", "--trials", "1",
                                    "--db", str(db), "--batch", str(TOO_BIG_BATCH)], f"--batch {TOO_BIG_BATCH}")


def _weights(tmp_path, name: str, **change) -> str:
    params = dict(course_mlp_params())
    for k, v in change.items():
        if v is None:
            del params[k]
        else:
            params[k] = v
    path = tmp_path / f"{name}.npz"
    np.savez(path, **params)
    return str(path)


@pytest.mark.parametrize("name, change, needle", [
    ("renamed", {"b0": None, "bias0": np.zeros(128, np.float32)}, "'b0'"),
    ("shape", {"w1": np.zeros((10, 127), np.float32)}, "w1"),
    ("dtype", {"w0": np.zeros((128, 784), np.float64)}, "float64"),
    ("ints", {"b1": np.zeros(10, np.int32)}, "int32"),
])
def test_tune_model_refuses_weights_of_the_wrong_names_shapes_or_dtype(tmp_path, capsys, name, change, needle):
    path = _weights(tmp_path, name, **change)
    db = tmp_path / "m.sqlite"
    _refused(capsys, "tune-model", ["tune-model", "mlp", "--farm", "local", "--workers", "1", "--trials", "1",
                                    "--db", str(db), "--params", path], needle)
    assert not db.exists()


def test_convnet_weights_of_the_wrong_shape_are_refused(tmp_path, capsys):
    from tunefarm.nn.models import convnet

    state = {k: np.asarray(v) for k, v in convnet().state_dict().items()}
    first = sorted(state)[0]
    state[first] = np.zeros(tuple(n + 1 for n in state[first].shape), np.float32)
    path = tmp_path / "conv.npz"
    np.savez(path, **state)
    _refused(capsys, "tune-model", ["tune-model", "convnet", "--farm", "local", "--workers", "1", "--trials", "1",
                                    "--db", str(tmp_path / "c.sqlite"), "--params", str(path)], first)


@pytest.mark.parametrize("option,value,needle", [("--time-budget", "0", "--time-budget must be a number of seconds > 0"),
                                                 ("--time-budget", "nan", "--time-budget must be a number"),
                                                 ("--patience", "0", "--patience must be an integer >= 1"),
                                                 ("--confirm", "-1", "--confirm must be >= 0")])
def test_bad_budgets_are_refused_before_anything_starts(tmp_path, capsys, option, value, needle):
    db = tmp_path / "d.sqlite"
    _refused(capsys, "tune", _tune(db, option, value), needle)
    assert not db.exists()
    _refused(capsys, "tune-model", ["tune-model", "mlp", "--db", str(db), option, value], needle)
    assert not db.exists()


def _rows(path) -> tuple[int, int, int]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as raw:
        return tuple(raw.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("jobs", "records", "workloads"))


def test_no_refusal_writes_a_job_row_into_a_database_that_exists(tmp_path, capsys):
    """The same refusals against a study that holds a job already: the file keeps its jobs, records and
    workloads as they were (nothing was started, so nothing was stored)."""
    db_path = tmp_path / "study.sqlite"
    with Database(str(db_path)) as db:
        db.finish_job(db.start_job("earlier"))
    before = _rows(db_path)
    weights = _weights(tmp_path, "renamed", b0=None, bias0=np.zeros(128, np.float32))
    (tmp_path / "notes.txt").write_text("not weights\n")
    db = str(db_path)
    model = ["tune-model", "mlp", "--farm", "local", "--workers", "1", "--trials", "1", "--db", db]
    cases = [*(("tune", _tune(db, f"--timeout={v}")) for v in ("0", "-5", "nan", "inf")),
             ("tune", _tune(db, "--seed=-1")),
             ("tune", _tune(db, "--target", "llvm -mcpu=no-such-cpu-here")),
             ("tune", _tune(db, "--db", "")),  # a second, empty --db: the first is not written either
             ("tune", ["tune", "matmul-99999999", "--farm", "local", "--workers", "1", "--trials", "2", "--db", db]),
             ("tune", ["tune", "matmul-16", "--farm", "local", "--workers", str(TOO_MANY_WORKERS), "--db", db]),
             ("tune", ["tune", "matmul-16", "--farm", "ray", "--workers", str(TOO_MANY_WORKERS), "--db", db]),
             ("tune-model", model + ["--batch", str(TOO_BIG_BATCH)]),
             ("tune-model", model + ["--params", weights]),
             ("tune-model", model + ["--params", str(tmp_path / "notes.txt")]),
             ("tune-model", model + ["--params", str(tmp_path / "missing.npz")]),
             ("tune-model", model + ["--target", "llvm -mcpu=no-such-cpu-here"]),
             ("tune-model", model + ["--seed", "-1"]),
             ("tune-model", model + ["--workers", str(TOO_MANY_WORKERS)])]
    for command, argv in cases:
        _refused(capsys, command, argv)
        assert _rows(db_path) == before, argv
