"""Lossless JSON for IR: expressions, statements, PrimFuncs and IRModules.

Document shape::

    {"format": "tunefarm.ir", "version": 1,
     "vars":    [{"name": "i", "dtype": "int32"}, ...],                 # referenced as ["var", id]
     "buffers": [{"name": "A", "dtype": "float32", "scope": "global", "shape": [expr, ...]}, ...],
     "root":    node}

Variables and buffers live in tables and are referenced by index, so sharing (one ``Var`` used in many
places) survives the trip. Each *definition site* (a parameter, loop variable, block iteration variable,
allocation) gets a fresh index, numbered in one fixed traversal order; that is what lets the same encoder,
in *canonical* mode (names dropped, nested sequences flattened), give the name-independent form behind
``structural_equal``, ``structural_hash`` and ``workload_key`` (see ``structural.py``).

Expressions are compact lists (``["bin", "+", a, b]``), statements dicts with a ``"kind"``. Non-finite floats
are strings (``"inf"``) so the output is strict JSON. Loading validates everything and raises ``ValueError``
naming the path of the first problem; it only builds IR nodes, never runs code.
"""
from __future__ import annotations

import json
import math

from . import expr as E
from . import stmt as S
from .buffer import SCOPES, Buffer
from .dtype import check_dtype
from .function import PrimFunc
from .module import IRModule
from .stmt_functor import StmtFunctor, flatten_seq

FORMAT = "tunefarm.ir"
VERSION = 1

