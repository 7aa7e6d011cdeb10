"""Loading weights: numpy dicts, .npz, and the course's pickle through an allowlisting unpickler."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from tunefarm.graph import params as P


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_the_course_weights_ship_with_tunefarm_and_are_checked(mlp_params, tmp_path, monkeypatch):
    assert {k: v.shape for k, v in mlp_params.items()} == {"w0": (128, 784), "b0": (128,), "w1": (10, 128),
                                                           "b1": (10,)}
    assert all(v.dtype == np.float32 and v.flags.c_contiguous for v in mlp_params.values())
    assert P.sha256_of(P.COURSE_NPZ) == P.COURSE_NPZ_SHA256
    damaged = tmp_path / "damaged.npz"
    data = bytearray(P.COURSE_NPZ.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(P, "COURSE_NPZ", damaged)
    with pytest.raises(ValueError, match="sha256 is .* expected " + P.COURSE_NPZ_SHA256):
        P.course_mlp_params()


def test_pickled_weights_load_through_the_allowlist_with_their_checksum(tmp_path, mlp_params):
    path = tmp_path / "w.pkl"
    path.write_bytes(pickle.dumps(dict(mlp_params)))
    loaded = P.load_pickle_params(path, P.sha256_of(path))
    assert all(np.array_equal(loaded[k], mlp_params[k]) for k in mlp_params)
    with pytest.raises(ValueError, match="sha256 is .* expected 0000"):
        P.load_pickle_params(path, "0" * 64)


def test_unpickler_refuses_code(tmp_path):
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(pickle.dumps({"w": _Evil()}))
    with pytest.raises(P.UnsafePickleError, match="refusing to load posix.system|refusing to load os.system"):
        P.load_pickle_params(evil)
    builtin = tmp_path / "builtin.pkl"
    builtin.write_bytes(pickle.dumps({"w": np.zeros(3, np.float32), "f": eval}))  # noqa: S307 - only pickled
    with pytest.raises(P.UnsafePickleError, match="builtins.eval"):
        P.load_pickle_params(builtin)
    objs = tmp_path / "objs.pkl"
    objs.write_bytes(pickle.dumps({"w": np.array([1, "a"], dtype=object)}))
    with pytest.raises((P.UnsafePickleError, ValueError)):
        P.load_pickle_params(objs)
    not_dict = tmp_path / "list.pkl"
    not_dict.write_bytes(pickle.dumps([np.zeros(2)]))
    with pytest.raises(ValueError, match="expected a dict of arrays"):
        P.load_pickle_params(not_dict)


def test_every_protocol_numpy_writes_loads_and_code_is_refused_in_each(tmp_path):
    """Protocols 0-2 write an array's bytes through ``_codecs.encode`` and 5 through ``_frombuffer``; only 3
    and 4 used to load. Each loads now, and each still refuses anything but numpy's arrays."""
    arrays = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "f": np.asfortranarray(np.eye(3)),
              "i": np.array([-1, 0, 255], dtype=np.int16), "v": np.arange(20.0)[::3], "z": np.array(2.5),
              "b": np.array([0, 200, 17], dtype=np.uint8)}  # bytes over 127 exercise the latin1 text form
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        path = tmp_path / f"p{protocol}.pkl"
        path.write_bytes(pickle.dumps(arrays, protocol=protocol))
        loaded = P.load_pickle_params(path)
        assert sorted(loaded) == sorted(arrays), protocol
        for k, a in arrays.items():
            assert loaded[k].dtype == a.dtype and loaded[k].shape == a.shape, (protocol, k)
            np.testing.assert_array_equal(loaded[k], a)
        path.write_bytes(pickle.dumps({"w": _Evil()}, protocol=protocol))
        with pytest.raises(P.UnsafePickleError, match="system"):
            P.load_pickle_params(path)
    path = tmp_path / "codec.pkl"  # _codecs.encode with another codec than the latin1 numpy uses
    path.write_bytes(b"c_codecs\nencode\n(Vabc\nVrot13\ntR.")
    with pytest.raises(P.UnsafePickleError, match="_codecs.encode"):
        P.load_pickle_params(path)


def test_npz_dict_and_roundtrip(tmp_path, mlp_params):
    path = tmp_path / "w.npz"
    np.savez(path, **mlp_params)
    loaded = P.load_params(path)
    assert sorted(loaded) == sorted(mlp_params)
    for k in mlp_params:
        np.testing.assert_array_equal(loaded[k], mlp_params[k])
    assert P.load_params({"a": [1.0, 2.0]})["a"].shape == (2,)
    with pytest.raises(FileNotFoundError):
        P.load_params(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="not a named numpy array"):
        P.load_params({1: np.zeros(1)})


def test_find_mlp_params_defaults_to_the_course_weights_and_names_a_users_file(tmp_path, mlp_params):
    got, source = P.find_mlp_params()
    assert all(np.array_equal(got[k], mlp_params[k]) for k in mlp_params)
    assert "the course's FashionMNIST weights" in source and "sha256 verified" in source
    same = tmp_path / "same.pkl"
    same.write_bytes(pickle.dumps(dict(mlp_params)))
    assert P.find_mlp_params(same)[1] == f"{same} (the course weights)"
    own = tmp_path / "own.npz"
    np.savez(own, **{k: v * 2 for k, v in mlp_params.items()})
    got, source = P.find_mlp_params(str(own))
    assert source == f"{own} (not the course weights)" and np.array_equal(got["w1"], mlp_params["w1"] * 2)
    with pytest.raises(FileNotFoundError):
        P.find_mlp_params(tmp_path / "missing.npz")


def test_random_weights_are_seeded():
    a, b = P.random_mlp_params(3), P.random_mlp_params(3)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["w0"], P.random_mlp_params(4)["w0"])
