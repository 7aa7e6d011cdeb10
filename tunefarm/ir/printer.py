"""Print IR as TVMScript that ``tunefarm.script.from_source`` parses back to a structurally equal program.

Round trip is the contract, so the printer writes exactly what the parser will read back:

* names are unique among the names visible at a point (a second loop ``i`` in a sibling nest may reuse
  ``i``; a nested one becomes ``i_1``), so the text means exactly one program;
* literals are written bare only where the parser gives them back the same dtype (``vi + 1`` when ``vi`` is
  int32; otherwise ``T.int64(1)``), float literals always typed (``T.float32(0)``);
* a range ``[min, min + extent)`` is written ``lo:hi`` with ``hi`` spelled ``lo + extent`` when it is not a
  constant, which the parser reads back as that exact extent;
* block regions are always printed (``T.reads`` / ``T.writes``), never re-inferred;
* the implicit ``root`` block is left out when it carries nothing but allocations.

Lowered-only statements use ``with T.allocate(shape, dtype, scope=...) as buf:``.
"""
from __future__ import annotations

import json
import keyword
import math

from . import expr as E
from . import stmt as S
from .buffer import Buffer
from .function import PrimFunc
from .functor import collect_vars, post_order_visit, uses_var
from .metadata import OMITTED, metadata_lines
from .regions import same_expr
from .stmt_functor import StmtFunctor, is_empty_stmt

_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "+": 6, "-": 6, "*": 7, "/": 7, "//": 7, "%": 7}
_RESERVED = frozenset({"T", "I", "R", "range", "ir_module", "tvm", "tunefarm"})
_LOOP_FN = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorized", "unrolled": "unroll"}


def _is_lit(e) -> bool:
    return isinstance(e, (E.IntImm, E.FloatImm))


