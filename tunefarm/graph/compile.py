"""``compile_model``: a whole model from the database's best schedule of each kernel.

Every kernel takes its best trace for this target (kernels never tuned get ``default_schedule``); constant
weights are then stored in the order the scheduled kernels read them (``layout``). A model whose calls are
all kernels is composed into one PrimFunc — kernels in order, intermediates planned so buffers of equal
shape whose lifetimes do not overlap share memory — and built into one LLVM module with a single entry
point; the executable calls it through a native gate (``fastcall``), so ``exe(x)`` enters native code once.
Models that call registered Python functions become graph executables (kernels and functions in turn).
"""
from __future__ import annotations

import logging

from .. import runtime  # its names load on first use (the compiler with runtime.build)
from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.function import PrimFunc
from ..ir.graph_expr import Call, Constant, GraphVar
from ..ir.graph_function import Binding, DataflowBlock, Function
from ..ir.module import IRModule
from ..target import as_target
from .builder import unique_name
from .compose import compose
from .executable import Executable
from .pipeline import entry_name, prepare

log = logging.getLogger("tunefarm.compile")


def schedule_kernel(func: PrimFunc, db, target, versions=None) -> tuple[PrimFunc, str]:
    """The kernel with its best stored trace applied (or the default schedule) and where it came from;
    ``versions``: which code generator versions' records count (``database.code_versions``)."""
    # on use: see the package docstring
    from ..database import best_schedule
    from ..schedule import ScheduleError
    from ..schedule.default_schedule import default_schedule

    if db is not None:
        try:
            best = best_schedule(db, func, target, versions)
        except ScheduleError as e:  # a stored trace that no longer applies must not break compile
            log.warning("best trace of %s no longer applies (%s); using the default schedule", func.name, e)
        else:
            if best is not None:
                return best.func.with_name(func.name), "tuned"
            others = _tuned_targets(db, func)
            if others:
                log.warning("%s was tuned for %s, not for %s: using the default schedule (compile with the "
                            "target you tuned for)", func.name, ", ".join(others), target)
    return default_schedule(func), "default"


def _tuned_targets(db, func: PrimFunc) -> list[str]:
    try:
        return db.targets(func)
    except LookupError:  # never tuned (UnknownWorkloadError)
        return []


def _buffer(name: str, value) -> Buffer:
    shape = tuple(E.const(d, "int64") if isinstance(d, int) else d for d in value.type.shape)
    return Buffer(name, shape, value.type.dtype)


def _key(value):
    return (tuple(d if isinstance(d, int) else id(d) for d in value.type.shape), value.type.dtype)


def _spec_shape(shape):
    return [d if isinstance(d, int) else {"sym": d.name} for d in shape]


def pack_constant_weights(fn: Function, kernels: dict[str, PrimFunc]) -> tuple[Function, dict, int]:
    """Store constant weights in the order their scheduled kernels read them (``codegen.layout.rewrite_layout``).

    A kernel parameter is rewritten only when every call passes a constant there; each constant is packed
    once per (kernel, parameter). Returns the function with packed constants, the rewritten kernels and how
    many parameters were packed.
    """
    from ..codegen.layout import rewrite_layout  # on use: see the package docstring

    calls: dict = {}
    for c in fn.calls():
        if c.attrs.get("func") in kernels:
            calls.setdefault(c.attrs["func"], []).append(c)
    kernels = dict(kernels)
    packers: dict = {}  # (kernel, index) -> pack
    for name, cs in calls.items():
        n_in = len(cs[0].args)
        for idx in range(n_in):
            if not all(isinstance(c.args[idx], Constant) for c in cs):
                continue
            r = rewrite_layout(kernels[name], idx)
            if r is not None:
                kernels[name], packers[(name, idx)] = r
    if not packers:
        return fn, kernels, 0
    packed: dict = {}

    def arg(call, idx, a):
        key = (call.attrs["func"], idx)
        if key not in packers:
            return a
        if (id(a), key) not in packed:
            packed[(id(a), key)] = Constant(packers[key](a.data), (a.name or "w") + "_packed")
        return packed[(id(a), key)]

    blocks = []
    for blk in fn.blocks:
        bindings = []
        for b in blk.bindings:
            v = b.value
            if isinstance(v, Call) and v.attrs.get("func") in kernels:
                v = Call(v.op, [arg(v, i, a) for i, a in enumerate(v.args)], v.attrs, v.type)
            bindings.append(Binding(b.var, v))
        blocks.append(DataflowBlock(bindings, blk.outputs))
    return fn.replace(blocks=tuple(blocks)), kernels, len(packers)