# -----------------------------------------------------------------------------------------------------------
# encoding
# -----------------------------------------------------------------------------------------------------------
class Encoder(StmtFunctor):
    """IR -> JSON-able data. ``canonical=True`` drops names and flattens sequences (structural form)."""

    def __init__(self, canonical: bool = False, drop_global_symbol: bool = False, track: bool = False):
        self.canonical = canonical
        self.drop_global_symbol = drop_global_symbol
        self.var_ids: dict = {}
        self.vars: list = []
        self.var_objs: list = []
        self.buf_ids: dict = {}
        self.buffers: list = []
        self.buf_objs: list = []
        self.free_vars: list = []  # (id, Var) first seen at a use, not a definition
        self.free_buffers: list = []
        self._params = False
        self.track = track
        self.origin: dict = {}  # id(json fragment) -> IR node (for readable diffs)

    # ------------------------------------------------------------------ tables
    def define_var(self, v: E.Var) -> int:
        if not isinstance(v, E.Var):
            raise TypeError(f"expected a Var, got {type(v).__name__}")
        i = len(self.vars)
        self.vars.append({"dtype": v.dtype} if self.canonical else {"name": v.name, "dtype": v.dtype})
        self.var_objs.append(v)
        self.var_ids[v] = i
        return i

    def use_var(self, v: E.Var) -> int:
        i = self.var_ids.get(v)
        if i is None:
            i = self.define_var(v)
            if not self._params:
                self.free_vars.append((i, v))
        return i

    def define_buffer(self, b: Buffer) -> int:
        if not isinstance(b, Buffer):
            raise TypeError(f"expected a Buffer, got {type(b).__name__}")
        i = len(self.buffers)
        entry: dict = {} if self.canonical else {"name": b.name}
        self.buffers.append(entry)
        self.buf_objs.append(b)
        self.buf_ids[b] = i
        entry.update({"dtype": b.dtype, "scope": b.scope, "shape": [self.expr(s) for s in b.shape]})
        return i

    def use_buffer(self, b: Buffer) -> int:
        i = self.buf_ids.get(b)
        if i is None:
            i = self.define_buffer(b)
            if not self._params:
                self.free_buffers.append((i, b))
        return i

    def _mark(self, out, node):
        if self.track:
            self.origin[id(out)] = node
        return out

    # ------------------------------------------------------------------ values
    def expr(self, e) -> list:
        if isinstance(e, E.Var):
            return ["var", self.use_var(e)]
        if isinstance(e, E.IntImm):
            return ["int", e.value, e.dtype]
        if isinstance(e, E.FloatImm):
            return ["float", _float_out(e.value), e.dtype]
        if isinstance(e, E.Binary):
            out = ["bin", e.op, self.expr(e.a), self.expr(e.b)]
        elif isinstance(e, E.Not):
            out = ["not", self.expr(e.a)]
        elif isinstance(e, E.Select):
            out = ["select", self.expr(e.cond), self.expr(e.true_value), self.expr(e.false_value)]
        elif isinstance(e, E.Cast):
            out = ["cast", e.dtype, self.expr(e.value)]
        elif isinstance(e, E.Call):
            out = ["call", e.op, e.dtype, [self.expr(a) for a in e.args]]
        elif isinstance(e, E.BufferLoad):
            out = ["load", self.use_buffer(e.buffer), [self.expr(i) for i in e.indices]]
        else:
            raise TypeError(f"cannot serialize expression of type {type(e).__name__}")
        return self._mark(out, e)

    def attr_value(self, v):
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, float):
            return v if math.isfinite(v) else {"__float__": repr(v)}
        if isinstance(v, (list, tuple)):
            return [self.attr_value(x) for x in v]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"attribute keys must be strings, got {k!r}")
                out[k] = self.attr_value(x)
            return out
        if isinstance(v, E.PrimExpr):
            return {"__expr__": self.expr(v)}
        raise TypeError(f"cannot serialize attribute value of type {type(v).__name__}: {v!r}")

    def region(self, r: S.BufferRegion) -> dict:
        return self._mark({"buffer": self.use_buffer(r.buffer),
                           "region": [[self.expr(x.min), self.expr(x.extent)] for x in r.region]}, r)

    # ------------------------------------------------------------------ statements
    def stmt(self, s):
        return None if s is None else self._mark(self.visit(s), s)

    def generic_visit(self, s):
        raise TypeError(f"cannot serialize statement of type {type(s).__name__}")

    def visit_SeqStmt(self, s):
        items = s.seq
        if self.canonical:
            items = flatten_seq(items)
            if len(items) == 1:
                return self.stmt(items[0])
        return {"kind": "SeqStmt", "seq": [self.stmt(x) for x in items]}

    def visit_BufferStore(self, s):
        return {"kind": "BufferStore", "value": self.expr(s.value), "buffer": self.use_buffer(s.buffer),
                "indices": [self.expr(i) for i in s.indices]}

    def visit_Evaluate(self, s):
        return {"kind": "Evaluate", "value": self.expr(s.value)}

    def visit_IfThenElse(self, s):
        return {"kind": "IfThenElse", "condition": self.expr(s.condition), "then_case": self.stmt(s.then_case),
                "else_case": self.stmt(s.else_case)}

    def visit_For(self, s):
        lo, ext = self.expr(s.min), self.expr(s.extent)
        return {"kind": "For", "min": lo, "extent": ext, "loop_var": self.define_var(s.loop_var),
                "for_kind": s.kind, "annotations": self.attr_value(s.annotations), "body": self.stmt(s.body)}

    def visit_Block(self, b):
        ivs = []
        for iv in b.iter_vars:
            lo, ext = self.expr(iv.dom.min), self.expr(iv.dom.extent)
            ivs.append(self._mark({"var": self.define_var(iv.var), "min": lo, "extent": ext,
                                   "iter_type": iv.iter_type}, iv))
        allocs = [self.define_buffer(x) for x in b.alloc_buffers]
        return {"kind": "Block", "name": b.name, "iter_vars": ivs, "alloc_buffers": allocs,
                "reads": [self.region(r) for r in b.reads], "writes": [self.region(r) for r in b.writes],
                "annotations": self.attr_value(b.annotations), "init": self.stmt(b.init), "body": self.stmt(b.body)}

    def visit_BlockRealize(self, r):
        values = [self.expr(v) for v in r.iter_values]
        return {"kind": "BlockRealize", "iter_values": values, "predicate": self.expr(r.predicate),
                "block": self.stmt(r.block)}

    def visit_Allocate(self, s):
        return {"kind": "Allocate", "buffer": self.define_buffer(s.buffer), "body": self.stmt(s.body)}

    # ------------------------------------------------------------------ functions and modules
    def func(self, f: PrimFunc, name: str | None = None) -> dict:
        self._params = True
        try:
            params = [self.define_buffer(p) for p in f.params]
        finally:
            self._params = False
        attrs = dict(f.attrs)
        if self.drop_global_symbol:
            attrs.pop("global_symbol", None)
        out = {"kind": "PrimFunc", "params": params, "attrs": self.attr_value(attrs), "body": self.stmt(f.body)}
        if not self.canonical:
            out["name"] = f.name if name is None else name
        return self._mark(out, f)

    def module(self, m: IRModule) -> dict:
        names = sorted(m.functions) if self.canonical else list(m.functions)
        return {"kind": "IRModule", "functions": [[n, self.any(m.functions[n])] for n in names],
                "attrs": self.attr_value(m.attrs)}

    def any(self, node):
        if isinstance(node, PrimFunc):
            return self.func(node)
        if isinstance(node, IRModule):
            return self.module(node)
        if isinstance(node, S.Stmt):
            return self.stmt(node)
        if isinstance(node, E.PrimExpr):
            return {"kind": "Expr", "value": self.expr(node)}
        if isinstance(node, Buffer):
            return {"kind": "Buffer", "buffer": self.define_buffer(node)}
        if isinstance(node, S.BufferRegion):
            return {"kind": "BufferRegion", **self.region(node)}
        if isinstance(node, S.Range):
            return {"kind": "Range", "min": self.expr(node.min), "extent": self.expr(node.extent)}
        if isinstance(node, S.IterVar):
            lo, ext = self.expr(node.dom.min), self.expr(node.dom.extent)
            return {"kind": "IterVar", "var": self.define_var(node.var), "min": lo, "extent": ext,
                    "iter_type": node.iter_type}
        raise TypeError(f"cannot serialize {type(node).__name__}")

    def document(self, node) -> dict:
        root = self.any(node)
        return {"format": FORMAT, "version": VERSION, "vars": self.vars, "buffers": self.buffers, "root": root}


