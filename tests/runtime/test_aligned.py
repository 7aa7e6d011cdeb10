import numpy as np
import pytest

from tunefarm.runtime import aligned


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int64"])
@pytest.mark.parametrize("shape", [(1,), (7, 3), (128, 128), (0, 4)])
def test_empty_is_aligned_contiguous_and_sized(shape, dtype):
    for _ in range(8):  # several allocations: malloc hands out different offsets
        a = aligned.empty(shape, dtype)
        assert a.shape == shape and a.dtype == np.dtype(dtype)
        assert a.flags.c_contiguous and a.flags.writeable
        if a.size:
            assert a.ctypes.data % 64 == 0


def test_copy_keeps_values_and_is_independent():
    src = np.random.default_rng(0).standard_normal((33, 17)).astype("float32")
    c = aligned.copy(src)
    assert aligned.is_aligned(c)
    np.testing.assert_array_equal(c, src)
    c[0, 0] += 1
    assert c[0, 0] != src[0, 0]


def test_copy_of_a_strided_view_is_contiguous():
    src = np.arange(64, dtype="float32").reshape(8, 8).T
    c = aligned.copy(src, alignment=32)
    assert c.flags.c_contiguous and c.ctypes.data % 32 == 0
    np.testing.assert_array_equal(c, src)


@pytest.mark.parametrize("bad", [0, -64, 48])
def test_bad_alignment_is_refused(bad):
    with pytest.raises(ValueError, match="power of two"):
        aligned.empty((4,), "float32", bad)
