"""Blocks in ``@T.prim_func`` bodies: ``with T.block`` and what may only appear inside one.

``BlockParsing`` is the part of ``PrimFuncParser`` (``tir_parser.py``) that reads a block: its iteration
variables (``T.axis.*``, ``T.axis.remap``), the block-level directives (``T.reads``, ``T.writes``, ``T.where``,
``T.block_attr``, ``with T.init()``) and the other with-statement, ``with T.allocate``. A block's statements
are collected in a ``BlockFrame`` while its body is parsed; regions it does not declare are inferred.
"""
from __future__ import annotations

import ast

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.arith import simplify
from ..ir.buffer import Buffer
from ..ir.regions import infer_block_regions, same_expr
from .diagnostics import describe
from .expr_parser import literal_for


class BlockFrame:
    """What the statements of one ``with T.block`` body declared so far."""

    def __init__(self, name: str):
        self.name = name
        self.iter_vars: list[S.IterVar] = []
        self.bindings: list[E.PrimExpr] = []
        self.reads = None
        self.writes = None
        self.predicate = None
        self.annotations = None
        self.allocs: list[Buffer] = []
        self.init = None


def range_from_bounds(lo: E.PrimExpr, hi: E.PrimExpr) -> tuple[E.PrimExpr, E.PrimExpr]:
    """``(min, extent)`` of the half-open ``[lo, hi)``; ``hi`` written as ``lo + extent`` gives that extent."""
    if isinstance(lo, E.IntImm) and isinstance(hi, E.IntImm):
        return lo, E.IntImm(hi.value - lo.value, hi.dtype)
    if isinstance(hi, E.Binary) and hi.op == "+" and same_expr(hi.a, lo):
        return lo, hi.b
    if isinstance(lo, E.IntImm) and lo.value == 0:
        return lo, hi
    return lo, simplify(E.sub(hi, lo))


class ExplicitRoot:
    """A ``with T.block("root")`` written at the top of a function (used as the root, not nested in one)."""

    def __init__(self, realize):
        self.realize = realize