def _float_text(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        return f'"{v!r}"'
    s = repr(v)
    if s.endswith(".0") and not (v == 0 and math.copysign(1.0, v) < 0):
        s = s[:-2]
    return s


def lit(e, typed: bool = False) -> str:
    """A literal; ``typed=False`` writes int32 integers bare (how the parser reads a bare integer)."""
    if isinstance(e, E.IntImm):
        if e.dtype == "bool":
            return f"T.bool({bool(e.value)})"
        if e.dtype == "int32" and not typed:
            return str(e.value)
        return f"T.{e.dtype}({e.value})"
    return f"T.{e.dtype}({_float_text(e.value)})"


class _Names:
    """Object -> name, unique among the names visible in the enclosing scopes."""

    def __init__(self):
        self.names: dict = {}
        self.scopes: list[list] = [[]]
        self.visible: dict[str, int] = {}

    def push(self) -> None:
        self.scopes.append([])

    def pop(self) -> None:
        for obj in self.scopes.pop():
            name = self.names.pop(obj, None)
            if name is not None:
                self.visible[name] -= 1
                if not self.visible[name]:
                    del self.visible[name]

    def define(self, obj, hint: str) -> str:
        if obj in self.names:
            return self.names[obj]
        base = hint if hint.isidentifier() and not keyword.iskeyword(hint) else "v"
        if base in _RESERVED:
            base = base + "_"
        name = base
        k = 1
        while name in self.visible:
            name = f"{base}_{k}"
            k += 1
        self.visible[name] = self.visible.get(name, 0) + 1
        self.names[obj] = name
        self.scopes[-1].append(obj)
        return name

    def get(self, obj, hint: str) -> str:
        return self.names.get(obj) or self.define(obj, hint)


class Printer(StmtFunctor):
    def __init__(self):
        self.names = _Names()
        self.lines: list[str] = []
        self.loops: dict = {}  # loop var -> For, for loops enclosing the current point

    # ------------------------------------------------------------------ expressions
    def expr(self, e, prec: int = 0) -> str:
        """``e`` in a context where a bare integer is read as int32 (indices, extents, bindings...)."""
        if _is_lit(e):
            return lit(e)
        if isinstance(e, E.Var):
            return self.names.get(e, e.name)
        if isinstance(e, E.Binary):
            if e.op in ("min", "max"):
                return f"T.{e.op}({self.operand(e.a, e.b)}, {self.operand(e.b, e.a)})"
            p = _PREC[e.op]
            if e.op in ("and", "or"):
                s = f"{self.logic_operand(e.a, p)} {e.op} {self.logic_operand(e.b, p + 1)}"
            else:
                s = f"{self.operand(e.a, e.b, p)} {e.op} {self.operand(e.b, e.a, p + 1)}"
            return f"({s})" if p < prec or (p == 4 and prec == 4) else s
        if isinstance(e, E.Not):
            s = f"not {self.logic_operand(e.a, 3)}"
            return f"({s})" if prec > 3 else s
        if isinstance(e, E.Select):
            return (f"T.Select({self.typed_if_lit(e.cond)}, {self.operand(e.true_value, e.false_value)}, "
                    f"{self.operand(e.false_value, e.true_value)})")
        if isinstance(e, E.Cast):
            return f'T.Cast("{e.dtype}", {self.expr(e.value)})'
        if isinstance(e, E.Call):
            return f"T.{e.op}({', '.join(self.typed_if_lit(a) for a in e.args)})"
        if isinstance(e, E.BufferLoad):
            return self.access(e.buffer, e.indices)
        raise TypeError(f"cannot print {type(e).__name__}")

    def operand(self, e, other, prec: int = 0) -> str:
        """An operand next to ``other``: a bare Python literal would take ``other``'s dtype."""
        if _is_lit(e):
            bare_ok = (isinstance(e, E.IntImm) and e.dtype != "bool" and not _is_lit(other)
                       and e.dtype == other.dtype)
            return str(e.value) if bare_ok else lit(e, typed=True)
        return self.expr(e, prec)

    def logic_operand(self, e, prec: int) -> str:
        return lit(e, typed=True) if _is_lit(e) else self.expr(e, prec)

    def typed_if_lit(self, e) -> str:
        return lit(e, typed=True) if _is_lit(e) else self.expr(e)

    def access(self, buf: Buffer, indices) -> str:
        name = self.names.get(buf, buf.name)
        return f"{name}[{', '.join(self.expr(i) for i in indices)}]"

    def bounds(self, lo, ext, sep: str) -> str:
        """``[lo, lo + ext)`` as ``lo<sep>hi`` in the form the parser turns back into exactly ``ext``."""
        if isinstance(lo, E.IntImm) and isinstance(ext, E.IntImm):
            return f"{lit(lo)}{sep}{lit(E.IntImm(lo.value + ext.value, ext.dtype))}"
        if isinstance(lo, E.IntImm) and lo.value == 0 and not (
                isinstance(ext, E.Binary) and ext.op == "+" and same_expr(ext.a, lo)) and not isinstance(ext, E.IntImm):
            return f"{lit(lo)}{sep}{self.expr(ext)}"
        hi = f"{self.operand(lo, ext, 6)} + {self.operand(ext, lo, 7)}"
        return f"{self.expr(lo)}{sep}{hi}"

    def region(self, r: S.BufferRegion) -> str:
        name = self.names.get(r.buffer, r.buffer.name)
        parts = []
        for rg in r.region:
            if isinstance(rg.extent, E.IntImm) and rg.extent.value == 1 and rg.extent.dtype == rg.min.dtype:
                parts.append(self.expr(rg.min))
            else:
                parts.append(self.bounds(rg.min, rg.extent, ":"))
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

    def body(self, s, indent: int) -> None:
        """A statement list in a new name scope (``pass`` when empty)."""
        self.names.push()
        if is_empty_stmt(s):
            self.emit(indent, "pass")
        else:
            self.visit(s, indent)
        self.names.pop()

    # one ``visit_<Kind>(s, indent)`` per statement kind
    def visit_SeqStmt(self, s: S.SeqStmt, indent: int) -> None:
        if not s.seq:
            self.emit(indent, "pass")
        for x in s.seq:
            self.visit(x, indent)

    def visit_BufferStore(self, s: S.BufferStore, indent: int) -> None:
        self.emit(indent, f"{self.access(s.buffer, s.indices)} = {self.store_value(s)}")

    def visit_Block(self, s: S.Block, indent: int) -> None:
        self.block(S.BlockRealize([v.var for v in s.iter_vars], S.TRUE, s), indent)

    def visit_IfThenElse(self, s: S.IfThenElse, indent: int) -> None:
        self.if_(s, indent, "if")

    def visit_Allocate(self, s: S.Allocate, indent: int) -> None:
        self.names.push()
        name = self.names.define(s.buffer, s.buffer.name)
        self.emit(indent, f"with T.allocate({self.buffer_decl(s.buffer)}) as {name}:")
        self.body(s.body, indent + 1)
        self.names.pop()

    def visit_Evaluate(self, s: S.Evaluate, indent: int) -> None:
        self.emit(indent, f"T.evaluate({self.expr(s.value)})")

    def generic_visit(self, s, indent: int) -> None:
        raise TypeError(f"cannot print {type(s).__name__}")

    def store_value(self, s: S.BufferStore) -> str:
        v = s.value
        if isinstance(v, E.IntImm) and v.dtype == s.buffer.dtype and v.dtype != "bool":
            return str(v.value)
        if _is_lit(v):
            return lit(v, typed=True)
        return self.expr(v)

    def if_(self, s: S.IfThenElse, indent: int, word: str) -> None:
        self.emit(indent, f"{word} {self.typed_if_lit(s.condition)}:")
        self.body(s.then_case, indent + 1)
        other = s.else_case
        if other is None:
            return
        if isinstance(other, S.IfThenElse):
            self.if_(other, indent, "elif")
        else:
            self.emit(indent, "else:")
            self.body(other, indent + 1)

    @staticmethod
    def _plain_serial(s) -> bool:
        return (isinstance(s, S.For) and s.kind == "serial" and not s.annotations and isinstance(s.min, E.IntImm)
                and s.min.value == 0 and s.min.dtype == s.loop_var.dtype == s.extent.dtype)

    def visit_For(self, s: S.For, indent: int) -> None:
        self.names.push()
        loops = [s]
        if self._plain_serial(s):
            body = s.body
            while self._plain_serial(body) and not uses_var(body.extent, {l.loop_var for l in loops}):
                loops.append(body)
                body = body.body
        if len(loops) > 1:
            exts = ", ".join(self.expr(l.extent) for l in loops)
            names = [self.names.define(l.loop_var, l.loop_var.name) for l in loops]
            self.emit(indent, f"for {', '.join(names)} in T.grid({exts}):")
        else:
            one_arg = isinstance(s.min, E.IntImm) and s.min.value == 0 and s.min.dtype == s.loop_var.dtype
            rng = self.expr(s.extent) if one_arg else self.bounds(s.min, s.extent, ", ")
            name = self.names.define(s.loop_var, s.loop_var.name)
            kw = ""
            if s.annotations:
                kw += f", annotations={_attrs_literal(s.annotations, self)}"
            if s.loop_var.dtype != s.extent.dtype:
                kw += f', dtype="{s.loop_var.dtype}"'
            if s.kind == "serial" and not kw and one_arg:
                self.emit(indent, f"for {name} in range({rng}):")
            else:
                self.emit(indent, f"for {name} in T.{_LOOP_FN[s.kind]}({rng}{kw}):")
        for l in loops:
            self.loops[l.loop_var] = l
        self.body(loops[-1].body, indent + 1)
        for l in loops:
            self.loops.pop(l.loop_var, None)
        self.names.pop()

    def _remappable(self, iv: S.IterVar, value) -> bool:
        loop = self.loops.get(value) if isinstance(value, E.Var) else None
        return (loop is not None and iv.var.dtype == value.dtype and same_expr(iv.dom.min, loop.min)
                and same_expr(iv.dom.extent, loop.extent))

    def visit_BlockRealize(self, r: S.BlockRealize, indent: int) -> None:
        self.block(r, indent)

    def block(self, r: S.BlockRealize, indent: int, root_at_top: bool = False) -> None:
        b = r.block
        self.emit(indent, f"with T.block({json.dumps(b.name)}):")
        ind = indent + 1
        self.names.push()
        ivs = b.iter_vars
        names = [self.names.define(iv.var, iv.var.name) for iv in ivs]
        if len(ivs) > 1 and all(self._remappable(iv, v) for iv, v in zip(ivs, r.iter_values)):
            kinds = "".join(iv.iter_type for iv in ivs)
            vals = ", ".join(self.expr(v) for v in r.iter_values)
            self.emit(ind, f'{", ".join(names)} = T.axis.remap("{kinds}", [{vals}])')
        else:
            for iv, n, v in zip(ivs, names, r.iter_values):
                kind = "spatial" if iv.iter_type == "S" else "reduce"
                dmin, dext = iv.dom.min, iv.dom.extent
                if isinstance(dmin, E.IntImm) and dmin.value == 0 and dmin.dtype == dext.dtype:
                    dom = self.expr(dext)
                else:
                    dom = f"({self.bounds(dmin, dext, ', ')})"
                dt = f', dtype="{iv.var.dtype}"' if iv.var.dtype != v.dtype else ""
                self.emit(ind, f"{n} = T.axis.{kind}({dom}, {self.expr(v)}{dt})")
        if not (isinstance(r.predicate, E.IntImm) and r.predicate.dtype == "bool" and r.predicate.value):
            self.emit(ind, f"T.where({self.typed_if_lit(r.predicate)})")
        if not root_at_top or b.reads or b.writes:
            self.emit(ind, f"T.reads({', '.join(self.region(x) for x in b.reads)})")
            self.emit(ind, f"T.writes({', '.join(self.region(x) for x in b.writes)})")
        if b.annotations:
            self.emit(ind, f"T.block_attr({_attrs_literal(b.annotations, self)})")
        for buf in b.alloc_buffers:
            n = self.names.define(buf, buf.name)
            self.emit(ind, f"{n} = T.alloc_buffer({self.buffer_decl(buf)})")
        if b.init is not None:
            self.emit(ind, "with T.init():")
            self.body(b.init, ind + 1)
        if is_empty_stmt(b.body):
            self.emit(ind, "pass")
        else:
            self.visit(b.body, ind)
        self.names.pop()

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
            self.emit(ind, f"T.func_attr({_attrs_literal(f.attrs, self)})")
        bound = _bound_vars(f.body)
        free = [v for v in _used_vars(f.body) if v not in bound and v not in sym]
        for v in sym + free:
            self.emit(ind, f"{self.names.define(v, v.name)} = T.{v.dtype}()")
        if sym:
            for p in f.params:
                self.emit(ind, f"{self.names.get(p, p.name)} = T.match_buffer("
                               f"{self.names.get(('handle', p), p.name)}, {self.buffer_decl(p)})")
        body = f.body
        if _elidable_root(body):
            root = body.block
            for buf in root.alloc_buffers:
                n = self.names.define(buf, buf.name)
                self.emit(ind, f"{n} = T.alloc_buffer({self.buffer_decl(buf)})")
            if is_empty_stmt(root.body):
                self.emit(ind, "pass")
            else:
                self.visit(root.body, ind)
        elif isinstance(body, S.BlockRealize) and body.block.name == "root" and not body.block.iter_vars:
            self.block(body, ind, root_at_top=True)
        else:
            self.visit(body, ind)


def _elidable_root(body) -> bool:
    if not isinstance(body, S.BlockRealize):
        return False
    b = body.block
    pred = body.predicate
    return (b.name == "root" and not b.iter_vars and not b.reads and not b.writes and not b.annotations
            and b.init is None and isinstance(pred, E.IntImm) and pred.dtype == "bool" and pred.value == 1)


def _used_vars(body) -> list:
    """Variables used in ``body``, including those in the shapes of buffers it allocates (first-use order)."""
    out = dict.fromkeys(collect_vars(body))

    def visit(s):
        bufs = s.alloc_buffers if isinstance(s, S.Block) else (s.buffer,) if isinstance(s, S.Allocate) else ()
        for b in bufs:
            for d in b.shape:
                out.update(dict.fromkeys(collect_vars(d)))

    post_order_visit(body, visit)
    return list(out)


def _bound_vars(body) -> set:
    out = set()

    def visit(s):
        if isinstance(s, S.For):
            out.add(s.loop_var)
        elif isinstance(s, S.Block):
            out.update(iv.var for iv in s.iter_vars)


    post_order_visit(body, visit)
    return out


def _attrs_literal(attrs: dict, printer: Printer | None = None) -> str:
    items = []
    for k, v in attrs.items():
        items.append(f"{json.dumps(k)}: {_py_literal(v, printer)}")
    return "{" + ", ".join(items) + "}"


def _py_literal(v, printer: Printer | None = None) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if v is None:
        return "None"
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise ValueError(f"cannot print the non-finite attribute value {v!r}")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_py_literal(x, printer) for x in v) + "]"
    if isinstance(v, tuple):
        inner = ", ".join(_py_literal(x, printer) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, dict):
        return _attrs_literal(v, printer)
    if isinstance(v, E.PrimExpr):
        p = printer or Printer()
        return lit(v, typed=True) if _is_lit(v) else p.expr(v)
    raise TypeError(f"cannot print attribute value of type {type(v).__name__}: {v!r}")


