"""Target strings: parsing, canonical form (the database key), defaults, errors."""
from __future__ import annotations

import llvmlite.binding as llvm
import pytest

from host_targets import not_this_host
from tunefarm.target import Target, as_target


def test_plain_llvm_is_the_host_with_one_core():
    t = Target("llvm")
    assert t.cpu == llvm.get_host_cpu_name()
    assert t.num_cores == 1
    host_enabled = {f for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+")}
    assert set(t.features) == host_enabled
    assert Target.host() == t
    assert Target(None) == t


def test_num_cores_both_spellings():
    assert Target("llvm -num-cores=2").num_cores == 2
    assert Target("llvm --num-cores=2").num_cores == 2
    assert Target.host(2).num_cores == 2
    assert Target("llvm -num-cores=2") == Target.host(2)


def test_canonical_string_is_stable_and_round_trips():
    host = llvm.get_host_cpu_name()
    a = Target("llvm -num-cores=2")
    b = Target(f"llvm --num-cores=2 -mcpu={host}")
    assert str(a) == str(b)
    assert str(a).startswith(f"llvm -mcpu={host} -mattr=")
    assert str(a).endswith("-num-cores=2")
    assert Target(str(a)) == a
    assert Target.from_dict(a.to_dict()) == a
    assert hash(a) == hash(b)


def test_foreign_cpu_keeps_only_explicit_features():
    other = not_this_host()
    t = Target(other.replace(" -num-cores=", " --num-cores="))
    assert t.cpu == f"{llvm.get_host_cpu_name()}-other"
    assert t.features == ()
    assert str(t) == other
    t2 = Target(not_this_host("+fma,+avx2"))
    assert t2.features == ("+avx2", "+fma")
    assert "-mattr=+avx2,+fma" in str(t2)


def test_mattr_adjusts_the_host_feature_set():
    t = Target("llvm -mattr=-avx2")
    assert "+avx2" not in t.features
    assert "+sse2" in t.features
    assert t.is_host_compatible()  # a subset of the host's features still runs here


def test_tvm_dict_form():
    other = Target(not_this_host()).cpu
    t = Target({"kind": "llvm", "num-cores": 2, "mcpu": other})
    assert t.cpu == other and t.num_cores == 2 and t.features == ()
    assert Target({"kind": "llvm", "mcpu": llvm.get_host_cpu_name()}) == Target("llvm")
    assert as_target({"kind": "llvm"}) == Target("llvm")


@pytest.mark.parametrize("text,fragment", [
    ("llvm -foo=1", "-foo=1"),
    ("llvm -opt-level=3", "-opt-level=3"),
    ("cuda", "cuda"),
    ("llvm -num-cores=0", "num-cores"),
    ("llvm -num-cores=two", "num-cores"),
    ("llvm -mattr=avx2", "avx2"),
    ("llvm mcpu=some-cpu", "mcpu=some-cpu"),
    ("llvm -num-cores", "-num-cores"),
    ("", "empty"),
])
def test_bad_targets_raise_value_error_naming_the_problem(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        Target(text)


def test_unknown_dict_option():
    with pytest.raises(ValueError, match="opt-level"):
        Target({"kind": "llvm", "opt-level": 3})


def test_host_compatibility():
    assert Target("llvm").is_host_compatible()
    assert not Target(not_this_host()).is_host_compatible()
