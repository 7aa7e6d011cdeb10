"""``tvm.testing.assert_allclose``: numpy's, which takes NDArrays as they are (they are numpy arrays)."""
import numpy as np


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


__all__ = ["assert_allclose"]
