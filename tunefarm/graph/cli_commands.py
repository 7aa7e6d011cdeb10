"""What ``tunefarm tune-model`` / ``compile`` / ``run`` do (``tunefarm/cli.py`` holds their parsers).

Models are named: ``mlp`` is the course's FashionMNIST MLP (784 -> 128 -> ReLU -> 10), ``convnet`` a small
LeNet-style network on 1x28x28 images (seeded random weights, for trying the conv path).
"""
from __future__ import annotations

import contextlib
import logging
import os
import pickle
import sys

import numpy as np

MODELS = ("mlp", "convnet")


class CLIError(Exception):
    """A user-facing failure (the CLI prints it as ``tunefarm <cmd>: error: ...``)."""


def _logging() -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s [%(levelname)s] %(message)s")


def load_model(name: str, params_path: str | None, batch: int):
    """``(IRModule, params)`` of a named model for one batch size."""
    from ..nn import spec
    from ..nn.models import convnet, mlp
    from .params import find_mlp_params, load_params

    if batch < 1:
        raise CLIError(f"--batch must be at least 1, got {batch}")
    if name == "mlp":
        if params_path is not None and not os.path.exists(params_path):
            raise CLIError(f"parameter file {params_path!r} does not exist")
        with _params_errors(params_path):
            params, _ = find_mlp_params(params_path)
        missing = {"w0", "b0", "w1", "b1"} - set(params)
        if missing:
            raise CLIError(f"the MLP parameters lack {sorted(missing)} (expected w0, b0, w1, b1)")
        return mlp(params).export({"forward": {"x": spec.Tensor((batch, 784), "float32")}})
    if name == "convnet":
        model = convnet()
        if params_path is not None:
            with _params_errors(params_path):
                model.load_state_dict(load_params(params_path))
        return model.export({"forward": {"x": spec.Tensor((batch, 1, 28, 28), "float32")}})
    raise CLIError(f"unknown model {name!r}; known models: {', '.join(MODELS)}")


@contextlib.contextmanager
def _params_errors(path: str | None):
    """A weights file that cannot be read (not a pickle, a refused pickle, a broken .npz) as a one-line error."""
    try:
        yield
    except (ValueError, pickle.UnpicklingError, OSError) as e:
        raise CLIError(f"cannot read the weights {path!r}: {e}") from None


def _check_tune_model_args(args) -> tuple[int, ...]:
    """Everything that can be refused before a farm starts, refused now: the batch sizes to tune."""
    if args.trials < 0:
        raise CLIError("--trials must be >= 0")
    if args.farm == "local" and args.ray_address:
        raise CLIError("--ray-address needs --farm ray")
    if args.workers is not None and args.workers < 1:
        raise CLIError(f"--workers must be at least 1, got {args.workers}")
    batches = tuple(args.batch or (1, 64))
    bad = [b for b in batches if b < 1]
    if bad:
        raise CLIError(f"--batch must be at least 1, got {bad[0]}")
    if args.params is not None:
        if not os.path.exists(args.params):
            raise CLIError(f"parameter file {args.params!r} does not exist")
        from .params import load_params

        with _params_errors(args.params):
            load_params(args.params)
    from ..database import Database

    Database(args.db).close()  # a database that cannot be opened or created fails here, not after tuning starts
    return batches


def tune_model_command(args) -> int:
    _logging()
    batches = _check_tune_model_args(args)
    if args.model == "mlp":
        from .main_job import CheckFailed, run_mlp_job

        try:
            run_mlp_job(args.params, trials=args.trials, db_path=args.db, target=args.target, farm=args.farm,
                        workers=args.workers, ray_address=args.ray_address, batch_sizes=batches, seed=args.seed,
                        save_dir=args.save_dir)
        except CheckFailed as e:
            print(f"tunefarm tune-model: CHECK FAILED: {e}", file=sys.stderr)
            return 1
        return 0
    from ..database import Database
    from .compile import compile as compile_model
    from .main_job import make_farm
    from .tune_model import tune_model

    farm, owned = make_farm(args.farm, args.target, args.workers, args.ray_address)
    try:
        with Database(args.db) as db:
            if args.trials > 0:
                farm.start()  # on the main thread (started lazily it would start on the job's measuring thread)
            for batch in batches:
                mod, params = load_model(args.model, args.params, batch)
                tune_model(mod, params, target=args.target or farm.target, max_trials=args.trials, database=db,
                           farm=farm, seed=args.seed)
                exe = compile_model(mod, params, database=db, target=args.target or farm.target)
                print(f"batch {batch}: kernels {exe.kernels}")
                if args.save_dir:
                    os.makedirs(args.save_dir, exist_ok=True)
                    exe.save(os.path.join(args.save_dir, f"{args.model}_b{batch}.tfx"))
    finally:
        if owned:
            farm.close()
    return 0


def compile_command(args) -> int:
    from .compile import compile as compile_model

    mod, params = load_model(args.model, args.params, args.batch)
    if args.db is not None and not os.path.exists(args.db):
        raise CLIError(f"database {args.db!r} does not exist (tune first, or leave --db out for default schedules)")
    exe = compile_model(mod, params, database=args.db, target=args.target)
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise CLIError(f"cannot write {args.output!r}: directory {out_dir!r} does not exist")
    exe.save(args.output)
    tuned = sum(1 for v in exe.kernels.values() if v == "tuned")
    print(f"wrote {args.output}: {exe.kind} executable, {len(exe.kernels)} kernels ({tuned} tuned, "
          f"{len(exe.kernels) - tuned} default schedule)")
    return 0


def run_command(args) -> int:
    from .executable import ExecutableError, load
    from .main_job import median_call_us

    try:
        exe = load(args.executable)
    except (ExecutableError, FileNotFoundError) as e:
        raise CLIError(str(e)) from None
    specs = exe.input_specs
    if args.input:
        if len(args.input) != len(specs):
            raise CLIError(f"the executable takes {len(specs)} input(s) "
                           f"({', '.join(s['name'] for s in specs)}), got {len(args.input)} --input files")
        inputs = []
        for path in args.input:
            if not os.path.exists(path):
                raise CLIError(f"input file {path!r} does not exist")
            try:
                array = np.load(path, allow_pickle=False)
            except (ValueError, OSError, EOFError) as e:  # text, pickles and object arrays are refused here
                raise CLIError(f"input {path!r} is not a numeric .npy array: {e}") from None
            if not isinstance(array, np.ndarray):  # an .npz archive
                array.close()
                raise CLIError(f"input {path!r} is an .npz archive; give each array as its own .npy file")
            inputs.append(array)
    else:
        rng = np.random.default_rng(args.seed)
        inputs = []
        for s in specs:
            if not all(isinstance(d, int) for d in s["shape"]):
                raise CLIError(f"input {s['name']} has a symbolic shape; give it with --input FILE.npy")
            inputs.append(rng.random(tuple(s["shape"])).astype(s["dtype"]))
        print(f"no --input: using seeded random inputs {[tuple(s['shape']) for s in specs]}")
    try:
        result = exe(*inputs)
    except (TypeError, ValueError) as e:
        raise CLIError(str(e)) from None
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
