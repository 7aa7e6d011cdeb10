"""Targets built from the machine the tests run on. A test that needs "this host" or "a target that is not this
host" takes it from here and never names a CPU, so it means the same on every x86-64 machine."""
from __future__ import annotations

from tunefarm.target import host_cpu_features, host_cpu_name


def this_host(num_cores: int = 1) -> str:
    """This machine as its label spells it: it parses to the host's CPU with all of the host's features."""
    return f"llvm -mcpu={host_cpu_name()} -num-cores={num_cores}"


def not_this_host(features: str = "", num_cores: int = 1, tag: str = "other") -> str:
    """A target that is no machine's: its CPU name is this host's with a suffix (so never the host's and no
    real CPU), with exactly the features given (``+a,+b``)."""
    mattr = f" -mattr={features}" if features else ""
    return f"llvm -mcpu={host_cpu_name()}-{tag}{mattr} -num-cores={num_cores}"


def a_feature_this_host_lacks() -> str:
    """An x86 feature this machine does not have (no CPU has all of these: they belong to different vendors'
    generations), for code that must be refused here."""
    return next(f for f in ("tbm", "xop", "amx-tile", "avx512fp16") if "+" + f not in host_cpu_features())
