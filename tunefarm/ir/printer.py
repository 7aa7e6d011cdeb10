"""Print IR as TVMScript-style Python that ``tunefarm.script`` parses back (round trip).

Names are made unique per function (two loops both called ``i`` print as ``i`` and ``i_1``) so the text
always means exactly one program.
"""
from __future__ import annotations

import json

from . import expr as E
from . import stmt as S
from .buffer import Buffer

_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "+": 6, "-": 6, "*": 7, "/": 7, "//": 7, "%": 7}


class _Names:
    def __init__(self):
        self.names: dict = {}
        self.used: set = set()

    def define(self, obj, hint: str) -> str:
        if obj in self.names:
            return self.names[obj]
        base = hint if hint.isidentifier() else "v"
        name = base
        k = 1
        while name in self.used or name in ("T", "R", "I"):
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        self.names[obj] = name
        return name

    def get(self, obj, hint: str) -> str:
        return self.names.get(obj) or self.define(obj, hint)


def _lit(e) -> str:
    if isinstance(e, E.IntImm):
        if e.dtype == "int32":
            return str(e.value)
        if e.dtype == "bool":
            return f"T.bool({bool(e.value)})"
        return f"T.{e.dtype}({e.value})"
    v = e.value
    if v != v or v in (float("inf"), float("-inf")):
        s = repr(v)
        return f'T.{e.dtype}("{s}")'
    s = repr(v)
    if s.endswith(".0"):
        s = s[:-2]
    return f"T.{e.dtype}({s})"


