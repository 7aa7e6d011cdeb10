"""The compilation target: which CPU the code is generated for and how many cores it may use.

Written the way TVM spells targets (``"llvm"``, ``"llvm -num-cores=2"``, ``"llvm -mcpu=znver4 --num-cores=1"``,
``"llvm -mattr=+avx2,+fma"``). ``str(target)`` is canonical (cpu, enabled features, core count) because tuning
records are stored and queried by it: two spellings of the same target give the same string.

Defaults and why:
- the CPU defaults to the host (``llvmlite.binding.get_host_cpu_name()``) with the host's feature set, so the
  code uses AVX2/FMA (and AVX-512 where present) without the user naming anything;
- ``num_cores`` defaults to 1: tuning measures one kernel per core (workers run side by side), and a parallel
  loop then runs serially with no thread-team cost. Give ``-num-cores=N`` (or ``Target.host(N)``) to build
  code whose ``parallel`` loops run on a team of N native threads.
"""
from __future__ import annotations

import functools
import os
import re
import sys
import tempfile

_KNOWN_OPTIONS = ("mcpu", "mattr", "num-cores")
_FEATURE_RE = re.compile(r"^[+-][A-Za-z0-9_.\-]+$")


@functools.lru_cache(maxsize=1)
def host_cpu_name() -> str:
    import llvmlite.binding as llvm

    return llvm.get_host_cpu_name()


@functools.lru_cache(maxsize=1)
def host_cpu_features() -> tuple[str, ...]:
    """The host's enabled features (``+avx2``, ...), sorted; disabled ones are implied by their absence."""
    import llvmlite.binding as llvm

    flat = llvm.get_host_cpu_features().flatten()
    return tuple(sorted(f for f in flat.split(",") if f.startswith("+")))


def _parse_features(text: str) -> tuple[str, ...]:
    feats = []
    for f in (x.strip() for x in text.split(",")):
        if not f:
            continue
        if not _FEATURE_RE.match(f):
            raise ValueError(f"target feature {f!r} must look like '+name' or '-name' (as in -mattr=+avx2,+fma)")
        feats.append(f)
    return tuple(feats)


