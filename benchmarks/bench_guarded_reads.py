"""Padding kernels: what guarding a vector select's reads costs, side by side in one run (medians and ratios).

    python benchmarks/bench_guarded_reads.py [--repeat 15] [--baseline DIR]

Rows (NCHW padding of a 1x256x30x30 input by 1, float32, one core):
- ``pad h,w, w vectorized``: the guard differs by lane, so the read is a masked vector load;
- ``pad h,w, w split 8 (unrolled) + vectorized``: the same in 8-lane pieces, ``h`` split by 4 and unrolled;
- ``pad h only, w vectorized``: a guard every lane shares, which branches around plain vector loads;
- ``copy, w vectorized``: the same bytes moved without a guard, the floor the padding rows are compared to.

``--baseline DIR`` also times the kernels as the tunefarm source tree in DIR builds them (a ``git archive``
of an earlier commit, say), in a child process whose samples interleave with this one's, and prints the two
columns and their ratio. Every kernel's output is checked against numpy first.
"""
from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

C, H, W = 256, 30, 30
HEAD = f'''
@T.prim_func
def main(I: T.Buffer((1, {C}, {H}, {W}), "float32"), P: T.Buffer((1, {C}, {H + 2}, {{pw}}), "float32")):
    for n, c, h, w in T.grid(1, {C}, {H + 2}, {{pw}}):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [n, c, h, w])
            P[vn, vc, vh, vw] = {{value}}
'''
PAD_HW = ("T.if_then_else(vh >= 1 and vh < 31 and vw >= 1 and vw < 31, I[vn, vc, vh - 1, vw - 1], "
          "T.float32(0))")
PAD_H = "T.if_then_else(vh >= 1 and vh < 31, I[vn, vc, vh - 1, vw], T.float32(0))"
COPY = "I[vn, vc, T.min(vh, 29), vw]"


def _vectorize_w(sch):
    sch.vectorize(sch.get_loops(sch.get_block("pad"))[3])


def _split_unrolled(sch):
    _, _, h, w = sch.get_loops(sch.get_block("pad"))
    _, hi = sch.split(h, [None, 4])
    wo, wi = sch.split(w, [None, 8])
    sch.vectorize(wi)
    sch.unroll(wo)
    sch.unroll(hi)


# row -> (value, padded width, schedule, numpy padding of (h, w))
KERNELS = {
    "pad h,w, w vectorized": (PAD_HW, W + 2, _vectorize_w, ((1, 1), (1, 1))),
    "pad h,w, w split 8 (unrolled) + vectorized": (PAD_HW, W + 2, _split_unrolled, ((1, 1), (1, 1))),
    "pad h only, w vectorized": (PAD_H, W, _vectorize_w, ((1, 1), (0, 0))),
    "copy, w vectorized": (COPY, W, _vectorize_w, None),
}


def build_kernels() -> dict:
    from tunefarm.runtime import build
    from tunefarm.schedule import Schedule
    from tunefarm.script import from_source
    from tunefarm.target import Target

    x = np.random.default_rng(0).standard_normal((1, C, H, W)).astype("float32")
    out = {}
    for name, (value, pw, schedule, pad) in KERNELS.items():
        sch = Schedule(from_source(HEAD.format(pw=pw, value=value)))
        schedule(sch)
        mod = build(sch.mod["main"], Target.host(1))
        y = np.full((1, C, H + 2, pw), np.nan, "float32")
        mod(x, y)
        want = np.pad(x, ((0, 0), (0, 0)) + pad) if pad else x[:, :, np.minimum(np.arange(H + 2), H - 1), :]
        np.testing.assert_array_equal(y, want, err_msg=name)
        out[name] = (mod, x, y)
    return out


def sample(kernels: dict) -> dict:
    """One median-of-a-short-run time per kernel, seconds."""
    return {name: mod.time_evaluator("main", number=200, repeat=1)(x, y).results[0]
            for name, (mod, x, y) in kernels.items()}


def child() -> None:
    """``--child``: build, then answer every line on stdin with one JSON sample."""
    kernels = build_kernels()
    print("ready", flush=True)
    for _ in sys.stdin:
        print(json.dumps(sample(kernels)), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--baseline", help="a tunefarm source tree whose code generator to time beside this one")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child()
        return
    proc = None
    if args.baseline:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.baseline))
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child"], env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=args.baseline)
        assert proc.stdout.readline().strip() == "ready", "the baseline's kernels did not build"
    kernels = build_kernels()
    ours, theirs = [], []
    for _ in range(args.repeat):
        ours.append(sample(kernels))
        if proc:
            proc.stdin.write("go\n")
            proc.stdin.flush()
            theirs.append(json.loads(proc.stdout.readline()))
    if proc:
        proc.stdin.close()
        proc.wait(timeout=60)
    report(ours, theirs)


def report(ours: list, theirs: list) -> None:
    def med(xs):
        return statistics.median(xs)

    copy = "copy, w vectorized"
    print(f"{'kernel':46s} {'us (median, min-max)':>26s} {'/ copy':>7s}" + (
        f" {'baseline us (median, min)':>26s} {'/ copy':>7s} {'this/base':>9s}" if theirs else ""))
    for name in KERNELS:
        ts = [s[name] * 1e6 for s in ours]
        line = (f"{name:46s} {med(ts):9.1f} ({min(ts):6.1f}-{max(ts):6.1f})"
                f" {med([s[name] / s[copy] for s in ours]):7.2f}")
        if theirs:
            bs = [s[name] * 1e6 for s in theirs]
            line += (f" {med(bs):17.1f} ({min(bs):6.1f})" f" {med([s[name] / s[copy] for s in theirs]):7.2f}"
                     f" {med([a[name] / b[name] for a, b in zip(ours, theirs)]):9.2f}")
        print(line)


if __name__ == "__main__":
    main()