def _float_out(v: float):
    return v if math.isfinite(v) else repr(v)


def to_json(node) -> dict:
    """A JSON-able dict for a PrimFunc, IRModule, statement, expression, buffer or registered kind."""
    return Encoder().document(node)


def dumps(node, indent: int | None = None) -> str:
    return json.dumps(to_json(node), indent=indent, sort_keys=False, allow_nan=False)


# -----------------------------------------------------------------------------------------------------------
# decoding
# -----------------------------------------------------------------------------------------------------------
class _Malformed(Exception):
    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def _need(cond, path: str, message: str):
    if not cond:
        raise _Malformed(path, message)


def _field(d, key: str, path: str, types, optional: bool = False):
    if not isinstance(d, dict):
        raise _Malformed(path, f"expected an object, got {_tname(d)}")
    if key not in d:
        if not optional:
            raise _Malformed(path, f"missing field {key!r}")
        return None
    v = d[key]
    if optional and v is None:
        return None
    if not isinstance(v, types) or (isinstance(v, bool) and bool not in _as_tuple(types)):
        raise _Malformed(f"{path}.{key}", f"expected {_type_names(types)}, got {_tname(v)}")
    return v


def _as_tuple(t):
    return t if isinstance(t, tuple) else (t,)


def _type_names(types) -> str:
    return " or ".join(t.__name__ for t in _as_tuple(types))


def _tname(v) -> str:
    return "null" if v is None else type(v).__name__


_ARITY = {"var": 2, "int": 3, "float": 3, "bin": 4, "not": 2, "select": 4, "cast": 3, "call": 4, "load": 3}


