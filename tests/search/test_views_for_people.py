"""What people read: ``best``, ``bench``, the report and the progress table fit 120 columns for the host target,
name targets by their label, show short workload keys that the CLI accepts, traces as ``sch.*`` calls; and the
Python API shows its task table without any logging configuration (and stays quiet when told to)."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from tunefarm.cli import main
from tunefarm.database import Database
from tunefarm.target import Target

SPACE = "search_spaces/matmul.py:stochastic_schedule_mm"


@pytest.fixture(scope="module")
def tuned_db(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("views") / "views.sqlite")
    assert main(["tune", "matmul-32", "--space", SPACE, "--db", db, "--farm", "local", "--workers", "1",
                 "--seed", "1", "--trials", "3"]) == 0
    return db


def _fits(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines and all(len(ln) <= 120 for ln in lines), [ln for ln in lines if len(ln) > 120]
    return lines


def test_best_fits_120_columns_and_takes_the_short_key_and_the_target_label(tuned_db, capsys):
    host = Target.host()
    assert len(str(host)) > 120  # the full target string alone would not fit
    assert main(["best", "--db", tuned_db]) == 0
    lines = _fits(capsys.readouterr().out)
    assert lines[0] == f"target: {host.label()}"
    # the job confirmed its best: its confirmed median and p10-p90 stand beside the farm's figure
    assert lines[1].split()[:7] == ["workload", "key", "median_us", "confirmed_us", "p10_us", "p90_us", "gflops"]
    short_key = lines[2].split()[1]
    full_key = Database(tuned_db).get_workload("matmul-32").key
    assert full_key.startswith(short_key) and len(short_key) == 10
    assert main(["best", "--db", tuned_db, "--workload", short_key, "--target", host.label(), "--format",
                 "json"]) == 0
    out = capsys.readouterr().out
    assert f'"workload_key": "{full_key}"' in out and f'"target": "{host}"' in out  # json keeps full strings


def test_bench_fits_120_columns(tuned_db, capsys):
    assert main(["bench", "--db", tuned_db, "--rounds", "2"]) == 0
    lines = _fits(capsys.readouterr().out)
    assert lines[0] == f"target: {Target.host().label()}"
    assert lines[1].split()[:3] == ["workload", "tuned_us", "untuned_us"]


def test_report_shows_labels_sch_traces_and_no_wall_time_charts_for_a_short_job(tuned_db, tmp_path, capsys):
    out = tmp_path / "r.html"
    assert main(["report", "--db", tuned_db, "-o", str(out)]) == 0
    html = out.read_text()
    traces = re.findall(r"<pre>(.*?)</pre>", html, flags=re.S)
    assert traces and all("sch.sample_perfect_tile(" in t and "SamplePerfectTile" not in t for t in traces)
    assert f'title="{Target.host()}">{Target.host().label()}</span>' in html
    assert "Throughput" not in html and "best latency vs wall time" not in html
    assert "the wall-time and throughput charts are drawn from 60 s of tuning on" in html


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=300)


TUNE = """
    import tunefarm
    from tunefarm.farm import LocalFarm
    from tunefarm.search.workloads import builtin_workload
    from search_spaces.matmul import stochastic_schedule_mm
    with LocalFarm(num_workers=1) as farm:
        tunefarm.tune(builtin_workload("matmul-32"), max_trials=2, space=stochastic_schedule_mm, farm=farm,
                      database={db!r})
    print("done")
"""


def test_the_python_api_prints_its_task_table_without_logging_configured(tmp_path):
    proc = _run(TUNE.format(db=str(tmp_path / "a.sqlite")))
    assert proc.returncode == 0, proc.stderr
    assert "[INFO] Tuning finished in" in proc.stderr and "ID | Name" in proc.stderr
    assert all(len(ln) <= 120 for ln in proc.stderr.splitlines() if "|" in ln)
    quiet = _run("import logging; logging.getLogger('tunefarm').setLevel(logging.WARNING)\n"
                 + textwrap.dedent(TUNE.format(db=str(tmp_path / "b.sqlite"))))
    assert quiet.returncode == 0, quiet.stderr
    assert "done" in quiet.stdout and "ID | Name" not in quiet.stderr and "Tuning finished" not in quiet.stderr
