"""A scalar ``T.if_then_else`` evaluates only the side its condition picks, as TVM's: a padding program's
``x[i - offset]`` is never read where it lies outside ``x``. The program runs in a child process, so a
regression (a read far outside the buffer) fails this test instead of crashing the run."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PROGRAM = textwrap.dedent('''
    import numpy as np
    from tunefarm.runtime import build
    from tunefarm.script import T

    @T.prim_func
    def pad(x: T.Buffer((64,), "float32"), y: T.Buffer((96,), "float32")):
        for i in range(96):
            with T.block("pad"):
                vi = T.axis.remap("S", [i])
                # outside [16, 80) the index is 400 MB away from x: reading it there would fault
                y[vi] = T.if_then_else(16 <= vi and vi < 80,
                                       x[vi - 16 + ((vi + 48) // 64 - 1) * -100000000], T.float32(0))

    x = np.arange(64, dtype=np.float32)
    y = np.full(96, -1.0, np.float32)
    try:
        build(pad)(x, y)
    except Exception as e:
        print("build/run error", e)
    print("ok" if (y == np.concatenate([np.zeros(16), x, np.zeros(16)])).all() else "wrong")
''')


def test_the_side_not_taken_is_not_read(tmp_path):
    script = tmp_path / "pad.py"
    script.write_text(PROGRAM)
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=root)
    assert run.returncode == 0, f"the program crashed (rc {run.returncode}): {run.stderr[-2000:]}"
    assert run.stdout.strip().splitlines()[-1] == "ok", run.stdout
