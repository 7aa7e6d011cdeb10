"""``tunefarm run``: run a compiled executable on .npy inputs (or seeded random ones), without the tuning stack."""
from __future__ import annotations

import argparse
import os

from .errors import CommandError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a compiled executable on .npy inputs",
                       description="Load an executable written by 'tunefarm compile' (no tuning stack is "
                                   "imported) and run it on .npy inputs, or on seeded random inputs.")
    p.add_argument("executable", help="file written by 'tunefarm compile' or Executable.save")
    p.add_argument("--input", action="append", help="input .npy file (repeat for several inputs)")
    p.add_argument("--output", help="write the result to this .npy file (default: print it)")
    p.add_argument("--bench", action="store_true", help="also time a call (median, through Python)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs used without --input")
    p.set_defaults(func=run)


def _read_inputs(paths: list[str], specs: list[dict]) -> list[np.ndarray]:
    """The ``--input`` arrays, one per input of the executable; text, pickles and archives are refused."""
    if len(paths) != len(specs):
        raise CommandError(f"the executable takes {len(specs)} input(s) "
                           f"({', '.join(s['name'] for s in specs)}), got {len(paths)} --input files")
    import numpy as np  # numpy loads when the command runs: every other command starts without it

    inputs = []
    for path in paths:
        if not os.path.exists(path):
            raise CommandError(f"input file {path!r} does not exist")
        try:
            array = np.load(path, allow_pickle=False)
        except (ValueError, OSError, EOFError) as e:  # text, pickles and object arrays are refused here
            raise CommandError(f"input {path!r} is not a numeric .npy array: {e}") from None
        if not isinstance(array, np.ndarray):  # an .npz archive
            array.close()
            raise CommandError(f"input {path!r} is an .npz archive; give each array as its own .npy file")
        inputs.append(array)
    return inputs


def _random_inputs(specs: list[dict], seed: int) -> list[np.ndarray]:
    import numpy as np  # when the command runs (see _read_inputs)

    rng = np.random.default_rng(seed)
    inputs = []
    for s in specs:
        if not all(isinstance(d, int) for d in s["shape"]):
            raise CommandError(f"input {s['name']} has a symbolic shape; give it with --input FILE.npy")
        inputs.append(rng.random(tuple(s["shape"])).astype(s["dtype"]))
    print(f"no --input: using seeded random inputs {[tuple(s['shape']) for s in specs]}")
    return inputs


def run(args: argparse.Namespace) -> int:
    # the executable loader loads when the command runs (see the package docstring)
    from ..graph.executable import ExecutableError, load
    from .side_by_side import median_call_us

    import numpy as np  # when the command runs (see _read_inputs)

    try:
        exe = load(args.executable)
    except (ExecutableError, FileNotFoundError) as e:
        raise CommandError(str(e)) from None
    specs = exe.input_specs
    inputs = _read_inputs(args.input, specs) if args.input else _random_inputs(specs, args.seed)
    try:
        result = exe(*inputs)
    except (TypeError, ValueError) as e:
        raise CommandError(str(e)) from None
    if args.output:
        np.save(args.output, result)
        print(f"wrote {args.output} {result.shape} {result.dtype}")
    else:
        with np.printoptions(precision=4, suppress=True, threshold=64):
            print(result)
    if result.ndim == 2:
        print(f"argmax: {result.argmax(1).tolist()[:32]}")
    if args.bench:
        print(f"latency per call: {median_call_us(exe, *inputs):.2f} us (median, through Python)")
    return 0
