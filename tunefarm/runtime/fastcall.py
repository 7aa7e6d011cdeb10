"""Native call paths for executables: numpy arrays in, one native call, no Python-side pointer fishing.

Getting a data pointer out of a numpy array from Python (``a.ctypes.data``) costs microseconds, more than a
batch-1 MLP takes to run. So an executable JITs, at load time, tiny functions that receive the arrays as
``PyObject*`` and do in native code what ``runtime.packed_args`` does in Python: for each array check that
the object really is an ``ndarray`` of the expected dtype (type and descriptor pointers), the number of
dimensions and every dimension (symbolic ones bound on first sight and compared afterwards), C-contiguity,
alignment and, for the output, writability; then fill the packed argument array on their own stack (data
pointers, the constants' fixed pointers, the shape array) and call the model's packed entry.

Two flavours share that code:

* ``Gate``: ``gate(*arrays, out) -> 0`` (ran) or ``1 + index`` of the first argument it rejected (nothing
  ran); called through ``ctypes`` (used with ``out=`` and by the checked paths).
* ``NativeCall``: a real builtin function (``METH_FASTCALL | METH_KEYWORDS``) that also allocates the output
  with numpy's own ``PyArray_Empty`` and returns it; anything it does not handle (keywords, a wrong
  argument) is passed unchanged to a Python fallback, which raises the precise error or runs the checked
  path. Installed as the executable's ``__call__``, ``exe(x)`` is a single C call (~0.3 us instead of ~1 us).

Both read numpy's C struct (``PyArrayObject_fields``: data at 16, nd at 24, dimensions at 32, descr at 56,
flags at 64 on 64-bit CPython) and ``NativeCall`` numpy's C-API table (``PyArray_Empty``);
``struct_layout_ok`` / ``native_call_ok`` verify those against live objects once per process, and when
anything does not match (another Python or numpy build) the executable falls back to the ctypes gate or
the checked path. Set ``TUNEFARM_NO_NATIVE_CALL=1`` to disable ``NativeCall``.

Calls keep the GIL (``ctypes.PYFUNCTYPE``, and builtins run under it): releasing and re-taking it would cost
more than a batch-1 model runs, and holding it guarantees no other thread resizes an argument mid-call.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading

import llvmlite.binding as llvm
import numpy as np

from .jit import host_target_machine

OFF_REFCNT, OFF_TYPE, OFF_DATA, OFF_ND, OFF_DIMS, OFF_DESCR, OFF_FLAGS = 0, 8, 16, 24, 32, 56, 64
C_CONTIGUOUS, ALIGNED, WRITEABLE = 0x1, 0x100, 0x400
METH_FASTCALL, METH_KEYWORDS = 0x0080, 0x0002
PYARRAY_EMPTY_INDEX = 184  # numpy/__multiarray_api.h: PyArray_API[184] is PyArray_Empty (numpy 1.x and 2.x)

_layout_ok: bool | None = None
_empty_addr: int | None = None
_lock = threading.Lock()


def struct_layout_ok() -> bool:
    """Whether numpy arrays have the field offsets this module reads (checked once on a probe array)."""
    global _layout_ok
    if _layout_ok is None:
        _layout_ok = _check_layout()
    return _layout_ok


def _check_layout() -> bool:
    import sysconfig

    if (ctypes.sizeof(ctypes.c_void_p) != 8 or sys.implementation.name != "cpython"
            or hasattr(sys, "gettotalrefcount") or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return False  # 64-bit, non-debug, GIL-ful CPython only: other builds lay objects out differently
    try:
        probe = np.zeros((3, 5), dtype=np.float32)[:, :4]  # not contiguous, not owning
        base = id(probe)

        def rd(off, t):
            return t.from_address(base + off).value

        dims = rd(OFF_DIMS, ctypes.c_void_p)
        flags = rd(OFF_FLAGS, ctypes.c_int)
        return (rd(OFF_TYPE, ctypes.c_void_p) == id(np.ndarray)
                and rd(OFF_DATA, ctypes.c_void_p) == probe.ctypes.data
                and rd(OFF_ND, ctypes.c_int) == 2
                and [ctypes.c_int64.from_address(dims + 8 * i).value for i in range(2)] == [3, 4]
                and rd(OFF_DESCR, ctypes.c_void_p) == id(probe.dtype)
                and not flags & C_CONTIGUOUS and flags & ALIGNED and flags & WRITEABLE)
    except Exception:  # any surprise: do not use native calls
        return False


def pyarray_empty_address() -> int | None:
    """Address of numpy's ``PyArray_Empty``, verified by allocating an array through it (None if unusable)."""
    global _empty_addr
    with _lock:
        if _empty_addr is None:
            _empty_addr = _find_pyarray_empty() or 0
    return _empty_addr or None


