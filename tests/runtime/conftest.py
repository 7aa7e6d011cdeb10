"""Fixtures of the runtime tests: a built module several test files call."""
from __future__ import annotations

import pytest

import runtime_programs as RP
from tunefarm.runtime import build


@pytest.fixture(scope="module")
def mm_mod():
    """The symbolic-size matmul ``C[n, m] = A[n, 8] @ B[8, m]``, built (one per test module)."""
    return build(RP.matmul_sym(8))