def compile_model(mod: IRModule, params: dict | None = None, db=None, target=None,
                  pack_weights: bool = True, allow_other_versions: bool = False) -> Executable:
    """Compile a graph module (with ``params`` bound as constants) into an Executable.

    Every kernel gets its best trace for ``target`` in the TraceDatabase ``db`` (or the default schedule),
    among the records of this code generator unless ``allow_other_versions`` (skipped ones are counted in one
    notice); with ``pack_weights`` constant weights are stored in the order the scheduled kernels read them.
    """
    from ..database.code_versions import VersionFilter  # on use: see the package docstring
    from ..runtime import build  # on use: see the package docstring

    versions = VersionFilter(allow_other_versions)

    target = as_target(target)
    entry = entry_name(mod)
    mod = prepare(mod, params, entry)
    fn: Function = mod[entry]
    scheduled: dict[str, PrimFunc] = {}
    sources: dict[str, str] = {}
    for call in fn.calls():
        name = call.attrs.get("func")
        callee = mod.functions.get(name)
        if isinstance(callee, PrimFunc) and name not in scheduled:
            scheduled[name], sources[name] = schedule_kernel(callee, db, target, versions)
    versions.notice()
    n_packed = 0
    if pack_weights:
        fn, scheduled, n_packed = pack_constant_weights(fn, scheduled)
    log.info("kernels: %s; %d weight(s) stored in kernel order", ", ".join(f"{k} ({v})" for k, v in
                                                                         sources.items()), n_packed)
    inputs = [{"name": p.name, "shape": _spec_shape(p.type.shape), "dtype": p.type.dtype} for p in fn.params]
    output = {"shape": _spec_shape(fn.ret.type.shape), "dtype": fn.ret.type.dtype}
    all_kernels = all(c.op == "call_tir" or c.attrs.get("func") in scheduled for c in fn.calls())
    if all_kernels and _computed_by_kernel(fn):
        func, constants, order = compose_model(fn, scheduled)
        module = runtime.build(func, target)
        meta = {"kind": "native", "entry": entry, "entry_symbol": func.name, "inputs": inputs, "output": output,
                "param_order": order, "kernels": sources, "packed_weights": n_packed, "target": str(target)}
        return Executable(module, meta, constants)
    return _graph_executable(fn, scheduled, sources, inputs, output, target, entry)


def _resolve_alias(var, aliases: dict):
    while var in aliases:
        var = aliases[var]
    return var


def _computed_by_kernel(fn: Function) -> bool:
    """Whether the returned value is produced by a call (not an input, a constant or nothing)."""
    aliases = {b.var: b.value for b in fn.bindings() if isinstance(b.value, GraphVar)}
    ret = _resolve_alias(fn.ret, aliases) if isinstance(fn.ret, GraphVar) else fn.ret
    return isinstance(ret, GraphVar) and any(b.var is ret and isinstance(b.value, Call) for b in fn.bindings())