def _find_pyarray_empty() -> int | None:
    try:
        try:
            from numpy._core import _multiarray_umath as mu
        except ImportError:  # numpy 1.x
            from numpy.core import _multiarray_umath as mu
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype = ctypes.c_void_p
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api = get_pointer(mu._ARRAY_API, None)
        addr = ctypes.c_void_p.from_address(api + 8 * PYARRAY_EMPTY_INDEX).value
        proto = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p,
                                  ctypes.c_int)
        descr = np.dtype("float32")
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(descr))  # PyArray_Empty steals a reference
        dims = (ctypes.c_int64 * 2)(3, 5)
        a = proto(addr)(2, dims, id(descr), 0)
        if type(a) is np.ndarray and a.shape == (3, 5) and a.dtype == descr and a.flags.c_contiguous:
            return addr
    except Exception:  # any surprise: no NativeCall
        return None
    return None


def native_call_ok() -> bool:
    if os.environ.get("TUNEFARM_NO_NATIVE_CALL"):
        return False
    return struct_layout_ok() and pyarray_empty_address() is not None and hasattr(ctypes.pythonapi,
                                                                                   "PyObject_Vectorcall")


class GateParam:
    """One parameter of the packed entry: a numpy argument (``arg`` index) or a fixed constant array."""

    def __init__(self, shape, dtype: str, arg: int | None = None, const: np.ndarray | None = None,
                 written: bool = False):
        self.shape = list(shape)  # ints or symbol names
        self.dtype = np.dtype(dtype)
        self.arg = arg
        self.const = const
        self.written = written