class Target:
    """An LLVM CPU target: ``cpu`` name, explicit ``features`` (``+x``/``-x``) and ``num_cores``.

    ``Target("llvm -mcpu=znver3 -num-cores=2")``; ``Target(dict)`` takes ``to_dict()``'s output or TVM's
    dict form (``{"kind": "llvm", "mcpu": ..., "mattr": [...], "num-cores": n}``); ``Target(None)`` is the host.
    """

    __slots__ = ("cpu", "features", "num_cores")

    def __init__(self, spec: "str | dict | Target | None" = None):
        if isinstance(spec, Target):
            self.cpu, self.features, self.num_cores = spec.cpu, spec.features, spec.num_cores
            return
        if spec is None:
            spec = "llvm"
        if isinstance(spec, dict):
            opts = self._options_from_dict(spec)
        elif isinstance(spec, str):
            opts = self._options_from_string(spec)
        else:
            raise TypeError(f"a target is a string like 'llvm -num-cores=2' or a dict, got {type(spec).__name__}")
        self._init_from_options(opts)

    # ---------------------------------------------------------------- parsing
    @staticmethod
    def _options_from_string(text: str) -> dict:
        tokens = text.split()
        if not tokens:
            raise ValueError("empty target string; use 'llvm'")
        if tokens[0] != "llvm":
            raise ValueError(f"unsupported target kind {tokens[0]!r}: tunefarm generates CPU code, use 'llvm ...'")
        opts: dict = {}
        for tok in tokens[1:]:
            if not tok.startswith("-"):
                raise ValueError(f"target option {tok!r} must start with '-' (e.g. -num-cores=2)")
            key, eq, value = tok.lstrip("-").partition("=")
            if key not in _KNOWN_OPTIONS:
                raise ValueError(f"unknown target option {tok!r}; known options: "
                                 + ", ".join("-" + k for k in _KNOWN_OPTIONS))
            if not eq or not value:
                raise ValueError(f"target option {tok!r} needs a value (e.g. -{key}=...)")
            if key in opts:
                raise ValueError(f"target option -{key} given twice in {text!r}")
            opts[key] = value
        return opts

    @staticmethod
    def _options_from_dict(d: dict) -> dict:
        opts: dict = {}
        for key, value in d.items():
            k = key.replace("_", "-")
            if k == "kind":
                if value != "llvm":
                    raise ValueError(f"unsupported target kind {value!r}: use 'llvm'")
                continue
            if k == "cpu":
                k = "mcpu"
            if k == "features":
                k = "mattr"
            if k not in _KNOWN_OPTIONS:
                raise ValueError(f"unknown target option {key!r}; known options: {', '.join(_KNOWN_OPTIONS)}")
            if k == "mattr" and isinstance(value, (list, tuple)):
                value = ",".join(value)
            opts[k] = str(value)
        return opts

    def _init_from_options(self, opts: dict) -> None:
        cores_text = opts.get("num-cores", "1")
        try:
            cores = int(cores_text)
        except ValueError:
            raise ValueError(f"target option -num-cores must be a positive integer, got {cores_text!r}") from None
        if cores < 1:
            raise ValueError(f"target option -num-cores must be a positive integer, got {cores}")
        cpu = opts.get("mcpu", "").strip()
        if not cpu:
            cpu = host_cpu_name()
        features = _parse_features(opts.get("mattr", ""))
        if cpu == host_cpu_name():
            # the host: its full enabled feature set, adjusted by explicit +x/-x
            feats = set(host_cpu_features())
            for f in features:
                feats.discard("+" + f[1:])
                if f[0] == "+":
                    feats.add(f)
            features = tuple(sorted(feats))
        else:
            features = tuple(sorted(set(features)))
        self.cpu = cpu
        self.features = features
        self.num_cores = cores

    # ---------------------------------------------------------------- constructors / views
    @staticmethod
    def host(num_cores: int | None = None) -> "Target":
        """The machine we run on; ``num_cores`` defaults to 1 (see the module docstring)."""
        return Target("llvm" if num_cores is None else f"llvm -num-cores={int(num_cores)}")

    def with_num_cores(self, num_cores: int) -> "Target":
        d = self.to_dict()
        d["num-cores"] = int(num_cores)
        return Target(d)

    @property
    def kind(self) -> str:
        return "llvm"

    @property
    def feature_string(self) -> str:
        """The LLVM ``features`` string for a TargetMachine."""
        return ",".join(self.features)

    def has_feature(self, name: str) -> bool:
        return ("+" + name.lstrip("+")) in self.features

    @property
    def vector_bits(self) -> int:
        """Widest native float vector register (used to size generated microkernels)."""
        if self.has_feature("avx512f"):
            return 512
        if self.has_feature("avx") or self.has_feature("avx2"):
            return 256
        return 128

    def is_host_compatible(self) -> bool:
        """Whether code built for this target can run on this machine (same CPU, no extra features)."""
        if self.cpu not in (host_cpu_name(), "generic", "x86-64"):
            return False
        host = set(host_cpu_features())
        return all(f in host for f in self.features if f.startswith("+"))

    def to_dict(self) -> dict:
        return {"kind": "llvm", "mcpu": self.cpu, "mattr": list(self.features), "num-cores": self.num_cores}

    @staticmethod
    def from_dict(d: dict) -> "Target":
        return Target(d)

    def __str__(self) -> str:
        parts = ["llvm", f"-mcpu={self.cpu}"]
        if self.features:
            parts.append("-mattr=" + ",".join(self.features))
        parts.append(f"-num-cores={self.num_cores}")
        return " ".join(parts)

    def label(self) -> str:
        """A short form for tables and logs: the full string lists every CPU feature (500+ characters).

        On a CPU of this machine's kind with this machine's features it is ``llvm -mcpu=NAME -num-cores=N``,
        which parses back to this target here; otherwise a long feature list is replaced by its count
        (``-mattr=<28 features>``), and only ``str(target)`` names the target exactly.
        """
        if self.cpu == host_cpu_name() and self.features == host_cpu_features():
            return f"llvm -mcpu={self.cpu} -num-cores={self.num_cores}"
        if len(",".join(self.features)) <= 32:
            return str(self)
        return f"llvm -mcpu={self.cpu} -mattr=<{len(self.features)} features> -num-cores={self.num_cores}"

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = Target(other)
            except ValueError:
                return False
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def target_label(text: str) -> str:
    """``Target(text).label()``, or ``text`` itself when it does not parse (a database from elsewhere)."""
    try:
        return Target(text).label()
    except (TypeError, ValueError):
        return text


def matching_target(text: str, stored) -> str:
    """The string among ``stored`` that names the same target as ``text`` (``text`` itself if none does), so
    that a label such as ``llvm -num-cores=1`` finds this machine's full target string in a database."""
    stored = list(stored)
    if text in stored:
        return text
    try:
        wanted = Target(text)
    except (TypeError, ValueError):
        return text
    for s in stored:
        try:
            if Target(s) == wanted:
                return s
        except (TypeError, ValueError):
            continue
    return text


def as_target(target) -> Target:
    """Accept a Target, a string, a dict or None (host)."""
    return target if isinstance(target, Target) else Target(target)


@functools.lru_cache(maxsize=64)
def llvm_knows_cpu(cpu: str) -> bool:
    """Whether LLVM knows ``cpu`` for this process's triple. llvmlite lists no CPUs: LLVM says so on stderr
    ("is not a recognized processor") when a target machine is made for one it does not know, and then builds
    generic code; so the message is read from fd 2 while one is made."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    target = llvm.Target.from_default_triple()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        os.dup2(err.fileno(), 2)
        try:
            target.create_target_machine(cpu=cpu)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        said = err.read().decode("utf-8", "replace")
    return "not a recognized processor" not in said


def check_known_cpu(target: Target) -> Target:
    """Refuse a target whose CPU LLVM does not know (its code would be built for no CPU at all)."""
    if target.cpu != host_cpu_name() and not llvm_knows_cpu(target.cpu):
        import llvmlite.binding as llvm

        raise ValueError(f"unknown CPU {target.cpu!r} in target {str(target)!r}: LLVM does not know it for "
                         f"{llvm.get_default_triple()} (this host's CPU is {host_cpu_name()!r})")
    return target
