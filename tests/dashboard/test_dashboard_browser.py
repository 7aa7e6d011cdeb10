"""The dashboard in a real headless Chromium (Debian's, through Playwright's Python API), following a real job.

A real tuning job (``tunefarm tune`` on a LocalFarm, in another process) writes to the study while the page is
open: its row appears, its trial count and its best-so-far curve advance, a screenshot is saved to
``test-output/``. The task is named like an XSS payload, so the same run checks that names show as text.
Never skipped: no browser, no Playwright or no page is a failure (``.ci/run`` installs both).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from dashtest_helpers import HOSTILE, build_layers, get_json

from tunefarm.dashboard import DashboardServer
from tunefarm.database import Database

pytestmark = pytest.mark.browser

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUT = os.path.join(REPO, "test-output")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]  # root in a container


def _chromium() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail("Debian's chromium is not installed (apt-get install -y chromium)")
    return path


@pytest.fixture
def page():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed (pip install playwright; no browser download is needed)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), args=CHROMIUM_FLAGS, headless=True)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.problems = []
        pg.on("console", lambda m: m.type == "error" and pg.problems.append(f"console: {m.text}"))
        pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
        pg.on("dialog", lambda d: (pg.problems.append(f"dialog: {d.message}"), d.dismiss()))
        pg.on("requestfailed", lambda r: pg.problems.append(f"request failed: {r.url}"))
        yield pg
        browser.close()


def _wait(predicate, timeout: float, what: str, proc=None, page=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if proc is not None and proc.poll() is not None and proc.returncode != 0:
            pytest.fail(f"the tuning job exited {proc.returncode} while waiting for {what}: {proc.stdout.read()}")
        time.sleep(0.25)
    seen = "" if page is None else f": the page shows {page.inner_text('body')[:3000]!r}"
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}{seen}")


def _job_trials(page) -> int:
    cell = page.query_selector("#jobs tbody tr td.trials")
    return int(cell.get_attribute("data-n")) if cell else -1


def _curve_end(page) -> float:
    path = page.query_selector("#chart-trials path.series")
    return float(path.get_attribute("data-last-x")) if path else -1


# the job must outlast several of the page's 3 s refreshes, or the page's first look at it may already be its end
# (48 trials on two workers took about 2 s here): one worker measures these in about 15 s on a quiet 2-core VM
LIVE_TRIALS = 300


def test_dashboard_follows_a_real_job(page, tmp_path):
    db_path = tmp_path / "live.sqlite"
    Database(db_path).close()
    job = None
    try:
        with DashboardServer(str(db_path), port=0).start() as server:
            page.goto(server.url)
            page.wait_for_selector("#status:has-text('0 records')", timeout=15_000)
            # an empty study says so instead of drawing empty axes
            assert page.is_visible("#jobs-empty")
            assert page.inner_text("#chart-trials") == "no successful trial yet"
            assert "No records yet" in page.inner_text("#workload-info")
            job = subprocess.Popen(
                [sys.executable, "-m", "tunefarm.cli", "tune", "matmul-64", "--trials", str(LIVE_TRIALS),
                 "--trials-per-round", "4", "--db", str(db_path), "--farm", "local", "--workers", "1",
                 "--target", "llvm -num-cores=1", "--seed", "3", "--task-name", HOSTILE],
                cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            _wait(lambda: page.query_selector("#jobs tbody tr"), 120, "the job's row", job)
            assert page.inner_text("#jobs tbody tr .state") == "running"
            n1 = _wait(lambda: _job_trials(page) > 0 and _job_trials(page), 180, "the first trials", job)
            x1 = _wait(lambda: _curve_end(page) > 0 and _curve_end(page), 60, "a best-so-far curve", job)
            n2 = _wait(lambda: _job_trials(page) > n1 and _job_trials(page), 120, "more trials", job)
            _wait(lambda: _curve_end(page) > x1, 60, "the curve to advance", job)
            assert n2 > n1
            os.makedirs(OUTPUT, exist_ok=True)
            page.screenshot(path=os.path.join(OUTPUT, "dashboard-running-job.png"), full_page=True)

            assert job.wait(timeout=300) == 0, job.stdout.read()
            _wait(lambda: page.inner_text("#jobs tbody tr .state") == "finished", 20, "the job to finish")
            _wait(lambda: _job_trials(page) == LIVE_TRIALS, 20, f"all {LIVE_TRIALS} trials")
            # the finished workload: its top-k as sch.* calls and a slice plot per decision
            _wait(lambda: len(page.query_selector_all("#topk tbody tr[data-record-id]")) >= 3, 20, "the top-k")
            assert "sch." in page.inner_text("#topk tbody tr:first-child details[open] pre.trace")  # the fastest
            assert all("sch.sample_perfect_tile" in pre.text_content() or "sch.split" in pre.text_content()
                       for pre in page.query_selector_all("#topk pre.trace"))
            _wait(lambda: page.query_selector_all("#decisions figure[data-decision]"), 20, "the decision plots")
            dots = page.query_selector_all("#decisions figure svg .dots circle")
            assert len(dots) >= 3

            # the hostile task name is text everywhere: no element was made from it, nothing ran
            # one more workload of that name, with hostile error texts and host, from another process
            code = ("import sys; from dashtest_helpers import add_hostile; from tunefarm.database import Database; "
                    "add_hostile(Database(sys.argv[1]), n=8)")
            subprocess.run([sys.executable, "-c", code, str(db_path)], check=True, timeout=120, cwd=REPO,
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.abspath(__file__))))
            _wait(lambda: HOSTILE in page.inner_text("#hosts"), 20, "the hostile host name", page=page)
            for where in ("#tasks", "#legend", "#hosts", "#task-select"):
                assert HOSTILE in page.inner_text(where) or HOSTILE in page.eval_on_selector(
                    where, "e => e.textContent"), where
            assert page.query_selector_all("img") == []
            assert page.query_selector_all("script:not([src])") == []
            page.screenshot(path=os.path.join(OUTPUT, "dashboard-finished-job.png"), full_page=True)
            assert page.problems == []
    finally:
        if job is not None and job.poll() is None:
            job.kill()
            job.wait(timeout=30)


def test_two_studies_render_as_one_page(page, tmp_path):
    """``--db team --db mine`` (and a third that cannot be read): jobs of both with their study, a curve per
    task and study (the later study's dashed), the merged top-k with its confirmed figures in the order the API
    gives, the unreadable study named in a banner, and no console error."""
    first, second = str(tmp_path / "team.sqlite"), str(tmp_path / "mine.sqlite")
    made = build_layers(first, second)
    missing = str(tmp_path / "gone.sqlite")
    with DashboardServer([first, second, missing], port=0).start() as server:
        page.goto(server.url)
        page.wait_for_selector("#status:has-text('3 studies')", timeout=15_000)
        assert {r.get_attribute("data-study") for r in page.query_selector_all("#jobs tbody tr")} == {first, second}
        assert second in page.inner_text("#tasks") and first in page.inner_text("#tasks")
        assert page.is_visible("#layer-errors") and missing in page.inner_text("#layer-errors")
        dashed = page.query_selector_all("#chart-trials path.series[stroke-dasharray]")
        assert dashed and all(second in p.get_attribute("data-series") for p in dashed)
        assert len(page.query_selector_all("#chart-trials path.series")) > len(dashed)
        s = get_json(server.url + "api/summary")
        task = next(t for t in s["tasks"] if t["key"] == made["key"])
        page.select_option("#task-select", f"{task['workload_id']}:{task['target_id']}")
        d = get_json(server.url + f"api/task?workload={task['workload_id']}&target={task['target_id']}&k=10")
        want = [[p["study"], str(p["record_id"])] for p in d["top"]]
        _wait(lambda: [[r.get_attribute("data-study"), r.get_attribute("data-record-id")]
                       for r in page.query_selector_all("#topk tbody tr")] == want, 20, "the merged top-k", page=page)
        first_row = page.inner_text("#topk tbody tr:first-child td.confirmed")
        assert "(" in first_row and "–" in first_row  # the confirmed median and its p10-p90 spread
        assert page.inner_text("#topk tbody tr:nth-child(2) td.confirmed") == "not confirmed"
        os.makedirs(OUTPUT, exist_ok=True)
        page.screenshot(path=os.path.join(OUTPUT, "dashboard-two-studies.png"), full_page=True)
        assert page.problems == []