class Emitter:
    """LLVM IR text (opaque pointers, as LLVM 22 requires) for checking arrays and calling the entry."""

    def __init__(self):
        self.lines: list[str] = []
        self.counter = 0

    def tmp(self) -> str:
        self.counter += 1
        return f"%t{self.counter}"

    def label(self) -> str:
        self.counter += 1
        return f"l{self.counter}"

    def slow_path(self, fallback_addr: int, vectorcall_addr: int) -> None:
        """The ``slow:`` block: whatever the native checks refused, the Python ``fallback`` does (its errors are
        the messages users see), called through ``PyObject_Vectorcall`` at ``vectorcall_addr``."""
        fb, vc, res = self.tmp(), self.tmp(), self.tmp()
        self.lines += ["slow:",
                       f"  {fb} = inttoptr i64 {fallback_addr} to ptr",
                       f"  {vc} = inttoptr i64 {vectorcall_addr} to ptr",
                       f"  {res} = call ptr {vc}(ptr {fb}, ptr %args, i64 %nargsf, ptr %kwnames)",
                       f"  ret ptr {res}"]

    def load(self, obj: str, off: int, ty: str) -> str:
        a, v = self.tmp(), self.tmp()
        self.lines.append(f"  {a} = getelementptr inbounds i8, ptr {obj}, i64 {off}")
        self.lines.append(f"  {v} = load {ty}, ptr {a}, align {4 if ty == 'i32' else 8}")
        return v

    def check(self, cond: str, fail: str) -> None:
        ok = self.label()
        self.lines.append(f"  br i1 {cond}, label %{ok}, label %{fail}")
        self.lines.append(f"{ok}:")

    def cmp(self, ty: str, a: str, b) -> str:
        c = self.tmp()
        self.lines.append(f"  {c} = icmp eq {ty} {a}, {b}")
        return c

    def check_array(self, obj: str, p: GateParam, fail: str, sym: dict, exact_type: bool = True) -> list[str]:
        """Checks of one ``ndarray`` argument; returns its dims (SSA values) and leaves its data pointer.
        ``exact_type=False``: the caller has checked the type (a subclass may be accepted)."""
        if exact_type:
            self.check(self.cmp("i64", self.load(obj, OFF_TYPE, "i64"), id(np.ndarray)), fail)
        self.check(self.cmp("i64", self.load(obj, OFF_DESCR, "i64"), id(p.dtype)), fail)
        self.check(self.cmp("i32", self.load(obj, OFF_ND, "i32"), len(p.shape)), fail)
        need = C_CONTIGUOUS | ALIGNED | (WRITEABLE if p.written else 0)
        masked = self.tmp()
        self.lines.append(f"  {masked} = and i32 {self.load(obj, OFF_FLAGS, 'i32')}, {need}")
        self.check(self.cmp("i32", masked, need), fail)
        dims_ptr = self.load(obj, OFF_DIMS, "ptr")
        dims = []
        for n, d in enumerate(p.shape):
            a, got = self.tmp(), self.tmp()
            self.lines.append(f"  {a} = getelementptr inbounds i64, ptr {dims_ptr}, i64 {n}")
            self.lines.append(f"  {got} = load i64, ptr {a}, align 8")
            if isinstance(d, int):
                self.check(self.cmp("i64", got, d), fail)
            elif d in sym:
                self.check(self.cmp("i64", got, sym[d]), fail)
            else:
                sym[d] = got
            dims.append(got)
        return dims

    def call_entry(self, entry_addr: int, params: list[GateParam], data: dict, dims: dict) -> None:
        """Fill the packed arguments (data pointers, then the shape array) and call the entry."""
        total = max(1, sum(len(p.shape) for p in params))
        n = len(params)
        shapes, packed = self.tmp(), self.tmp()
        self.lines.append(f"  {shapes} = alloca [{total} x i64], align 8")
        self.lines.append(f"  {packed} = alloca [{n + 1} x ptr], align 8")
        pos = 0
        for i, p in enumerate(params):
            if p.arg is None:
                d = self.tmp()
                self.lines.append(f"  {d} = inttoptr i64 {p.const.ctypes.data} to ptr")
                values, ptr = [str(s) for s in p.const.shape], d
            else:
                values, ptr = dims[i], data[i]
            for v in values:
                a = self.tmp()
                self.lines.append(f"  {a} = getelementptr inbounds [{total} x i64], ptr {shapes}, i64 0, i64 {pos}")
                self.lines.append(f"  store i64 {v}, ptr {a}, align 8")
                pos += 1
            a = self.tmp()
            self.lines.append(f"  {a} = getelementptr inbounds [{n + 1} x ptr], ptr {packed}, i64 0, i64 {i}")
            self.lines.append(f"  store ptr {ptr}, ptr {a}, align 8")
        a = self.tmp()
        self.lines.append(f"  {a} = getelementptr inbounds [{n + 1} x ptr], ptr {packed}, i64 0, i64 {n}")
        self.lines.append(f"  store ptr {shapes}, ptr {a}, align 8")
        f = self.tmp()
        self.lines.append(f"  {f} = inttoptr i64 {entry_addr} to ptr")
        self.lines.append(f"  call void {f}(ptr {packed})")


