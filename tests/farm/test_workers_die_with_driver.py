"""A farm's workers never outlive their driver: a driver killed by SIGKILL (an operator, the OOM killer) leaves no
worker running, whatever item the workers were running (a hung one, a CPU-bound one) or none; on worker
processes and on the actors of the private Ray a driver starts."""
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

RAY_DRIVER = textwrap.dedent("""
    import time
    import ray
    from tunefarm.farm import RayFarm, Work
    from tunefarm.testing.drills import worker_info
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    farm = RayFarm(num_workers=2)
    while len(worker_info(farm)) < 2:  # every actor is ready (asked before they are busy: a busy one is silent)
        farm.poll(0.5)
    pids = [w["pid"] for w in worker_info(farm)]
    farm.put(Work("tunefarm.testing.handlers:hang", {}, timeout_s=600))
    farm.put(Work("tunefarm.testing.handlers:spin", {"secs": 600}, timeout_s=600))
    farm.poll(2.0)  # both items are running now
    print(" ".join(map(str, pids)), flush=True)
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


def _drill(driver_code: str, workers: int, within_s: float) -> None:
    """Start ``driver_code``, read its workers' pids, SIGKILL it: none of them runs ``within_s`` later."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    driver = subprocess.Popen([sys.executable, "-c", driver_code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    pids: list[int] = []
    try:
        pids = [int(p) for p in driver.stdout.readline().split()]
        assert len(pids) == workers and all(_running(p) for p in pids)
        driver.send_signal(signal.SIGKILL)
        driver.wait(30)
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline and any(_running(p) for p in pids):
            time.sleep(0.1)
        assert [p for p in pids if _running(p)] == []
    finally:
        for p in pids:  # only this test's own workers, if the farm failed to end them
            if _running(p):
                os.kill(p, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
        try:
            os.killpg(driver.pid, signal.SIGKILL)  # what else the driver started in its session (Ray's own)
        except ProcessLookupError:
            pass


def test_workers_exit_when_their_driver_is_killed():
    _drill(DRIVER, 3, 10.0)


@pytest.mark.slow  # a private Ray starts for it (run by CI in the slow step)
def test_ray_actors_exit_when_their_driver_is_killed():
    """Ray ends a dead driver's actors itself (its private cluster's processes share the driver's fate); the
    farm must keep it that way (no detached actors, no cluster left running for them)."""
    _drill(RAY_DRIVER, 2, 30.0)
