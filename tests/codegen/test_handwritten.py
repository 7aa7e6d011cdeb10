"""The hand-written matmul schedules (search_spaces/handwritten.py): correct, and lowered to the intended
microkernel shape (register tile of 4 x 16 floats, packed B panel of k x 16 floats)."""
from __future__ import annotations

import numpy as np
import pytest

from codegen_programs import matmul_naive
from search_spaces.handwritten import (matmul_128_handwritten, matmul_512_handwritten,
                                       matmul_512_handwritten_parallel, tiled_matmul)
from tunefarm.codegen import lower
from tunefarm.ir import stmt as S
from tunefarm.runtime import build
from tunefarm.schedule import Schedule
from tunefarm.target import Target


def _matmul(n):
    f, _ = matmul_naive(n, n, n)
    return f.with_name("main")


def _allocs(stmt, out=None):
    out = [] if out is None else out
    if isinstance(stmt, S.Allocate):
        out.append(stmt.buffer)
    for child in ((stmt.seq if isinstance(stmt, S.SeqStmt) else ()) +
                  ((stmt.body,) if isinstance(stmt, (S.For, S.Allocate)) else ())):
        _allocs(child, out)
    return out


@pytest.mark.parametrize("n,schedule,cores", [(128, matmul_128_handwritten, 1), (512, matmul_512_handwritten, 1),
                                              (512, matmul_512_handwritten_parallel, 2)])
def test_handwritten_schedules_are_correct(n, schedule, cores):
    sch = schedule(Schedule(_matmul(n)))
    f = sch.mod["main"]
    sizes = sorted(b.shape[0].value for b in _allocs(lower(f).body))
    assert sizes == [64, n * 16]  # register tile, packed B panel
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    c = np.full((n, n), np.nan, "float32")
    build(f, Target.host(cores))(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("ti,tj,pack,par", [(2, 8, False, False), (8, 32, True, True), (1, 16, True, False)])
def test_tiled_family(ti, tj, pack, par):
    sch = tiled_matmul(Schedule(_matmul(64)), ti, tj, pack_b=pack, parallel=par)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 64)).astype("float32")
    b = rng.standard_normal((64, 64)).astype("float32")
    c = np.zeros((64, 64), "float32")
    build(sch.mod["main"], Target.host(2))(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
