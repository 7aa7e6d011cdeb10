"""The drills' audit (tunefarm/testing/job_audit.py) on real jobs of a local farm: what it reads from a database
agrees with what the driver said, and a database it cannot judge alone is refused."""
from __future__ import annotations

import socket

import pytest

from tunefarm.cli import main
from tunefarm.testing.job_audit import audit, driver_trials

SPACE = "search_spaces/matmul.py:stochastic_schedule_mm"


def _tune(db: str, trials: int, *extra: str) -> int:
    return main(["tune", "matmul-32", "--space", SPACE, "--db", db, "--farm", "local", "--workers", "1", "--seed", "1",
                 "--trials", str(trials), *extra])


def test_the_audit_of_a_finished_job_agrees_with_its_driver(tmp_path, capsys):
    db = str(tmp_path / "t.sqlite")
    assert _tune(db, 4) == 0
    out = capsys.readouterr().out
    a = audit(db)
    assert a.records == a.job_records == driver_trials(out) == 4
    assert a.programs == 4 and a.measured_twice == 0 and a.unhashed == 0 and a.lost == 0
    assert a.statuses == {"ok": 4} and a.job_status == "finished"
    host = socket.gethostname()
    assert a.driver_host == host and list(a.hosts) == [host] and a.hosts[host].records == 4
    span = a.hosts[host]
    assert span.first <= span.last
    assert a.records_after(host, span.first - 1.0) == 4 and a.records_after(host, span.last) == 0
    # a second job on the same database: the audit refuses to mix them
    assert _tune(db, 6, "--resume") == 0
    with pytest.raises(ValueError, match="found 2 jobs"):
        audit(db)


def test_driver_output_without_exactly_one_trial_line_is_refused():
    with pytest.raises(ValueError, match="0 'new trials' lines"):
        driver_trials("no trial line here\n")
    assert driver_trials("x\n12 new trials in 3.0 s (4.0 trials/s); database t.sqlite\n") == 12
