"""``tvm.testing``: ``assert_allclose`` (numpy's, which takes NDArrays as they are: they are numpy arrays),
``parameter`` (a parametrized pytest fixture, named by the module variable it is assigned to) and ``main``."""
import sys

import numpy as np


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


def parameter(*values, ids=None, by_dict=None):
    """``x = tvm.testing.parameter(1, 2)`` or ``parameter(by_dict={"id": value})``: tests taking ``x`` run once
    per value."""
    import pytest  # only tests call this; the facade itself does not need pytest

    if by_dict is not None:
        if values or ids is not None:
            raise TypeError("parameter(): pass values or by_dict, not both")
        ids, values = list(by_dict), list(by_dict.values())
    return pytest.fixture(params=list(values), ids=ids)(lambda request: request.param)


def main() -> None:
    """Run the calling test file with pytest (``if __name__ == "__main__": tvm.testing.main()``)."""
    import pytest  # only a test file run as a script calls this

    sys.exit(pytest.main([sys.argv[0], *sys.argv[1:]]))


__all__ = ["assert_allclose", "main", "parameter"]
