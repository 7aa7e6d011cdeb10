"""The native fast path of ``mod[name](*arrays)``: every check of ``packed_args`` in a few machine instructions.

``check_arrays`` costs tens of microseconds per call from Python (attribute reads, ``np.may_share_memory``
for every pair, a new shape array and ctypes array per call), more than many tuned kernels run. So a
``PackedFunction`` called repeatedly JITs a builtin function (``METH_FASTCALL``, like ``fastcall.NativeCall``)
that receives the arrays as ``PyObject*`` and, for each parameter in order: its type is ``numpy.ndarray`` or a
subclass, its dtype is the parameter's (descriptor pointer), its number of dimensions and every dimension
(symbolic ones bound on first sight, compared afterwards), C-contiguous, data address a multiple of the
element size, writable when the function writes it; then that no written array's bytes overlap another
argument's (C-contiguous arrays occupy exactly ``[data, data + nbytes)``, the bounds ``may_share_memory``
compares). Only then does it fill the packed arguments on its own stack and call the entry.

It never refuses anything itself: a call it does not accept (wrong count, keywords, any failed check, or a
dtype equal to the parameter's but another descriptor object) is handed unchanged to the Python path, which
raises the precise error or, when the arguments are fine after all, runs the checked call. So the native
checks can only be stricter than ``check_arrays``, and every message stays the one ``check_arrays`` gives.

Not built (the Python path serves every call) when a shape has an arithmetic dimension (``n // 2``), when the
process's numpy layout is not the one ``fastcall`` reads, or with ``TUNEFARM_NO_NATIVE_CALL=1``.
"""
from __future__ import annotations

import ctypes
import os

import numpy as np

from .fastcall import (METH_FASTCALL, METH_KEYWORDS, OFF_DATA, OFF_TYPE, GateParam, Emitter, emit_nbytes,
                       emit_no_overlap, Jit, PyMethodDef, struct_layout_ok)


def _c_function(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


def _emit_array_type(em: Emitter, obj: str, subtype_addr: int) -> None:
    """Branch to ``slow`` unless ``obj`` is an ndarray or an instance of a subclass (``PyType_IsSubtype``)."""
    ty = em.load(obj, OFF_TYPE, "i64")
    exact, sub = em.label(), em.label()
    em.lines.append(f"  br i1 {em.cmp('i64', ty, id(np.ndarray))}, label %{exact}, label %{sub}")
    em.lines.append(f"{sub}:")
    fn, tp, base, r = em.tmp(), em.tmp(), em.tmp(), em.tmp()
    em.lines += [f"  {fn} = inttoptr i64 {subtype_addr} to ptr", f"  {tp} = inttoptr i64 {ty} to ptr",
                 f"  {base} = inttoptr i64 {id(np.ndarray)} to ptr",
                 f"  {r} = call i32 {fn}(ptr {tp}, ptr {base})"]
    nz = em.tmp()
    em.lines.append(f"  {nz} = icmp ne i32 {r}, 0")
    em.check(nz, "slow")
    em.lines.append(f"  br label %{exact}")
    em.lines.append(f"{exact}:")


def packed_call_ir(entry_addr: int, params: list[GateParam], fallback_addr: int) -> str:
    """``PyObject* call(self, args, nargsf, kwnames)``: checks (see module doc), the entry, ``None``; or the
    fallback with the call unchanged."""
    em = Emitter()
    em.lines.append(f"  %nargs = and i64 %nargsf, {(1 << 63) - 1}")
    em.check(em.cmp("i64", "%nargs", len(params)), "slow")
    em.check("%nokw", "slow")
    sym: dict = {}
    data, dims, nbytes = {}, {}, {}
    for i, p in enumerate(params):
        slot, obj = em.tmp(), em.tmp()
        em.lines.append(f"  {slot} = getelementptr inbounds ptr, ptr %args, i64 {i}")
        em.lines.append(f"  {obj} = load ptr, ptr {slot}, align 8")
        _emit_array_type(em, obj, _c_function("PyType_IsSubtype"))
        dims[i] = em.check_array(obj, p, "slow", sym, exact_type=False)
        data[i] = em.load(obj, OFF_DATA, "ptr")
        if p.dtype.itemsize > 1:
            addr, rem = em.tmp(), em.tmp()
            em.lines += [f"  {addr} = ptrtoint ptr {data[i]} to i64",
                         f"  {rem} = urem i64 {addr}, {p.dtype.itemsize}"]
            em.check(em.cmp("i64", rem, 0), "slow")
        nbytes[i] = emit_nbytes(em, dims[i], p.dtype.itemsize)
    for i, p in enumerate(params):
        for j in range(len(params)):
            if p.written and j != i:
                emit_no_overlap(em, data[i], nbytes[i], data[j], nbytes[j], "slow")
    em.call_entry(entry_addr, params, data, dims)
    none, inc = em.tmp(), em.tmp()
    em.lines += [f"  {none} = inttoptr i64 {id(None)} to ptr", f"  {inc} = inttoptr i64 {_c_function('Py_IncRef')} to ptr",
                 f"  call void {inc}(ptr {none})", f"  ret ptr {none}"]
    em.slow_path(fallback_addr, _c_function('PyObject_Vectorcall'))
    head = "  %nokw = icmp eq ptr %kwnames, null\n"
    return ("define ptr @call(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {\nentry:\n" + head
            + "\n".join(em.lines) + "\n}\n")


def native_packed_call_ok(specs) -> bool:
    """Whether a function with these parameters (``ParamSpec``) gets the native path in this process."""
    if os.environ.get("TUNEFARM_NO_NATIVE_CALL") or not struct_layout_ok():
        return False
    return all(isinstance(d, (int, str)) for s in specs for d in s.shape)


class NativePackedCall:
    """A builtin ``f(*arrays) -> None`` for one packed entry; ``fallback(*arrays, **kw)`` gets what it does not
    accept. ``function`` is the builtin; this object (its ``m_self``) owns the code and the method table."""

    def __init__(self, entry_addr: int, specs, fallback, keepalive=()):
        params = [GateParam(s.shape, s.dtype.name, arg=i, written=s.written) for i, s in enumerate(specs)]
        self._fallback = fallback
        self._keep = (list(keepalive), params)  # the params' dtype addresses are baked into the code
        self._jit = Jit(packed_call_ir(entry_addr, params, id(fallback)), "call")
        self._def = PyMethodDef(b"tunefarm_packed_call", self._jit.address, METH_FASTCALL | METH_KEYWORDS,
                                 b"Call the compiled function on numpy arrays (native checks, then the entry).")
        new = ctypes.pythonapi.PyCFunction_NewEx
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
        self.function = new(ctypes.addressof(self._def), self, None)
