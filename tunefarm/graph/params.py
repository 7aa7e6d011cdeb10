"""Model parameters: numpy dicts, ``.npz`` files, pickles read through an allowlist, and the course's weights.

The course's FashionMNIST MLP weights ship inside the package (``data/fasionmnist_mlp_params.npz``), so the
main job runs on them with no network and nothing beside the clone. The course publishes them as a pickle
(``models/fasionmnist_mlp_params.pkl`` in mlc-ai/web-data, Apache-2.0, sha256 ``COURSE_PICKLE_SHA256``);
that pickle was converted once, through ``SafeUnpickler``, into the ``.npz`` (sha256 ``COURSE_NPZ_SHA256``,
checked on every load). Unpickling can run arbitrary code, so pickles -- a user's or the course's -- are read
only by ``SafeUnpickler``, which resolves numpy's array reconstruction and dtypes and nothing else.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

COURSE_PICKLE_SHA256 = "65e60c21536ed052ba5e1e6c94806530c7d804056822a6b39066ce6a5b02e646"
COURSE_NPZ = Path(__file__).resolve().parent / "data" / "fasionmnist_mlp_params.npz"
COURSE_NPZ_SHA256 = "deccd735c7d6a837b348685f206b400e56a2a75045f47bba7e7771ccffa15451"

# what numpy's own pickles of arrays, dtypes and scalars name, under every protocol (0-5) and numpy 1.x / 2.x
_ALLOWED_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),  # protocol 5: the array's bytes travel out of band
    ("numpy._core.numeric", "_frombuffer"),
}


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle asked for something other than numpy arrays."""


def _latin1_bytes(text, encoding="latin1") -> bytes:
    """``_codecs.encode`` as protocols 0-2 use it: how they write ``bytes`` (the array's data) as text."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise UnsafePickleError(f"refusing _codecs.encode({type(text).__name__}, {encoding!r}) in a pickle: "
                                "only the latin1 bytes numpy writes are allowed")
    return text.encode("latin1")


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that can build numpy arrays and plain containers and nothing else."""

    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED_GLOBALS:
            return getattr(importlib.import_module(module), name)
        if (module, name) == ("_codecs", "encode"):
            return _latin1_bytes
        raise UnsafePickleError(f"refusing to load {module}.{name} from a pickle: only numpy arrays are allowed")


def sha256_of(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _verified_bytes(path: str | os.PathLike, sha256: str | None) -> bytes:
    data = Path(path).read_bytes()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise ValueError(f"{path}: sha256 is {got}, expected {sha256} (wrong or corrupted file)")
    return data


def load_pickle_params(path: str | os.PathLike, sha256: str | None = None) -> dict[str, np.ndarray]:
    """Read a pickled ``{name: ndarray}`` dict safely; verify ``sha256`` when given."""
    data = _verified_bytes(path, sha256)
    try:
        obj = SafeUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, RecursionError, UnicodeDecodeError) as e:  # what a damaged or foreign file raises
        raise ValueError(f"{path}: not a pickle of numpy arrays ({type(e).__name__}: {e})"[:300]) from None
    return _check_param_dict(obj, str(path))


def load_npz_params(path: str | os.PathLike, sha256: str | None = None) -> dict[str, np.ndarray]:
    """Read an ``.npz`` of named arrays (never with pickled objects); verify ``sha256`` when given."""
    data = _verified_bytes(path, sha256)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return _check_param_dict({k: z[k] for k in z.files}, str(path))
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ValueError(f"{path}: not an .npz of numeric arrays ({type(e).__name__}: {e})"[:300]) from None


def _check_param_dict(obj, where: str) -> dict[str, np.ndarray]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a dict of arrays, got {type(obj).__name__}")
    out = {}
    for k, v in obj.items():
        if not isinstance(k, str) or not isinstance(v, np.ndarray):
            raise ValueError(f"{where}: entry {k!r} is not a named numpy array")
        if v.dtype == object:
            raise ValueError(f"{where}: entry {k!r} has object dtype; only numeric arrays are allowed")
        out[k] = np.asarray(v, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
    return out


def load_params(source) -> dict[str, np.ndarray]:
    """Parameters from a dict of arrays, an ``.npz`` file, or a pickle file (read safely)."""
    if isinstance(source, dict):
        return _check_param_dict({k: np.asarray(v) for k, v in source.items()}, "params")
    path = Path(source)
    if not path.exists():
        raise FileNotFoundError(f"parameter file {path} does not exist")
    if path.suffix == ".npz":
        return load_npz_params(path)
    return load_pickle_params(path)


def course_mlp_params() -> dict[str, np.ndarray]:
    """The course's FashionMNIST MLP weights (``w0`` (128, 784), ``b0``, ``w1`` (10, 128), ``b1``; float32),
    from the packaged ``.npz`` after checking its sha256."""
    return load_npz_params(COURSE_NPZ, COURSE_NPZ_SHA256)


def _is_course_weights(params: dict[str, np.ndarray]) -> bool:
    course = course_mlp_params()
    return set(params) == set(course) and all(
        params[k].shape == v.shape and params[k].dtype == v.dtype and np.array_equal(params[k], v)
        for k, v in course.items())


def find_mlp_params(path: str | os.PathLike | None = None) -> tuple[dict[str, np.ndarray], str]:
    """The MLP's weights and a sentence saying where they came from.

    Without ``path``: the course's weights shipped in the package (sha256 verified). With ``path``: that
    file (an ``.npz``, or a pickle read by the safe unpickler); the sentence says whether it holds the
    course's weights.
    """
    if path is None:
        return course_mlp_params(), (f"the course's FashionMNIST weights ({COURSE_NPZ.name}, shipped with "
                                     "tunefarm, sha256 verified)")
    params = load_params(path)
    same = _is_course_weights(params)
    return params, f"{path} ({'the course weights' if same else 'not the course weights'})"


def random_mlp_params(seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded weights with the course MLP's shapes (for experiments that need other weights than the course's)."""
    rng = np.random.default_rng(seed)
    return {
        "w0": (rng.standard_normal((128, 784)) * 0.05).astype("float32"),
        "b0": (rng.standard_normal(128) * 0.05).astype("float32"),
        "w1": (rng.standard_normal((10, 128)) * 0.1).astype("float32"),
        "b1": (rng.standard_normal(10) * 0.1).astype("float32"),
    }
