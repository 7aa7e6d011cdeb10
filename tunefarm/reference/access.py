"""Bounds-checked buffer loads and stores as closures.

numpy silently wraps negative indices and an illegal schedule may index one past the end of a tile; the
reference executor must instead stop with an ``IndexError`` that names the buffer, since catching such
programs is its job as a test oracle. The common ranks (0 to 4) get hand-specialised closures because
these run once per scalar access and a generic loop over dimensions would dominate the run time.
"""
from __future__ import annotations

from operator import itemgetter


def out_of_bounds(name: str, where: str, array, indices) -> IndexError:
    idx = ", ".join(str(int(i)) for i in indices)
    shape = ", ".join(str(s) for s in array.shape)
    return IndexError(f"out-of-bounds access to buffer {name!r}{where}: index [{idx}] for shape ({shape})")


def make_load(bs: int, fns: tuple, name: str, where: str):
    """Closure ``env -> value`` reading buffer slot ``bs`` at the indices computed by ``fns``."""
    n = len(fns)
    if n == 0:
        def load0(env):
            return env[bs][()]
        return load0
    if n == 1:
        (f0,) = fns

        def load1(env):
            a = env[bs]
            i = f0(env)
            if 0 <= i < a.shape[0]:
                return a[i]
            raise out_of_bounds(name, where, a, (i,))
        return load1
    if n == 2:
        f0, f1 = fns

        def load2(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            s0, s1 = a.shape
            if 0 <= i < s0 and 0 <= j < s1:
                return a[i, j]
            raise out_of_bounds(name, where, a, (i, j))
        return load2
    if n == 3:
        f0, f1, f2 = fns

        def load3(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            k = f2(env)
            s0, s1, s2 = a.shape
            if 0 <= i < s0 and 0 <= j < s1 and 0 <= k < s2:
                return a[i, j, k]
            raise out_of_bounds(name, where, a, (i, j, k))
        return load3
    if n == 4:
        f0, f1, f2, f3 = fns

        def load4(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            k = f2(env)
            m = f3(env)
            s0, s1, s2, s3 = a.shape
            if 0 <= i < s0 and 0 <= j < s1 and 0 <= k < s2 and 0 <= m < s3:
                return a[i, j, k, m]
            raise out_of_bounds(name, where, a, (i, j, k, m))
        return load4

    def load_n(env):
        a = env[bs]
        idx = tuple([f(env) for f in fns])
        for x, s in zip(idx, a.shape):
            if not 0 <= x < s:
                raise out_of_bounds(name, where, a, idx)
        return a[idx]
    return load_n


def make_store(bs: int, fns: tuple, fv, name: str, where: str):
    """Closure ``env -> None`` writing ``fv(env)`` to buffer slot ``bs`` (numpy casts to the buffer dtype)."""
    n = len(fns)
    if n == 0:
        def store0(env):
            env[bs][()] = fv(env)
        return store0
    if n == 1:
        (f0,) = fns

        def store1(env):
            a = env[bs]
            i = f0(env)
            if 0 <= i < a.shape[0]:
                a[i] = fv(env)
            else:
                raise out_of_bounds(name, where, a, (i,))
        return store1
    if n == 2:
        f0, f1 = fns

        def store2(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            s0, s1 = a.shape
            if 0 <= i < s0 and 0 <= j < s1:
                a[i, j] = fv(env)
            else:
                raise out_of_bounds(name, where, a, (i, j))
        return store2
    if n == 3:
        f0, f1, f2 = fns

        def store3(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            k = f2(env)
            s0, s1, s2 = a.shape
            if 0 <= i < s0 and 0 <= j < s1 and 0 <= k < s2:
                a[i, j, k] = fv(env)
            else:
                raise out_of_bounds(name, where, a, (i, j, k))
        return store3
    if n == 4:
        f0, f1, f2, f3 = fns

        def store4(env):
            a = env[bs]
            i = f0(env)
            j = f1(env)
            k = f2(env)
            m = f3(env)
            s0, s1, s2, s3 = a.shape
            if 0 <= i < s0 and 0 <= j < s1 and 0 <= k < s2 and 0 <= m < s3:
                a[i, j, k, m] = fv(env)
            else:
                raise out_of_bounds(name, where, a, (i, j, k, m))
        return store4

    def store_n(env):
        a = env[bs]
        idx = tuple([f(env) for f in fns])
        for x, s in zip(idx, a.shape):
            if not 0 <= x < s:
                raise out_of_bounds(name, where, a, idx)
        a[idx] = fv(env)
    return store_n


# ------------------------------------------------------------------------------------------------------
# Accesses whose indices the compiler proved in bounds (constant loop ranges inside constant shapes) skip
# the checks. When every index is a plain variable, one C-level ``itemgetter`` builds the index tuple.
# ------------------------------------------------------------------------------------------------------
def make_safe_load(bs: int, fns: tuple, var_slots: tuple | None):
    n = len(fns)
    if n == 0:
        return lambda env: env[bs][()]
    if var_slots is not None:
        g = itemgetter(*var_slots)
        return lambda env: env[bs][g(env)]
    if n == 1:
        (f0,) = fns
        return lambda env: env[bs][f0(env)]
    if n == 2:
        f0, f1 = fns
        return lambda env: env[bs][f0(env), f1(env)]
    if n == 3:
        f0, f1, f2 = fns
        return lambda env: env[bs][f0(env), f1(env), f2(env)]
    if n == 4:
        f0, f1, f2, f3 = fns
        return lambda env: env[bs][f0(env), f1(env), f2(env), f3(env)]
    return lambda env: env[bs][tuple([f(env) for f in fns])]


def make_safe_store(bs: int, fns: tuple, var_slots: tuple | None, fv):
    n = len(fns)
    if n == 0:
        def store0(env):
            env[bs][()] = fv(env)
        return store0
    if var_slots is not None:
        g = itemgetter(*var_slots)

        def store_vars(env):
            env[bs][g(env)] = fv(env)
        return store_vars
    if n == 1:
        (f0,) = fns

        def store1(env):
            env[bs][f0(env)] = fv(env)
        return store1
    if n == 2:
        f0, f1 = fns

        def store2(env):
            env[bs][f0(env), f1(env)] = fv(env)
        return store2

    if n == 3:
        f0, f1, f2 = fns

        def store3(env):
            env[bs][f0(env), f1(env), f2(env)] = fv(env)
        return store3

    def store_n(env):
        env[bs][tuple([f(env) for f in fns])] = fv(env)
    return store_n