def gate_ir(entry_addr: int, params: list[GateParam], n_args: int) -> str:
    em = Emitter()
    sym: dict = {}
    data, dims = {}, {}
    for i, p in enumerate(params):
        if p.arg is not None:
            obj = f"%a{p.arg}"
            dims[i] = em.check_array(obj, p, f"fail{p.arg}", sym)
            data[i] = em.load(obj, OFF_DATA, "ptr")
    em.call_entry(entry_addr, params, data, dims)
    em.lines.append("  ret i32 0")
    for k in range(n_args):
        em.lines += [f"fail{k}:", f"  ret i32 {k + 1}"]
    args = ", ".join(f"ptr %a{i}" for i in range(n_args))
    return f"define i32 @gate({args}) nounwind {{\nentry:\n" + "\n".join(em.lines) + "\n}\n"


def native_call_ir(entry_addr: int, params: list[GateParam], n_inputs: int, out_plan: list, out_dtype,
                   empty_addr: int, vectorcall_addr: int, fallback_addr: int) -> str:
    """``PyObject* call(self, args, nargsf, kwnames)``: checks, the output, the entry; else the fallback.

    Without keywords the output is allocated with ``PyArray_Empty``; with exactly ``out=`` (the interned
    string, which is what a call site passes) the given array is checked like an input, must be writable
    and must not overlap any input. ``out_plan`` gives each output dim as an int or a symbol of the inputs.
    Any check that fails branches to ``slow``, which hands the call to ``fallback`` unchanged.
    """
    em = Emitter()
    em.lines.append(f"  %nargs = and i64 %nargsf, {(1 << 63) - 1}")
    em.check(em.cmp("i64", "%nargs", n_inputs), "slow")
    sym: dict = {}
    data, dims, nbytes, out_index = _emit_inputs(em, params, n_inputs, sym)
    out_dims = [str(d) if isinstance(d, int) else sym[d] for d in out_plan]
    em.lines.append("  %haskw = icmp ne ptr %kwnames, null")
    em.lines.append("  br i1 %haskw, label %given, label %alloc")
    given = _emit_given_output(em, n_inputs, out_plan, out_dims, params[out_index].dtype, data, nbytes)
    fresh = _emit_new_output(em, out_dims, out_dtype, empty_addr)
    # ---- both: call the entry and return the output (a new reference)
    em.lines.append("run_fresh:")
    em.lines.append("  br label %run")
    em.lines.append("run_given:")
    rcg = em.load(given, OFF_REFCNT, "i64")
    rcg1 = em.tmp()
    em.lines.append(f"  {rcg1} = add i64 {rcg}, 1")
    em.lines.append(f"  store i64 {rcg1}, ptr {given}, align 8")
    em.lines.append("  br label %run")
    em.lines.append("run:")
    out = em.tmp()
    em.lines.append(f"  {out} = phi ptr [{fresh}, %run_fresh], [{given}, %run_given]")
    data[out_index] = em.load(out, OFF_DATA, "ptr")
    dims[out_index] = out_dims
    em.call_entry(entry_addr, params, data, dims)
    em.lines.append(f"  ret ptr {out}")
    em.lines += ["error:", "  ret ptr null"]
    em.slow_path(fallback_addr, vectorcall_addr)
    return ("define ptr @call(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) {\nentry:\n"
            + "\n".join(em.lines) + "\n}\n")


def _emit_inputs(em: Emitter, params: list[GateParam], n_inputs: int, sym: dict):
    """Check each input array of the vectorcall; ``(data, dims, nbytes, out_index)``, the first three keyed by
    parameter index, ``out_index`` the parameter that is the output."""
    data, dims, nbytes = {}, {}, {}
    out_index = None
    for i, p in enumerate(params):
        if p.arg is None:
            continue
        if p.arg == n_inputs:
            out_index = i
            continue
        slot = em.tmp()
        em.lines.append(f"  {slot} = getelementptr inbounds ptr, ptr %args, i64 {p.arg}")
        obj = em.tmp()
        em.lines.append(f"  {obj} = load ptr, ptr {slot}, align 8")
        dims[i] = em.check_array(obj, p, "slow", sym)
        data[i] = em.load(obj, OFF_DATA, "ptr")
        nbytes[i] = emit_nbytes(em, dims[i], p.dtype.itemsize)
    return data, dims, nbytes, out_index


