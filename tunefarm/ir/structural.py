"""Structural equality, structural hash and workload keys.

All three are defined by one canonical form: the JSON encoding of ``serialize.py`` in canonical mode, where

* variables and buffers are numbered by their position of definition in a fixed traversal (parameters,
  then loop variables, block iteration variables and allocations in program order; free variables at their
  first use), so names never matter and two programs that differ only by renaming are equal
  (alpha-equivalence);
* dtypes, shapes, scopes, loop kinds, extents, annotations, attributes and block names are kept;
* a PrimFunc's own name is dropped (it is the module's key, or ``global_symbol``), nested statement
  sequences are flattened, dict keys sorted; functions of a module are compared by name.

``structural_equal(a, b)`` compares the canonical texts, and ``structural_hash`` hashes the same text, so
equal programs always hash equal.

``workload_key(func)`` is the sha256 (hex) of a version tag plus that canonical text with the
``global_symbol`` attribute removed too. It is stable across processes and machines because the text
contains only integers (definition indices, literal values), strings (dtypes, op names, block names,
attribute keys) and floats written by ``repr`` (shortest round-trip form, identical on every IEEE-754
platform); there is no Python ``hash``, object id, memory address or dict iteration order in it, and
``sha256`` is fixed. Changing the canonical form must bump ``WORKLOAD_KEY_VERSION``.
"""
from __future__ import annotations

import hashlib
import json

from .serialize import Encoder
from .stmt import Block, Stmt

WORKLOAD_KEY_VERSION = "tunefarm-workload-v1"


def _canonical(node, drop_global_symbol: bool = False, track: bool = False):
    enc = Encoder(canonical=True, drop_global_symbol=drop_global_symbol, track=track)
    doc = enc.document(node)
    return doc, enc


def _text(doc) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True)


def canonical_text(node, drop_global_symbol: bool = False) -> str:
    """The canonical, name-independent text of ``node`` that equality, hashing and workload keys use."""
    return _text(_canonical(node, drop_global_symbol)[0])


def _free_match(ea: Encoder, eb: Encoder) -> bool:
    """With ``map_free_vars=False`` free variables/buffers must be the very same objects."""
    for fa, fb in ((ea.free_vars, eb.free_vars), (ea.free_buffers, eb.free_buffers)):
        if len(fa) != len(fb):
            return False
        if any(ia != ib or va is not vb for (ia, va), (ib, vb) in zip(fa, fb)):
            return False
    return True


def structural_equal(a, b, map_free_vars: bool = True) -> bool:
    """True when ``a`` and ``b`` are the same program up to renaming of variables and buffers.

    Works on PrimFuncs, IRModules, statements, expressions, buffers and regions. Free variables (not defined
    inside the node, e.g. comparing two expressions) are matched by position when ``map_free_vars`` is
    true, and must be identical objects otherwise.
    """
    if a is b:
        return True
    da, ea = _canonical(a)
    db, eb = _canonical(b)
    if _text(da) != _text(db):
        return False
    return map_free_vars or _free_match(ea, eb)


