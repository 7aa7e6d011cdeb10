"""Schedule functions for fault drills of the tuning job (importable by name, so workers sample them).

``dies_once``: the course's stochastic matmul schedule, except that the first worker process to sample it
after ``$TUNEFARM_DRILL_KILL_FILE`` appears SIGKILLs itself (it claims the file by renaming it, so exactly one
process dies) -- a worker lost in the middle of search work.
"""
from __future__ import annotations

import os
import signal

from search_spaces.matmul import stochastic_schedule_mm

KILL_FILE = "TUNEFARM_DRILL_KILL_FILE"


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
