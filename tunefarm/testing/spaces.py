"""Schedule functions for fault drills of the tuning job (importable by name, so workers sample them).

``dies_once``: the course's stochastic matmul schedule, except that the first worker process to sample it
after ``$TUNEFARM_DRILL_KILL_FILE`` appears SIGKILLs itself (it claims the file by renaming it, so exactly one
process dies) -- a worker lost in the middle of search work.
``dies_per_ticket``: the same, except that each file in the directory ``$TUNEFARM_DRILL_KILL_DIR`` is one death
(a process takes a ticket by renaming it away): N tickets, N workers SIGKILLed in search work, one after another.
"""
from __future__ import annotations

import os
import signal

from search_spaces.matmul import stochastic_schedule_mm

KILL_FILE = "TUNEFARM_DRILL_KILL_FILE"
KILL_DIR = "TUNEFARM_DRILL_KILL_DIR"


def dies_once(sch):
    path = os.environ.get(KILL_FILE)
    if path and os.path.exists(path):
        try:
            os.rename(path, f"{path}.{os.getpid()}")  # only one process wins the rename
        except OSError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    return stochastic_schedule_mm(sch)


def dies_per_ticket(sch):
    folder = os.environ.get(KILL_DIR)
    for name in sorted(os.listdir(folder)) if folder else ():
        if name.startswith("taken."):
            continue
        try:
            os.rename(os.path.join(folder, name), os.path.join(folder, f"taken.{name}.{os.getpid()}"))
        except OSError:
            continue  # another process took this one
        os.kill(os.getpid(), signal.SIGKILL)
    return stochastic_schedule_mm(sch)