class Printer:
    def __init__(self):
        self.names = _Names()
        self.lines: list[str] = []

    # ------------------------------------------------------------------ expressions
    def expr(self, e, prec: int = 0) -> str:
        if isinstance(e, E.Var):
            return self.names.get(e, e.name)
        if isinstance(e, (E.IntImm, E.FloatImm)):
            return _lit(e)
        if isinstance(e, E.Binary):
            if e.op in ("min", "max"):
                return f"T.{e.op}({self.expr(e.a)}, {self.expr(e.b)})"
            p = _PREC[e.op]
            s = f"{self.expr(e.a, p)} {e.op} {self.expr(e.b, p + 1)}"
            return f"({s})" if p < prec or (p == 4 and prec == 4) else s
        if isinstance(e, E.Not):
            s = f"not {self.expr(e.a, 3)}"
            return f"({s})" if prec > 3 else s
        if isinstance(e, E.Select):
            return f"T.Select({self.expr(e.cond)}, {self.expr(e.true_value)}, {self.expr(e.false_value)})"
        if isinstance(e, E.Cast):
            return f'T.Cast("{e.dtype}", {self.expr(e.value)})'
        if isinstance(e, E.Call):
            return f"T.{e.op}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, E.BufferLoad):
            return self.access(e.buffer, e.indices)
        raise TypeError(f"cannot print {type(e).__name__}")

    def access(self, buf: Buffer, indices) -> str:
        name = self.names.get(buf, buf.name)
        return f"{name}[{', '.join(self.expr(i) for i in indices)}]"

    def region(self, r: S.BufferRegion) -> str:
        name = self.names.get(r.buffer, r.buffer.name)
        parts = []
        for rg in r.region:
            if isinstance(rg.extent, E.IntImm) and rg.extent.value == 1:
                parts.append(self.expr(rg.min))
            else:
                parts.append(f"{self.expr(rg.min)}:{self.expr(E.add(rg.min, rg.extent))}")
        return f"{name}[{', '.join(parts)}]"

    def shape(self, shape) -> str:
        inner = ", ".join(self.expr(s) for s in shape)
        return f"({inner},)" if len(shape) == 1 else f"({inner})"

    def buffer_decl(self, b: Buffer) -> str:
        scope = "" if b.scope == "global" else f', scope="{b.scope}"'
        return f'{self.shape(b.shape)}, "{b.dtype}"{scope}'

    # ------------------------------------------------------------------ statements
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def stmt(self, s, indent: int) -> None:
        if isinstance(s, S.SeqStmt):
            if not s.seq:
                self.emit(indent, "T.evaluate(0)")
            for x in s.seq:
                self.stmt(x, indent)
        elif isinstance(s, S.BufferStore):
            self.emit(indent, f"{self.access(s.buffer, s.indices)} = {self.expr(s.value)}")
        elif isinstance(s, S.For):
            self.for_(s, indent)
        elif isinstance(s, S.BlockRealize):
            self.block(s, indent)
        elif isinstance(s, S.Block):
            self.block(S.BlockRealize([v.var for v in s.iter_vars], S.TRUE, s), indent)
        elif isinstance(s, S.IfThenElse):
            self.emit(indent, f"if {self.expr(s.condition)}:")
            self.stmt(s.then_case, indent + 1)
            if s.else_case is not None:
                self.emit(indent, "else:")
                self.stmt(s.else_case, indent + 1)
        elif isinstance(s, S.Allocate):
            name = self.names.define(s.buffer, s.buffer.name)
            self.emit(indent, f"{name} = T.alloc_buffer({self.buffer_decl(s.buffer)})")
            self.stmt(s.body, indent)
        elif isinstance(s, S.Evaluate):
            self.emit(indent, f"T.evaluate({self.expr(s.value)})")
        else:
            raise TypeError(f"cannot print {type(s).__name__}")

    def for_(self, s: S.For, indent: int) -> None:
        # fold directly nested plain serial loops into one T.grid
        if s.kind == "serial" and not s.annotations and E.IntImm is type(s.min) and s.min.value == 0:
            loops = [s]
            body = s.body
            while (isinstance(body, S.For) and body.kind == "serial" and not body.annotations
                   and isinstance(body.min, E.IntImm) and body.min.value == 0):
                loops.append(body)
                body = body.body
            if len(loops) > 1:
                names = [self.names.define(l.loop_var, l.loop_var.name) for l in loops]
                exts = ", ".join(self.expr(l.extent) for l in loops)
                self.emit(indent, f"for {', '.join(names)} in T.grid({exts}):")
                self.stmt(body, indent + 1)
                return
        name = self.names.define(s.loop_var, s.loop_var.name)
        fn = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorized", "unrolled": "unroll"}[s.kind]
        if isinstance(s.min, E.IntImm) and s.min.value == 0:
            rng = self.expr(s.extent)
        else:
            rng = f"{self.expr(s.min)}, {self.expr(E.add(s.min, s.extent))}"
        ann = f", annotations={json.dumps(s.annotations, sort_keys=True)}" if s.annotations else ""
        if fn == "serial" and not ann and s.loop_var.dtype == "int32":
            self.emit(indent, f"for {name} in range({rng}):")
        else:
            self.emit(indent, f"for {name} in T.{fn}({rng}{ann}):")
        self.stmt(s.body, indent + 1)

    def block(self, r: S.BlockRealize, indent: int) -> None:
        b = r.block
        self.emit(indent, f'with T.block("{b.name}"):')
        ind = indent + 1
        ivs = b.iter_vars
        names = [self.names.define(iv.var, iv.var.name) for iv in ivs]
        simple = bool(ivs) and all(
            isinstance(v, E.Var) and isinstance(iv.dom.min, E.IntImm) and iv.dom.min.value == 0
            for iv, v in zip(ivs, r.iter_values))
        if simple and len(ivs) > 1:
            kinds = "".join(iv.iter_type for iv in ivs)
            vals = ", ".join(self.expr(v) for v in r.iter_values)
            self.emit(ind, f'{", ".join(names)} = T.axis.remap("{kinds}", [{vals}])')
        else:
            for iv, n, v in zip(ivs, names, r.iter_values):
                kind = "spatial" if iv.iter_type == "S" else "reduce"
                if isinstance(iv.dom.min, E.IntImm) and iv.dom.min.value == 0:
                    dom = self.expr(iv.dom.extent)
                else:
                    dom = f"({self.expr(iv.dom.min)}, {self.expr(E.add(iv.dom.min, iv.dom.extent))})"
                self.emit(ind, f"{n} = T.axis.{kind}({dom}, {self.expr(v)})")
        if not (isinstance(r.predicate, E.IntImm) and r.predicate.value):
            self.emit(ind, f"T.where({self.expr(r.predicate)})")
        if b.name != "root" or b.reads or b.writes:
            self.emit(ind, f"T.reads({', '.join(self.region(x) for x in b.reads)})")
            self.emit(ind, f"T.writes({', '.join(self.region(x) for x in b.writes)})")
        if b.annotations:
            self.emit(ind, f"T.block_attr({json.dumps(b.annotations, sort_keys=True)})")
        for buf in b.alloc_buffers:
            n = self.names.define(buf, buf.name)
            self.emit(ind, f"{n} = T.alloc_buffer({self.buffer_decl(buf)})")
        if b.init is not None:
            self.emit(ind, "with T.init():")
            self.stmt(b.init, ind + 1)
        self.stmt(b.body, ind)

    # ------------------------------------------------------------------ functions
    def func(self, f, indent: int = 0, name: str | None = None) -> None:
        sym = f.symbolic_vars()
        params = []
        for p in f.params:
            n = self.names.define(p, p.name)
            if sym:
                params.append(f"{self.names.define(('handle', p), 'var_' + n)}: T.handle")
            else:
                params.append(f"{n}: T.Buffer({self.buffer_decl(p)})")
        self.emit(indent, "@T.prim_func")
        self.emit(indent, f"def {name or f.name}({', '.join(params)}):")
        ind = indent + 1
        if f.attrs:
            self.emit(ind, f"T.func_attr({_attrs_literal(f.attrs)})")
        if sym:
            for v in sym:
                self.emit(ind, f"{self.names.define(v, v.name)} = T.{v.dtype}()")
            for p in f.params:
                self.emit(ind, f"{self.names.get(p, p.name)} = T.match_buffer("
                               f"{self.names.get(('handle', p), p.name)}, {self.buffer_decl(p)})")
        body = f.body
        if isinstance(body, S.BlockRealize) and body.block.name == "root" and not body.block.iter_vars:
            root = body.block
            if root.annotations or root.init is not None:
                self.stmt(body, ind)
                return
            for buf in root.alloc_buffers:
                n = self.names.define(buf, buf.name)
                self.emit(ind, f"{n} = T.alloc_buffer({self.buffer_decl(buf)})")
            self.stmt(root.body, ind)
        else:
            self.stmt(body, ind)