class BlockParsing:
    """Block-level statements, for ``PrimFuncParser`` (which supplies the source, scopes and expression parsing)."""

    def frame_for(self, node, ctx: str, what: str) -> BlockFrame:
        if ctx != "block" or not self.blocks:
            raise self.src.error(node, f"{what} must appear directly inside a `with T.block(...)` body",
                                 "misplaced-" + what)
        return self.blocks[-1]

    def _d_regions(self, call, ctx):
        name = self.t_name(call.func)
        frame = self.frame_for(call, ctx, f"T.{name}")
        if call.keywords:
            raise self.src.error(call, f"T.{name} takes regions only", name)
        regions = []
        for a in call.args:
            items = a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a]
            regions.extend(self.region(x) for x in items)
        if getattr(frame, name) is not None:
            raise self.src.error(call, f"T.{name} given twice in block {frame.name!r}", name)
        setattr(frame, name, tuple(regions))
        return None

    def _d_where(self, call, ctx):
        frame = self.frame_for(call, ctx, "T.where")
        pred = self.prim(self.one_arg(call, "where"))
        frame.predicate = pred if isinstance(pred, E.PrimExpr) else literal_for(bool(pred), "bool")
        return None

    def _d_block_attr(self, call, ctx):
        frame = self.frame_for(call, ctx, "T.block_attr")
        ann = self.literal(self.one_arg(call, "block_attr"))
        if not isinstance(ann, dict):
            raise self.src.error(call, "T.block_attr takes a dict", "block_attr")
        frame.annotations = {**(frame.annotations or {}), **ann}
        return None

    # ------------------------------------------------------------------ regions
    def region(self, node) -> S.BufferRegion:
        if isinstance(node, ast.Subscript):
            buf = self.expr(node.value)
            if not isinstance(buf, Buffer):
                raise self.src.error(node, f"`{describe(node.value)}` is not a buffer", "region")
            elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if len(elts) != buf.ndim:
                raise self.src.error(node, f"buffer {buf.name} has {buf.ndim} dimension(s), region has "
                                           f"{len(elts)}", "index-count")
            ranges = []
            for d, e in enumerate(elts):
                if isinstance(e, ast.Slice):
                    if e.step is not None:
                        raise self.src.error(e, "region slices cannot have a step", "slice-step")
                    lo = self.index(e.lower) if e.lower is not None else E.IntImm(0, "int32")
                    hi = self.index(e.upper) if e.upper is not None else buf.shape[d]
                    ranges.append(S.Range(*range_from_bounds(lo, hi)))
                else:
                    i = self.index(e)
                    ranges.append(S.Range(i, E.IntImm(1, i.dtype)))
            return S.BufferRegion(buf, tuple(ranges))
        buf = self.expr(node)
        if isinstance(buf, Buffer):
            return S.BufferRegion.full(buf)
        raise self.src.error(node, f"expected a buffer region such as A[vi, 0:128], got `{describe(node)}`",
                             "region")

    # ------------------------------------------------------------------ block iteration variables
    def axis(self, name: str, call: ast.Call, kind: str, ctx: str):
        frame = self.frame_for(call, ctx, "T.axis")
        kw = {k.arg: k.value for k in call.keywords}
        if set(kw) - {"dtype"} or len(call.args) != 2:
            raise self.src.error(call, f"T.axis.{kind} takes (dom, binding) and optionally dtype=", "axis")
        dom_node, bind_node = call.args
        if isinstance(dom_node, ast.Tuple):
            if len(dom_node.elts) != 2:
                raise self.src.error(dom_node, "an axis domain is an extent or a (min, max) pair", "axis-dom")
            dmin, dext = range_from_bounds(self.index(dom_node.elts[0]), self.index(dom_node.elts[1]))
        else:
            dext = self.index(dom_node)
            dmin = E.IntImm(0, dext.dtype)
        binding = self.prim(bind_node)
        if not isinstance(binding, E.PrimExpr):
            binding = self.index(bind_node)
        dtype = self.dtype_arg(kw["dtype"]) if "dtype" in kw else binding.dtype
        iv = S.IterVar(E.Var(name, dtype), S.Range(dmin, dext), "S" if kind in ("spatial", "S") else "R")
        frame.iter_vars.append(iv)
        frame.bindings.append(binding)
        self.bind(name, iv.var)
        return None

    def axis_remap(self, names: list, call: ast.Call, ctx: str):
        frame = self.frame_for(call, ctx, "T.axis.remap")
        if call.keywords or len(call.args) != 2:
            raise self.src.error(call, "T.axis.remap takes (kinds, [loop variables])", "axis.remap")
        kinds = self.expr(call.args[0])
        if not isinstance(kinds, str) or any(k not in "SR" for k in kinds):
            raise self.src.error(call.args[0], "T.axis.remap kinds must be a string of 'S' and 'R'", "axis.remap")
        lst = call.args[1]
        if not isinstance(lst, (ast.List, ast.Tuple)):
            raise self.src.error(lst, "T.axis.remap needs a list of loop variables", "axis.remap")
        if not (len(kinds) == len(lst.elts) == len(names)):
            raise self.src.error(call, f"T.axis.remap: {len(names)} names, {len(kinds)} kinds and "
                                       f"{len(lst.elts)} loop variables must agree", "axis.remap")
        for name, kind, e in zip(names, kinds, lst.elts):
            v = self.expr(e)
            if not isinstance(v, E.Var) or v not in self.loop_ranges:
                raise self.src.error(e, f"T.axis.remap binds loop variables only, got `{describe(e)}`",
                                     "axis.remap")
            lmin, lext = self.loop_ranges[v]
            iv = S.IterVar(E.Var(name, v.dtype), S.Range(lmin, lext), kind)
            frame.iter_vars.append(iv)
            frame.bindings.append(v)
            self.bind(name, iv.var)
        return None

    # ------------------------------------------------------------------ with-statements
    def with_(self, node: ast.With, ctx: str):
        if len(node.items) != 1:
            raise self.src.error(node, "one context manager per `with`", "with")
        item = node.items[0]
        call = item.context_expr
        tname = self.t_name(call.func) if isinstance(call, ast.Call) else None
        if tname == "block":
            if item.optional_vars is not None:
                raise self.src.error(node, "`with T.block(...) as x` is not supported", "block-as")
            return self.block(node, call, ctx)
        if tname == "init":
            frame = self.frame_for(call, ctx, "T.init()")
            if call.args or call.keywords or item.optional_vars is not None:
                raise self.src.error(call, "T.init() takes no arguments", "init")
            if frame.init is not None:
                raise self.src.error(call, f"block {frame.name!r} has two T.init() sections", "init")
            frame.init = self.scoped_body(node.body, "inner")
            return None
        if tname == "allocate":
            if not isinstance(item.optional_vars, ast.Name):
                raise self.src.error(node, "use `with T.allocate(shape, dtype, scope=...) as name:`", "allocate")
            buf = self.buffer_from_call(item.optional_vars.id, call, allow=("shape", "dtype", "scope"))
            self.scopes.append({item.optional_vars.id: buf})
            try:
                body = self.stmts(node.body, "inner")
            finally:
                self.scopes.pop()
            return S.Allocate(buf, S.seq(*body) if body else S.SeqStmt(()))
        raise self.src.error(node, f"unsupported `with {describe(call)}` (supported: T.block, T.init, "
                                   "T.allocate)", "with")

    def block(self, node: ast.With, call: ast.Call, ctx: str):
        if call.keywords or len(call.args) > 1:
            raise self.src.error(call, "T.block takes just a name", "block")
        name = self.expr(call.args[0]) if call.args else ""
        if not isinstance(name, str):
            raise self.src.error(call, "the block name must be a string", "block")
        frame = BlockFrame(name)
        self.blocks.append(frame)
        self.scopes.append({})
        try:
            body = self.stmts(node.body, "block")
        finally:
            self.scopes.pop()
            self.blocks.pop()
        explicit_root = ctx == "func" and name == "root" and not frame.iter_vars
        blk = S.Block(name, frame.iter_vars, frame.reads or (), frame.writes or (),
                      S.seq(*body) if body else S.SeqStmt(()), frame.init, frame.allocs, frame.annotations)
        if (frame.reads is None or frame.writes is None) and not explicit_root:
            reads, writes = infer_block_regions(blk)
            blk = blk.replace(reads=frame.reads if frame.reads is not None else reads,
                              writes=frame.writes if frame.writes is not None else writes)
        realize = S.BlockRealize(frame.bindings, frame.predicate if frame.predicate is not None else S.TRUE, blk)
        return ExplicitRoot(realize) if explicit_root else realize
