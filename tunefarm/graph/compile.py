"""``tunefarm.compile``: a whole model from the database's best schedule of each kernel.

Every kernel takes its best trace for this target (kernels never tuned get ``default_schedule``). A model
whose calls are all kernels is composed into one PrimFunc — kernels in order, intermediates planned so
buffers of equal shape whose lifetimes do not overlap share memory — and built into one LLVM module with a
single entry point.
"""
from __future__ import annotations

import logging

from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.function import PrimFunc
from ..ir.module import IRModule
from .compose import compose
from .executable import Executable
from .expr import Call, Constant, GraphVar
from .function import Function
from .pipeline import entry_name, prepare

log = logging.getLogger("tunefarm.compile")


def _target(target):
    from ..target import Target

    if target is None:
        return Target.host()
    return target if isinstance(target, Target) else Target(target)


def _open_db(database):
    if database is None:
        return None
    from ..database import Database

    return database if isinstance(database, Database) else Database(database)


def schedule_kernel(func: PrimFunc, db, target) -> tuple[PrimFunc, str]:
    """The kernel with its best stored trace applied (or the default schedule) and where it came from."""
    from ..ir.structural import workload_key
    from .default_schedule import default_schedule

    if db is not None:
        key = workload_key(func)
        try:
            rec = db.best(key, target=str(target))
        except KeyError:
            rec = None
        if rec is not None:
            from ..schedule import ScheduleError

            try:
                return rec.trace.replay(func).mod["main"].with_name(func.name), "tuned"
            except ScheduleError as e:  # a stored trace that no longer applies must not break compile
                log.warning("best trace of %s no longer applies (%s); using the default schedule", func.name, e)
    return default_schedule(func), "default"


def _buffer(name: str, value) -> Buffer:
    shape = tuple(E.const(d, "int64") if isinstance(d, int) else d for d in value.type.shape)
    return Buffer(name, shape, value.type.dtype)


def _key(value):
    return (tuple(d if isinstance(d, int) else id(d) for d in value.type.shape), value.type.dtype)


def _spec_shape(shape):
    return [d if isinstance(d, int) else {"sym": d.name} for d in shape]


def compile(mod: IRModule, params: dict | None = None, database=None, target=None, entry: str | None = None,
            fuse: bool = True) -> Executable:
    """Compile a graph module (with ``params`` bound as constants) into an Executable."""
    from ..runtime import build

    target = _target(target)
    entry = entry_name(mod, entry)
    mod = prepare(mod, params, entry, fuse)
    fn: Function = mod[entry]
    db = _open_db(database)
    scheduled: dict[str, PrimFunc] = {}
    sources: dict[str, str] = {}
    for call in fn.calls():
        name = call.attrs.get("func")
        callee = mod.functions.get(name)
        if isinstance(callee, PrimFunc) and name not in scheduled:
            scheduled[name], sources[name] = schedule_kernel(callee, db, target)
    log.info("kernels: %s", ", ".join(f"{k} ({v})" for k, v in sources.items()))
    inputs = [{"name": p.name, "shape": _spec_shape(p.type.shape), "dtype": p.type.dtype} for p in fn.params]
    output = {"shape": _spec_shape(fn.ret.type.shape), "dtype": fn.ret.type.dtype}
    all_kernels = all(c.op == "call_tir" or c.attrs.get("func") in scheduled for c in fn.calls())
    if all_kernels and isinstance(fn.ret, GraphVar):
        func, constants = _compose_model(fn, scheduled)
        module = build(func, target)
        meta = {"kind": "native", "entry": entry, "entry_symbol": func.name, "inputs": inputs, "output": output,
                "kernels": sources, "target": str(target)}
        return Executable(module, meta, constants)
    return _graph_executable(fn, scheduled, sources, inputs, output, target, entry)


def _compose_model(fn: Function, kernels: dict[str, PrimFunc]) -> tuple[PrimFunc, list]:
    """The whole entry function as one PrimFunc ``(inputs..., constants..., output)``."""
    bufs: dict = {}
    params = []
    for p in fn.params:
        bufs[p] = _buffer(p.name, p)
        params.append(bufs[p])
    constants: list = []
    for call in fn.calls():
        for a in call.args:
            if isinstance(a, Constant) and a not in bufs:
                bufs[a] = _buffer(f"const{len(constants)}", a)
                constants.append(a.data)
                params.append(bufs[a])
    bindings = list(fn.bindings())
    last_use: dict = {}
    for i, b in enumerate(bindings):
        if isinstance(b.value, Call):
            for a in b.value.args:
                last_use[a] = i
    pool: dict = {}
    intermediates: list[Buffer] = []
    steps = []
    aliases: dict = {}
    for i, b in enumerate(bindings):
        v = b.value
        if isinstance(v, GraphVar):  # a plain alias (gv = lv)
            aliases[b.var] = v
            bufs[b.var] = bufs[v]
            continue
        if b.var is fn.ret:
            out = _buffer("output", b.var)
        else:
            free = pool.get(_key(b.var))
            out = free.pop() if free else None
            if out is None:
                out = _buffer(b.var.name, b.var)
                intermediates.append(out)
        bufs[b.var] = out
        steps.append((kernels[v.attrs["func"]], [bufs[a] for a in v.args] + [out]))
        for a in v.args:
            if last_use.get(a) == i and a in bufs and bufs[a] in intermediates:
                pool.setdefault(_key(a), []).append(bufs[a])
    ret = fn.ret
    while ret in aliases:
        ret = aliases[ret]
    if bufs[ret].name != "output":
        raise ValueError("the model's result must be computed by a kernel (not an input or a constant)")
    params.append(bufs[ret])
    return compose("model_main", params, steps, intermediates, {"global_symbol": "model_main",
                                                                "tir.noalias": True}), constants


def _graph_executable(fn: Function, kernels: dict, sources: dict, inputs, output, target, entry) -> Executable:
    from ..runtime import build

    const_ids: dict = {}
    constants: list = []
    steps = []
    names: dict = {p: p.name for p in fn.params}

    def ref(a):
        if isinstance(a, Constant):
            if id(a) not in const_ids:
                const_ids[id(a)] = len(constants)
                constants.append(a.data)
            return f"const{const_ids[id(a)]}"
        return names[a]

    for b in fn.bindings():
        v = b.value
        names[b.var] = b.var.name
        if isinstance(v, GraphVar):
            names[b.var] = names[v]
            continue
        fname = v.attrs.get("func")
        kind = "kernel" if fname in kernels else "packed"
        steps.append({"var": b.var.name, "kind": kind, "func": fname, "args": [ref(a) for a in v.args],
                      "shape": _spec_shape(b.var.type.shape), "dtype": b.var.type.dtype})
    module = build(IRModule(dict(kernels)), target) if kernels else None
    meta = {"kind": "graph", "entry": entry, "inputs": inputs, "output": output, "steps": steps,
            "ret": names[fn.ret], "kernels": sources, "target": str(target)}
    return Executable(module, meta, constants)
