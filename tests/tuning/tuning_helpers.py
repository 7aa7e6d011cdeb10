"""What the tuning-job tests share: numpy checks of compiled programs and a flat space."""
from __future__ import annotations

import numpy as np

from tunefarm.farm.check import make_arrays, output_params
from tunefarm.ir.structural import workload_key
from tunefarm.reference import interpret
from tunefarm.schedule.tree import block_names


def check_against_reference(mod, func) -> None:
    """``mod["main"]`` computes what the unscheduled ``func`` computes (the numpy interpreter), on the farm's
    deterministic inputs."""
    arrays = make_arrays(func, workload_key(func))
    expected = [a.copy() for a in arrays]
    interpret(func, *expected)
    mod["main"](*arrays)
    for i in output_params(func):
        np.testing.assert_allclose(arrays[i], expected[i], rtol=1e-4, atol=1e-5)


def flat_space(sch):
    """64 programs that differ only in an annotation their code never reads: nothing to gain but noise."""
    block = sch.get_block(block_names(sch.mod["main"])[-1])
    sch.annotate(block, "flat_tag", sch.get(sch.sample_categorical(list(range(64)), [1 / 64] * 64)))