def _attrs_literal(attrs: dict) -> str:
    items = []
    for k, v in attrs.items():
        items.append(f"{json.dumps(k)}: {_py_literal(v)}")
    return "{" + ", ".join(items) + "}"


def _py_literal(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_py_literal(x) for x in v) + "]"
    if isinstance(v, dict):
        return _attrs_literal(v)
    return json.dumps(str(v))


def expr_to_str(e) -> str:
    return Printer().expr(e)


def stmt_to_str(s) -> str:
    p = Printer()
    if isinstance(s, S.Stmt):
        p.stmt(s, 0)
    elif isinstance(s, S.Range):
        return f"Range({p.expr(s.min)}, {p.expr(s.extent)})"
    elif isinstance(s, S.IterVar):
        return f"IterVar({p.expr(s.var)}, {s.iter_type}, [{p.expr(s.dom.min)}, +{p.expr(s.dom.extent)}))"
    elif isinstance(s, S.BufferRegion):
        return p.region(s)
    else:
        from .function import PrimFunc

        if isinstance(s, PrimFunc):
            return func_to_script(s)
        return object.__repr__(s)
    return "\n".join(p.lines)


def func_to_script(f) -> str:
    p = Printer()
    p.lines.append("# from tunefarm.script import T")
    p.lines.append("")
    p.func(f)
    return "\n".join(p.lines) + "\n"


def module_to_script(mod) -> str:
    from .function import PrimFunc

    lines = ["# from tunefarm.script import T, ir_module", "", "@ir_module", "class Module:"]
    for name, f in mod.functions.items():
        if isinstance(f, PrimFunc):
            p = Printer()
            p.func(f, 1, name)
            lines.extend(p.lines)
        else:
            text = f.script() if hasattr(f, "script") else repr(f)
            lines.extend("    " + ln for ln in text.splitlines())
        lines.append("")
    return "\n".join(lines)