def _emit_given_output(em: Emitter, n_inputs: int, out_plan: list, out_dims: list, out_dtype: np.dtype,
                       data: dict, nbytes: dict) -> str:
    """Block ``given``: one keyword, named ``out`` (interned), a writable array of the output's shape that
    overlaps no input; branches to ``run_given`` with it."""
    em.lines.append("given:")
    nkw = em.load("%kwnames", 16, "i64")
    em.check(em.cmp("i64", nkw, 1), "slow")
    name = em.load("%kwnames", 24, "i64")
    em.check(em.cmp("i64", name, id(sys.intern("out"))), "slow")
    slot, given = em.tmp(), em.tmp()
    em.lines.append(f"  {slot} = getelementptr inbounds ptr, ptr %args, i64 {n_inputs}")
    em.lines.append(f"  {given} = load ptr, ptr {slot}, align 8")
    given_dims = em.check_array(given, GateParam([d if isinstance(d, int) else f"__out{k}" for k, d in
                                                  enumerate(out_plan)], out_dtype.name, written=True), "slow", {})
    for got, want in zip(given_dims, out_dims):
        em.check(em.cmp("i64", got, want), "slow")
    gdata = em.load(given, OFF_DATA, "ptr")
    gbytes = emit_nbytes(em, out_dims, out_dtype.itemsize)
    for i in nbytes:
        emit_no_overlap(em, gdata, gbytes, data[i], nbytes[i], "slow")
    em.lines.append("  br label %run_given")
    return given


def _emit_new_output(em: Emitter, out_dims: list, out_dtype, empty_addr: int) -> str:
    """Block ``alloc`` (no keywords): numpy allocates the output (``PyArray_Empty`` steals a reference to the
    descriptor); branches to ``run_fresh`` with it, or to ``error`` when allocation failed."""
    em.lines.append("alloc:")
    nd = len(out_dims)
    odims = em.tmp()
    em.lines.append(f"  {odims} = alloca [{max(1, nd)} x i64], align 8")
    for k, v in enumerate(out_dims):
        a = em.tmp()
        em.lines.append(f"  {a} = getelementptr inbounds [{max(1, nd)} x i64], ptr {odims}, i64 0, i64 {k}")
        em.lines.append(f"  store i64 {v}, ptr {a}, align 8")
    descr = em.tmp()
    em.lines.append(f"  {descr} = inttoptr i64 {id(out_dtype)} to ptr")
    rc = em.load(descr, OFF_REFCNT, "i64")
    rc1 = em.tmp()
    em.lines.append(f"  {rc1} = add i64 {rc}, 1")
    em.lines.append(f"  store i64 {rc1}, ptr {descr}, align 8")
    fn_empty, fresh = em.tmp(), em.tmp()
    em.lines.append(f"  {fn_empty} = inttoptr i64 {empty_addr} to ptr")
    em.lines.append(f"  {fresh} = call ptr {fn_empty}(i32 {nd}, ptr {odims}, ptr {descr}, i32 0)")
    em.lines.append(f"  %isnull = icmp eq ptr {fresh}, null")
    em.lines.append("  br i1 %isnull, label %error, label %run_fresh")
    return fresh


def emit_nbytes(em: Emitter, dims: list, itemsize: int) -> str:
    acc = str(itemsize)
    for d in dims:
        t = em.tmp()
        em.lines.append(f"  {t} = mul i64 {acc}, {d}")
        acc = t
    return acc