def structural_hash(node) -> int:
    """A 64-bit hash consistent with ``structural_equal`` (and identical across processes)."""
    digest = hashlib.sha256(canonical_text(node).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def program_hash(func) -> str:
    """How the search and the database name a scheduled program: its structural hash, as text (two traces
    that schedule a workload into the same function share it, so the function is measured once)."""
    return str(structural_hash(func))


def workload_key(func) -> str:
    """Hex sha256 identifying a tuning workload: independent of names (variables, buffers, the function's
    name and ``global_symbol``), the same in every process and on every machine."""
    text = canonical_text(func, drop_global_symbol=True)
    return hashlib.sha256(f"{WORKLOAD_KEY_VERSION}\n{text}".encode()).hexdigest()


# -----------------------------------------------------------------------------------------------------------
# readable differences
# -----------------------------------------------------------------------------------------------------------
def assert_structural_equal(a, b, map_free_vars: bool = True) -> None:
    """Raise ``AssertionError`` describing the first difference between ``a`` and ``b``."""
    if a is b:
        return
    da, ea = _canonical(a, track=True)
    db, eb = _canonical(b, track=True)
    if _text(da) == _text(db):
        if map_free_vars or _free_match(ea, eb):
            return
        raise AssertionError("structurally different: same shape, but free variables/buffers are different "
                             f"objects (lhs {[v for _, v in ea.free_vars + ea.free_buffers]}, "
                             f"rhs {[v for _, v in eb.free_vars + eb.free_buffers]})")
    path, va, vb, ctx_a, ctx_b = _first_difference(da, db, "$", [], [])
    where = _readable_path(ctx_a, ea)
    if path.startswith(("$.buffers[", "$.vars[")):
        table, rest = path[2:].split("[", 1)
        idx, field = rest.split("]", 1)
        objs = ea.buf_objs if table == "buffers" else ea.var_objs
        where = f"{table[:-1]} #{idx} (`{objs[int(idx)].name}` in lhs){field.replace('.', ' / ', 1)}"
    lines = [f"structurally different at {where}:", f"  lhs: {_show(va, ea, path)}", f"  rhs: {_show(vb, eb, path)}"]
    for label, stack, enc in (("lhs", ctx_a, ea), ("rhs", ctx_b, eb)):
        nodes = _context_nodes(stack, enc)
        if nodes:
            lines.append(f"  in {label}:")
            for node in nodes:
                lines.extend("    | " + ln for ln in _snippet(node).splitlines())
    raise AssertionError("\n".join(lines))


def _readable_path(stack, enc: Encoder) -> str:
    """``for i / for j / block "C" / iter_vars[2].extent`` from the documents on the path."""
    parts = []
    for frag in stack:
        if isinstance(frag, dict):
            kind = frag.get("kind")
            if kind == "For" and isinstance(frag.get("loop_var"), int) and frag["loop_var"] < len(enc.var_objs):
                parts.append(f"for {enc.var_objs[frag['loop_var']].name}")
            elif kind == "Block":
                parts.append(f"block {json.dumps(frag.get('name'))}")
            elif kind in ("PrimFunc", "IRModule"):
                parts.append(kind)
    return " / ".join(parts + [stack[-1] if isinstance(stack[-1], str) else ""]).rstrip(" /") or "$"


def _first_difference(a, b, path, stack_a, stack_b):
    """The first differing leaf in program order (dict keys in encoding order), with the documents above it;
    the last element of each stack is the field path inside the nearest node."""
    stack_a = stack_a + [a]
    stack_b = stack_b + [b]
    if type(a) is not type(b):
        return path, a, b, stack_a + [path], stack_b + [path]
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}", a.get(k, "<missing>"), b.get(k, "<missing>"), stack_a + [k], stack_b + [k]
            if _text(a[k]) != _text(b[k]):
                return _first_difference(a[k], b[k], f"{path}.{k}", stack_a, stack_b)
    elif isinstance(a, list):
        if len(a) != len(b):
            return f"{path} (length {len(a)} vs {len(b)})", a, b, stack_a + [path], stack_b + [path]
        for i, (x, y) in enumerate(zip(a, b)):
            if _text(x) != _text(y):
                return _first_difference(x, y, f"{path}[{i}]", stack_a, stack_b)
    return path, a, b, stack_a + [path.rsplit(".", 1)[-1]], stack_b + [path.rsplit(".", 1)[-1]]


def _context_nodes(stack, enc: Encoder) -> list:
    """The innermost IR node on the path, and the innermost statement around it if that is a different one."""
    nodes = [enc.origin[id(f)] for f in stack if not isinstance(f, str) and id(f) in enc.origin]
    if not nodes:
        return []
    out = [nodes[-1]]
    stmt = next((n for n in reversed(nodes) if isinstance(n, Stmt) and not isinstance(n, Block)), None)
    if stmt is not None and stmt is not nodes[-1] and not hasattr(nodes[-1], "params"):
        out.append(stmt)
    return out


def _snippet(node, limit: int = 12) -> str:
    try:
        text = repr(node)
    except Exception as e:  # printing must never hide the real difference
        text = f"<unprintable {type(node).__name__}: {e}>"
    lines = text.splitlines()
    if len(lines) > limit:
        lines = lines[:limit] + ["..."]
    return "\n".join(lines)


def _show(v, enc: Encoder, path: str) -> str:
    text = _text(v)
    if len(text) > 200:
        text = text[:197] + "..."
    if isinstance(v, list) and len(v) == 2 and v[0] == "var" and isinstance(v[1], int) and v[1] < len(enc.var_objs):
        return f"{text} (variable `{enc.var_objs[v[1]].name}`)"
    if path.endswith(".buffer") and isinstance(v, int) and v < len(enc.buf_objs):
        return f"{text} (buffer `{enc.buf_objs[v].name}`)"
    if path.startswith("$.vars[") or path.startswith("$.buffers["):
        idx = int(path.split("[", 1)[1].split("]", 1)[0])
        objs = enc.var_objs if path.startswith("$.vars[") else enc.buf_objs
        if idx < len(objs):
            return f"{text} (`{objs[idx].name}`)"
    return text