class Decoder:
    """JSON-able data -> IR. Raises ``_Malformed`` with a path; ``from_json`` turns it into ValueError."""

    def __init__(self, doc):
        _need(isinstance(doc, dict), "$", f"expected an object, got {_tname(doc)}")
        _need(doc.get("format") == FORMAT, "$.format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
        _need(doc.get("version") == VERSION, "$.version", f"unsupported version {doc.get('version')!r}")
        var_table = _field(doc, "vars", "$", list)
        buf_table = _field(doc, "buffers", "$", list)
        self.vars = []
        for i, v in enumerate(var_table):
            p = f"$.vars[{i}]"
            name = _field(v, "name", p, str, optional=True)
            self.vars.append(E.Var(name if name is not None else f"v{i}", self.dtype(_field(v, "dtype", p, str), p)))
        self.buffers: list = [None] * len(buf_table)
        self.buf_table = buf_table
        for i in range(len(buf_table)):
            self.buffers[i] = self._buffer(i)
        self.doc = doc

    def _buffer(self, i: int) -> Buffer:
        p = f"$.buffers[{i}]"
        d = self.buf_table[i]
        name = _field(d, "name", p, str, optional=True)
        dtype = self.dtype(_field(d, "dtype", p, str), p)
        scope = _field(d, "scope", p, str)
        _need(scope in SCOPES, f"{p}.scope", f"unknown scope {scope!r}")
        shape = [self.expr(s, f"{p}.shape[{k}]") for k, s in enumerate(_field(d, "shape", p, list))]
        for k, s in enumerate(shape):
            _need(not s.dtype.startswith("float") and s.dtype != "bool", f"{p}.shape[{k}]",
                  "shape entries must be integers")
        return Buffer(name if name is not None else f"b{i}", shape, dtype, scope)

    @staticmethod
    def dtype(s: str, path: str) -> str:
        try:
            return check_dtype(s)
        except TypeError as e:
            raise _Malformed(path, str(e)) from None

    def var(self, i, path: str) -> E.Var:
        if not (type(i) is int and 0 <= i < len(self.vars)):
            raise _Malformed(path, f"bad variable reference {i!r}")
        return self.vars[i]

    def buffer(self, i, path: str) -> Buffer:
        if not (type(i) is int and 0 <= i < len(self.buffers)):
            raise _Malformed(path, f"bad buffer reference {i!r}")
        b = self.buffers[i]
        _need(b is not None, path, "buffer shapes cannot refer to buffers")
        return b

    # ------------------------------------------------------------------ expressions
    def expr(self, d, path: str) -> E.PrimExpr:
        if not (isinstance(d, list) and d and isinstance(d[0], str)):
            raise _Malformed(path, f"expected an expression list, got {_tname(d)}")
        tag = d[0]
        n = _ARITY.get(tag)
        if n is None:
            raise _Malformed(path, f"unknown expression tag {tag!r}")
        if len(d) != n:
            raise _Malformed(path, f"{tag!r} expects {n - 1} operands, got {len(d) - 1}")
        try:
            if tag == "var":
                return self.var(d[1], path)
            if tag == "int":
                _need(isinstance(d[1], int) and not isinstance(d[1], bool), path, "integer literal value")
                dt = self.dtype(d[2], path)
                _need(not dt.startswith("float"), path, f"integer literal of dtype {dt}")
                return E.IntImm(d[1], dt)
            if tag == "float":
                v = d[1]
                if isinstance(v, str):
                    _need(v in ("inf", "-inf", "nan"), path, f"bad float {v!r}")
                    v = float(v)
                _need(isinstance(v, (int, float)) and not isinstance(v, bool), path, "float literal value")
                dt = self.dtype(d[2], path)
                _need(dt.startswith("float"), path, f"float literal of dtype {dt}")
                return E.FloatImm(float(v), dt)
            if tag == "bin":
                _need(d[1] in E.BINARY_OPS, path, f"unknown operator {d[1]!r}")
                return E.Binary(d[1], self.expr(d[2], path + "[2]"), self.expr(d[3], path + "[3]"))
            if tag == "not":
                return E.Not(self.expr(d[1], path + "[1]"))
            if tag == "select":
                return E.Select(self.expr(d[1], path + "[1]"), self.expr(d[2], path + "[2]"),
                                self.expr(d[3], path + "[3]"))
            if tag == "cast":
                return E.Cast(self.dtype(d[1], path), self.expr(d[2], path + "[2]"))
            if tag == "call":
                _need(d[1] in E.INTRINSICS, path, f"unknown intrinsic {d[1]!r}")
                _need(isinstance(d[3], list) and d[3], path, "call arguments")
                args = tuple(self.expr(a, f"{path}[3][{k}]") for k, a in enumerate(d[3]))
                return E.Call(d[1], args, self.dtype(d[2], path))
            buf = self.buffer(d[1], path + "[1]")
            _need(isinstance(d[2], list) and len(d[2]) == buf.ndim, path, f"buffer load needs {buf.ndim} indices")
            return E.BufferLoad(buf, tuple(self.expr(x, f"{path}[2][{k}]") for k, x in enumerate(d[2])))
        except (TypeError, ValueError) as e:
            raise _Malformed(path, str(e)) from None

    def attr_value(self, v, path: str):
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, list):
            return [self.attr_value(x, f"{path}[{k}]") for k, x in enumerate(v)]
        if isinstance(v, dict):
            if set(v) == {"__expr__"}:
                return self.expr(v["__expr__"], path + ".__expr__")
            if set(v) == {"__float__"}:
                _need(v["__float__"] in ("inf", "-inf", "nan"), path, "bad non-finite float")
                return float(v["__float__"])
            return {k: self.attr_value(x, f"{path}.{k}") for k, x in v.items()}
        raise _Malformed(path, f"bad attribute value of type {_tname(v)}")

    def attrs(self, d, key, path):
        v = _field(d, key, path, dict)
        return self.attr_value(v, f"{path}.{key}")

    def region(self, d, path: str) -> S.BufferRegion:
        buf = self.buffer(_field(d, "buffer", path, int), path + ".buffer")
        rg = _field(d, "region", path, list)
        _need(len(rg) == buf.ndim, path, f"region of buffer {buf.name} needs {buf.ndim} ranges")
        ranges = []
        for k, r in enumerate(rg):
            _need(isinstance(r, list) and len(r) == 2, f"{path}.region[{k}]", "a range is [min, extent]")
            ranges.append(S.Range(self.expr(r[0], f"{path}.region[{k}][0]"), self.expr(r[1], f"{path}.region[{k}][1]")))
        return S.BufferRegion(buf, tuple(ranges))

    # ------------------------------------------------------------------ statements
    def stmt(self, d, path: str, optional: bool = False):
        if d is None and optional:
            return None
        kind = _field(d, "kind", path, str)
        m = getattr(self, "_s_" + kind, None)
        _need(m is not None, path + ".kind", f"unknown statement kind {kind!r}")
        try:
            return m(d, path)
        except (TypeError, ValueError) as e:
            raise _Malformed(path, str(e)) from None

    def _s_SeqStmt(self, d, path):
        return S.SeqStmt(tuple(self.stmt(x, f"{path}.seq[{k}]") for k, x in enumerate(_field(d, "seq", path, list))))

    def _s_BufferStore(self, d, path):
        buf = self.buffer(_field(d, "buffer", path, int), path + ".buffer")
        idx = _field(d, "indices", path, list)
        _need(len(idx) == buf.ndim, path, f"store into {buf.name} needs {buf.ndim} indices")
        return S.BufferStore(buf, self.expr(d.get("value"), path + ".value"),
                             tuple(self.expr(x, f"{path}.indices[{k}]") for k, x in enumerate(idx)))

    def _s_Evaluate(self, d, path):
        return S.Evaluate(self.expr(d.get("value"), path + ".value"))

    def _s_IfThenElse(self, d, path):
        return S.IfThenElse(self.expr(d.get("condition"), path + ".condition"),
                            self.stmt(d.get("then_case"), path + ".then_case"),
                            self.stmt(d.get("else_case"), path + ".else_case", optional=True))

    def _s_For(self, d, path):
        kind = _field(d, "for_kind", path, str)
        _need(kind in S.FOR_KINDS, path + ".for_kind", f"unknown loop kind {kind!r}")
        return S.For(self.var(_field(d, "loop_var", path, int), path + ".loop_var"),
                     self.expr(d.get("min"), path + ".min"), self.expr(d.get("extent"), path + ".extent"), kind,
                     self.stmt(d.get("body"), path + ".body"), self.attrs(d, "annotations", path))

    def _s_Block(self, d, path):
        ivs = []
        for k, iv in enumerate(_field(d, "iter_vars", path, list)):
            p = f"{path}.iter_vars[{k}]"
            it = _field(iv, "iter_type", p, str)
            _need(it in S.ITER_TYPES, p + ".iter_type", f"unknown iteration type {it!r}")
            ivs.append(S.IterVar(self.var(_field(iv, "var", p, int), p + ".var"),
                                 S.Range(self.expr(iv.get("min"), p + ".min"), self.expr(iv.get("extent"), p + ".extent")),
                                 it))
        allocs = tuple(self.buffer(b, f"{path}.alloc_buffers[{k}]")
                       for k, b in enumerate(_field(d, "alloc_buffers", path, list)))
        return S.Block(_field(d, "name", path, str), ivs,
                       tuple(self.region(r, f"{path}.reads[{k}]") for k, r in enumerate(_field(d, "reads", path, list))),
                       tuple(self.region(r, f"{path}.writes[{k}]") for k, r in enumerate(_field(d, "writes", path, list))),
                       self.stmt(d.get("body"), path + ".body"), self.stmt(d.get("init"), path + ".init", optional=True),
                       allocs, self.attrs(d, "annotations", path))

    def _s_BlockRealize(self, d, path):
        values = tuple(self.expr(v, f"{path}.iter_values[{k}]") for k, v in enumerate(_field(d, "iter_values", path, list)))
        block = self.stmt(d.get("block"), path + ".block")
        _need(isinstance(block, S.Block), path + ".block", "expected a Block")
        return S.BlockRealize(values, self.expr(d.get("predicate"), path + ".predicate"), block)

    def _s_Allocate(self, d, path):
        return S.Allocate(self.buffer(_field(d, "buffer", path, int), path + ".buffer"),
                          self.stmt(d.get("body"), path + ".body"))

    # ------------------------------------------------------------------ top level
    def func(self, d, path: str) -> PrimFunc:
        params = [self.buffer(b, f"{path}.params[{k}]") for k, b in enumerate(_field(d, "params", path, list))]
        name = _field(d, "name", path, str, optional=True)
        try:
            return PrimFunc(params, self.stmt(d.get("body"), path + ".body"), self.attrs(d, "attrs", path),
                            name if name is not None else "main")
        except (TypeError, ValueError) as e:
            raise _Malformed(path, str(e)) from None

    def module(self, d, path: str) -> IRModule:
        fns = {}
        for k, item in enumerate(_field(d, "functions", path, list)):
            p = f"{path}.functions[{k}]"
            _need(isinstance(item, list) and len(item) == 2 and isinstance(item[0], str), p, "expected [name, function]")
            _need(item[0] not in fns, p, f"duplicate function name {item[0]!r}")
            fns[item[0]] = self.any(item[1], p + "[1]")
        return IRModule(fns, self.attrs(d, "attrs", path))

    def any(self, d, path: str):
        kind = _field(d, "kind", path, str)
        if kind == "PrimFunc":
            return self.func(d, path)
        if kind == "IRModule":
            return self.module(d, path)
        if kind == "Expr":
            return self.expr(d.get("value"), path + ".value")
        if kind == "Buffer":
            return self.buffer(d.get("buffer"), path + ".buffer")
        if kind == "BufferRegion":
            return self.region(d, path)
        if kind == "Range":
            return S.Range(self.expr(d.get("min"), path + ".min"), self.expr(d.get("extent"), path + ".extent"))
        if kind == "IterVar":
            it = _field(d, "iter_type", path, str)
            _need(it in S.ITER_TYPES, path + ".iter_type", f"unknown iteration type {it!r}")
            return S.IterVar(self.var(d.get("var"), path + ".var"),
                             S.Range(self.expr(d.get("min"), path + ".min"), self.expr(d.get("extent"), path + ".extent")), it)
        return self.stmt(d, path)


def from_json(doc):
    """Rebuild IR from ``to_json`` output. Malformed input raises ``ValueError`` naming where."""
    try:
        dec = Decoder(doc)
        return dec.any(dec.doc.get("root"), "$.root")
    except _Malformed as e:
        raise ValueError(f"malformed tunefarm IR JSON at {e.path}: {e.message}") from None
    except RecursionError:
        raise ValueError("malformed tunefarm IR JSON: nested too deeply") from None


def loads(text: str):
    if not isinstance(text, (str, bytes, bytearray)):
        raise TypeError(f"loads expects a string, got {type(text).__name__}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"malformed tunefarm IR JSON: {e}") from None
    return from_json(doc)
