"""A LocalFarm's workers never outlive their driver: a driver killed by SIGKILL (an operator, the OOM killer)
leaves no worker running, whatever item the workers were running (a hung one, a CPU-bound one) or none."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)

DRIVER = textwrap.dedent("""
    import sys, time
    from tunefarm.farm import LocalFarm, Work
    farm = LocalFarm(3)
    farm.put(Work("tunefarm.testing.handlers:hang", {}, timeout_s=600))
    farm.put(Work("tunefarm.testing.handlers:spin", {"secs": 600}, timeout_s=600))
    while len(farm.rooms()) < 3:  # every worker is ready (and has room)
        farm.poll(0.2)
    farm.poll(2.0)  # both items are running now
    print(" ".join(map(str, farm.worker_pids)), flush=True)
    while True:
        farm.poll(1.0)
""")


def _running(pid: int) -> bool:
    """Alive and not a zombie (a reparented zombie waits for a reaper that may never come in a container)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] not in (b"Z", b"X")


def test_workers_exit_when_their_driver_is_killed():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    pids: list[int] = []
    try:
        pids = [int(p) for p in driver.stdout.readline().split()]
        assert len(pids) == 3 and all(_running(p) for p in pids)
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
        deadline = time.monotonic() + 10.0
        while time.monotonic() < deadline and any(_running(p) for p in pids):
            time.sleep(0.1)
        assert [p for p in pids if _running(p)] == []
    finally:
        for p in pids:  # only this test's own workers, if the farm failed to end them
            if _running(p):
                os.kill(p, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