def emit_no_overlap(em: Emitter, a: str, an: str, b: str, bn: str, fail: str) -> None:
    """Branch to ``fail`` when ``[a, a + an)`` and ``[b, b + bn)`` intersect (empty ranges never do)."""
    ai, bi, ae, be = em.tmp(), em.tmp(), em.tmp(), em.tmp()
    em.lines += [f"  {ai} = ptrtoint ptr {a} to i64", f"  {bi} = ptrtoint ptr {b} to i64",
                 f"  {ae} = add i64 {ai}, {an}", f"  {be} = add i64 {bi}, {bn}"]
    c1, c2, both, c3, c4, nonempty, bad = (em.tmp() for _ in range(7))
    em.lines += [f"  {c1} = icmp ult i64 {ai}, {be}", f"  {c2} = icmp ult i64 {bi}, {ae}",
                 f"  {both} = and i1 {c1}, {c2}", f"  {c3} = icmp ne i64 {an}, 0", f"  {c4} = icmp ne i64 {bn}, 0",
                 f"  {nonempty} = and i1 {c3}, {c4}", f"  {bad} = and i1 {both}, {nonempty}"]
    ok = em.label()
    em.lines += [f"  br i1 {bad}, label %{fail}, label %{ok}", f"{ok}:"]


class Jit:
    """One tiny MCJIT module; the code lives as long as this object."""

    def __init__(self, text: str, symbol: str):
        with _lock:
            tm = host_target_machine(llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
            mod = llvm.parse_assembly(text)
            mod.triple = llvm.get_process_triple()
            mod.verify()
            self._engine = llvm.create_mcjit_compiler(mod, tm)
            self._engine.finalize_object()
            self.address = self._engine.get_function_address(symbol)

    def __del__(self):
        engine = getattr(self, "_engine", None)
        if engine is not None:
            try:
                engine.close()
            except Exception:  # interpreter shutdown
                pass


class Gate:
    """``gate(*arrays) -> 0`` (ran) or ``1 + index`` (argument ``index`` rejected; nothing ran).

    Keeps the constants and the module owning the entry alive as long as the gate lives.
    """

    def __init__(self, entry_addr: int, params: list[GateParam], n_args: int, keepalive=()):
        self._keep = (list(keepalive), [p.const for p in params if p.const is not None])
        self._jit = Jit(gate_ir(entry_addr, params, n_args), "gate")
        self.call = ctypes.PYFUNCTYPE(ctypes.c_int, *([ctypes.py_object] * n_args))(self._jit.address)


class PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


class NativeCall:
    """A builtin function ``f(*inputs)`` that checks, allocates the output, runs the model and returns it.

    ``fallback(*inputs, **kw)`` (a Python callable) receives every call it does not handle. ``function`` is
    the builtin; this object (kept alive by whoever holds ``function``) owns its code and method table.
    """

    def __init__(self, entry_addr: int, params: list[GateParam], n_inputs: int, out_plan: list, out_dtype: str,
                 fallback, keepalive=()):
        self._dtype = np.dtype(out_dtype)  # its address is baked into the code
        self._fallback = fallback
        self._keep = (list(keepalive), [p.const for p in params if p.const is not None])
        vectorcall = ctypes.cast(ctypes.pythonapi.PyObject_Vectorcall, ctypes.c_void_p).value
        text = native_call_ir(entry_addr, params, n_inputs, out_plan, self._dtype, pyarray_empty_address(),
                              vectorcall, id(fallback))
        self._jit = Jit(text, "call")
        self._def = PyMethodDef(b"tunefarm_model_call", self._jit.address, METH_FASTCALL | METH_KEYWORDS,
                                 b"Run the compiled model on numpy arrays (native fast path).")
        new = ctypes.pythonapi.PyCFunction_NewEx
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
        self.function = new(ctypes.addressof(self._def), self, None)  # m_self keeps this object alive


__all__ = ["Gate", "GateParam", "NativeCall", "native_call_ok", "pyarray_empty_address", "struct_layout_ok"]
