"""Vectorized selects whose memory side is read only in some lanes, run against numpy.

``python guarded_read_programs.py ACCESS`` builds one 16-lane program per guard shape for one kind of read
(``ACCESS`` in ``ACCESSES``) and prints ``<shape> ok`` or ``<shape> wrong``. Row 0 of every program has its
guard false in every lane and its address 4 GB below the input: a lane that reads where its guard is false
faults there, so the tests run this file in a child process.
"""
from __future__ import annotations

import sys

import numpy as np

FAR = 1_000_000_000  # elements: 4 GB of float32 away from the input

# name -> (guard on the lane vl in TVMScript, the same on a numpy array of lanes)
GUARDS = {
    "first lane": ("vl < 1", lambda vl: vl < 1),
    "last lane": ("vl >= 15", lambda vl: vl >= 15),
    "no lane": ("vl * 3 > 50", lambda vl: vl * 3 > 50),
    "every lane": ("vl < 16", lambda vl: vl < 16),
    "mixed": ("vl % 3 != 1", lambda vl: vl % 3 != 1),
}

# name -> (index expression of x for row vr >= 1 and lane vl, the same in numpy); a gather has stride 2 and a
# lane-invariant read does not use the lane
ACCESSES = {
    "contiguous": ("vl + 16 * (vr - 1)", lambda vr, vl: vl + 16 * (vr - 1)),
    "gather": ("2 * vl + 32 * (vr - 1)", lambda vr, vl: 2 * vl + 32 * (vr - 1)),
    "lane-invariant": ("16 * (vr - 1) + 5", lambda vr, vl: 16 * (vr - 1) + 5 + 0 * vl),
}

PROGRAM = '''
@T.prim_func
def guarded(k: T.Buffer((3,), "int32"), x: T.Buffer((64,), "{dtype}"), y: T.Buffer((3, 16), "{dtype}")):
    for r in T.serial(3):
        for l in T.vectorized(16):
            with T.block("g"):
                vr, vl = T.axis.remap("SS", [r, l])
                y[vr, vl] = {value}
'''


def source(guard: str, index: str, nested: bool = False, divide: bool = False) -> str:
    """The program: ``k[vr] == 1`` (false in row 0) and the lane guard pick ``x`` at ``index`` (moved 4 GB away
    in row 0), else -1. ``nested`` puts the read under a second select; ``divide`` makes it ``100 // x[...]``
    on int32."""
    read = f"x[{index} + {FAR} * (k[vr] - 1)]"
    dtype, minus_one = ("int32", "-1") if divide else ("float32", "T.float32(-1)")
    if divide:
        read = f"100 // {read}"
    if nested:
        read = f"T.if_then_else(vl % 2 == 0, {read}, {minus_one} * 2)"
    value = f"T.if_then_else(k[vr] == 1 and {guard}, {read}, {minus_one})"
    return PROGRAM.format(dtype=dtype, value=value)


def reference(k, x, guard, index, nested: bool = False, divide: bool = False) -> np.ndarray:
    vl = np.arange(16)
    y = np.full((3, 16), -1, x.dtype)
    for vr in range(3):
        if k[vr] != 1:
            continue
        got = x[index(vr, vl)]
        if divide:
            got = 100 // got
        if nested:
            got = np.where(vl % 2 == 0, got, -2)
        y[vr] = np.where(guard(vl), got, -1)
    return y


def run(access: str, nested: bool, divide: bool) -> None:
    from tunefarm.runtime import build
    from tunefarm.script import from_source

    index_src, index = ACCESSES[access]
    k = np.array([0, 1, 1], np.int32)
    x = np.arange(1, 65).astype("int32" if divide else "float32")
    for name, (guard_src, guard) in GUARDS.items():
        func = from_source(source(guard_src, index_src, nested, divide))
        y = np.zeros((3, 16), x.dtype)
        build(func)(k, x, y)
        ok = np.array_equal(y, reference(k, x, guard, index, nested, divide))
        print(name, "ok" if ok else "wrong", flush=True)


if __name__ == "__main__":
    kind = sys.argv[1]
    run(kind.split("+")[0], "nested" in kind, "divide" in kind)