def expr_to_str(e) -> str:
    return Printer().expr(e)


def stmt_to_str(s) -> str:
    p = Printer()
    if isinstance(s, S.Stmt):
        p.visit(s, 0)
    elif isinstance(s, S.Range):
        return f"Range({p.expr(s.min)}, {p.expr(s.extent)})"
    elif isinstance(s, S.IterVar):
        return f"IterVar({p.expr(s.var)}, {s.iter_type}, [{p.expr(s.dom.min)}, +{p.expr(s.dom.extent)}))"
    elif isinstance(s, S.BufferRegion):
        return p.region(s)
    else:
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


def module_to_script(mod, show_meta: bool = False) -> str:
    """The module as script text. Bound arrays of its graph functions are numbered module-wide and, with
    ``show_meta``, printed before the module (``metadata``); else a closing comment says they were left out."""
    constants: list = []
    lines = ["@ir_module", "class Module:"]
    if mod.attrs:
        lines.append(f"    I.module_attrs({_attrs_literal(mod.attrs)})")
        lines.append("")
    for name, f in mod.functions.items():
        if isinstance(f, PrimFunc):
            p = Printer()
            p.func(f, 1, name)
            lines.extend(p.lines)
        else:
            text = f.script(constants=constants) if hasattr(f, "script") else repr(f)
            lines.extend("    " + ln if ln else ln for ln in text.splitlines())
        lines.append("")
    if len(lines) == 2:
        lines.append("    pass")
    header = ["# from tunefarm.script import I, T, ir_module", ""]
    if constants and show_meta:
        header += metadata_lines([getattr(c, "data", c) for c in constants]) + [""]
    elif constants:
        lines.append(OMITTED)
    return "\n".join(header + lines)