def compose_model(fn: Function, kernels: dict[str, PrimFunc]) -> tuple[PrimFunc, list, list]:
    """The whole entry function as one PrimFunc ``(inputs..., constants..., output)``.

    Returns the function, the constant arrays in parameter order and the parameter order as
    ``[["input", i] | ["const", j] | ["output", 0], ...]``. Intermediates are planned: a buffer whose last
    reader has run is reused by a later value of the same shape and dtype (never by the call that reads it).
    """
    bindings = list(fn.bindings())
    aliases = {b.var: b.value for b in bindings if isinstance(b.value, GraphVar)}
    ret = _resolve_alias(fn.ret, aliases)
    bufs: dict = {}
    params: list[Buffer] = []
    order: list = []
    names: set = set()

    def fresh(base: str) -> str:  # buffer names stay unique in the composed function
        name = unique_name(names, base)
        names.add(name)
        return name

    for i, p in enumerate(fn.params):
        bufs[p] = _buffer(fresh(p.name), p)
        params.append(bufs[p])
        order.append(["input", i])
    constants: list = []
    for b in bindings:
        if isinstance(b.value, Call):
            for a in b.value.args:
                if isinstance(a, Constant) and a not in bufs:
                    bufs[a] = _buffer(fresh(f"const{len(constants)}"), a)
                    order.append(["const", len(constants)])
                    constants.append(a.data)
                    params.append(bufs[a])
    last_use: dict = {}
    for i, b in enumerate(bindings):
        if isinstance(b.value, Call):
            for a in b.value.args:
                last_use[_resolve_alias(a, aliases)] = i
    pool: dict = {}
    intermediates: list[Buffer] = []
    steps = []
    out_buf = _buffer(fresh("output"), ret)
    for i, b in enumerate(bindings):
        v = b.value
        if not isinstance(v, Call):
            continue
        if b.var is ret:
            out = out_buf
        else:
            free = pool.get(_key(b.var))
            out = free.pop() if free else None
            if out is None:
                out = _buffer(fresh(b.var.name), b.var)
                intermediates.append(out)
        bufs[b.var] = out
        args = [bufs[_resolve_alias(a, aliases)] for a in v.args]
        steps.append((kernels[v.attrs["func"]], args + [out]))
        for a in dict.fromkeys(_resolve_alias(a, aliases) for a in v.args):
            if last_use.get(a) == i and a in bufs and bufs[a] in intermediates:
                pool.setdefault(_key(a), []).append(bufs[a])
    params.append(out_buf)
    order.append(["output", 0])
    func = compose("model_main", params, steps, intermediates, {"global_symbol": "model_main", "tir.noalias": True})
    return func, constants, order


def _graph_executable(fn: Function, kernels: dict, sources: dict, inputs, output, target, entry) -> Executable:
    """Bindings run one by one: kernels from one native module, registered Python functions in between."""
    const_ids: dict = {}
    constants: list = []
    steps = []
    names: dict = {p: spec["name"] for p, spec in zip(fn.params, inputs)}

    def ref(a):
        if isinstance(a, Constant):
            if id(a) not in const_ids:
                const_ids[id(a)] = len(constants)
                constants.append(a.data)
            return f"const{const_ids[id(a)]}"
        return names[a]

    for n, b in enumerate(fn.bindings()):
        v = b.value
        if isinstance(v, (GraphVar, Constant)):
            names[b.var] = ref(v)
            continue
        names[b.var] = f"%{n}:{b.var.name}"
        fname = v.attrs.get("func")
        if v.op not in ("call_tir", "call_dps_packed") or fname is None:
            raise ValueError(f"compile: binding {b.var.name} is a {v.op!r} call that was not legalized")
        kind = "kernel" if fname in kernels else "packed"
        steps.append({"var": names[b.var], "kind": kind, "func": fname, "args": [ref(a) for a in v.args],
                      "shape": _spec_shape(b.var.type.shape), "dtype": b.var.type.dtype})
    module = runtime.build(IRModule(dict(kernels)), target) if kernels else None
    meta = {"kind": "graph", "entry": entry, "inputs": inputs, "output": output, "steps": steps,
            "ret": ref(fn.ret), "kernels": sources, "target": str(target)}
    return Executable(module, meta, constants)
