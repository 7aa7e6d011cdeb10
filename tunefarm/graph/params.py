"""Loading model parameters: numpy dicts, ``.npz`` files, and the course's pickle through an allowlist.

The course ships its FashionMNIST weights as a pickle. Unpickling can run arbitrary code, so pickles are
read only by ``SafeUnpickler``, which resolves nothing but numpy's array reconstruction and dtypes, and the
file's sha256 is checked when one is expected.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import urllib.request
import zipfile
from pathlib import Path

import numpy as np

MLP_PARAMS_URL = "https://github.com/mlc-ai/web-data/raw/main/models/fasionmnist_mlp_params.pkl"
MLP_PARAMS_SHA256 = "65e60c21536ed052ba5e1e6c94806530c7d804056822a6b39066ce6a5b02e646"
PARAMS_ENV = "TUNEFARM_MLP_PARAMS"

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


def load_pickle_params(path: str | os.PathLike, sha256: str | None = None) -> dict[str, np.ndarray]:
    """Read a pickled ``{name: ndarray}`` dict safely; verify ``sha256`` when given."""
    data = Path(path).read_bytes()
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise ValueError(f"{path}: sha256 is {got}, expected {sha256} (wrong or corrupted file)")
    try:
        obj = SafeUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError,
            MemoryError, RecursionError, UnicodeDecodeError) as e:  # what a damaged or foreign file raises
        raise ValueError(f"{path}: not a pickle of numpy arrays ({type(e).__name__}: {e})"[:300]) from None
    return _check_param_dict(obj, str(path))


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
        try:
            with np.load(path, allow_pickle=False) as z:
                return _check_param_dict({k: z[k] for k in z.files}, str(path))
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
            raise ValueError(f"{path}: not an .npz of numeric arrays ({type(e).__name__}: {e})"[:300]) from None
    return load_pickle_params(path)


def default_cache_dir() -> Path:
    return Path(os.environ.get("TUNEFARM_CACHE", Path.home() / ".cache" / "tunefarm"))


def find_mlp_params(path: str | None = None, download: bool = True) -> tuple[dict[str, np.ndarray] | None, str]:
    """The course MLP's weights and where they came from, or ``(None, reason)`` when unavailable.

    Order: an explicit path (``.pkl`` read by the safe unpickler, or ``.npz``), ``$TUNEFARM_MLP_PARAMS``,
    the local cache, then the course's URL when the network allows. Cached and downloaded files must match
    the published sha256; an explicit file may be any weights of the right names and shapes.
    """
    explicit = path or os.environ.get(PARAMS_ENV)
    if explicit:  # the user's own file: read safely; say whether it is the course's file
        params = load_params(explicit)
        same = Path(explicit).suffix != ".npz" and sha256_of(explicit) == MLP_PARAMS_SHA256
        return params, f"{explicit} ({'the course file, sha256 verified' if same else 'not the course file'})"
    cached = default_cache_dir() / "fasionmnist_mlp_params.pkl"
    if cached.exists():
        try:
            return load_pickle_params(cached, MLP_PARAMS_SHA256), str(cached)
        except ValueError:
            cached.unlink()
    if not download:
        return None, f"no parameter file given (pass --params PATH or set ${PARAMS_ENV})"
    try:
        with urllib.request.urlopen(MLP_PARAMS_URL, timeout=10) as r:
            data = r.read()
    except Exception as e:  # any network failure means: run without the real weights
        return None, f"could not download {MLP_PARAMS_URL}: {e}"
    if hashlib.sha256(data).hexdigest() != MLP_PARAMS_SHA256:
        return None, f"downloaded file from {MLP_PARAMS_URL} has the wrong sha256"
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(cached)
    return load_pickle_params(cached, MLP_PARAMS_SHA256), MLP_PARAMS_URL


def random_mlp_params(seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded stand-in weights with the course MLP's shapes (used when the real ones are unavailable)."""
    rng = np.random.default_rng(seed)
    return {
        "w0": (rng.standard_normal((128, 784)) * 0.05).astype("float32"),
        "b0": (rng.standard_normal(128) * 0.05).astype("float32"),
        "w1": (rng.standard_normal((10, 128)) * 0.1).astype("float32"),
        "b1": (rng.standard_normal(10) * 0.1).astype("float32"),
    }
