"""PrimFunc: a tensor program with buffer parameters (inputs first, then outputs: destination passing)."""
from __future__ import annotations

from .buffer import Buffer
from .expr import Var
from .stmt import Block, BlockRealize, Node, Stmt, TRUE


class PrimFunc(Node):
    """A function over buffers. ``body`` is normally ``BlockRealize(root block)``.

    Symbolic dimensions (``n = T.int64()``) are the free ``Var``s of the parameter shapes; at run time they
    are read from the shapes of the arrays passed in.
    """

    __slots__ = ("name", "params", "body", "attrs")
    _fields = ("body",)

    def __init__(self, params, body: Stmt, attrs: dict | None = None, name: str = "main"):
        self.params = tuple(params)
        for p in self.params:
            if not isinstance(p, Buffer):
                raise TypeError(f"PrimFunc parameters must be Buffers, got {type(p).__name__}")
        self.body = body
        self.attrs = dict(attrs or {})
        self.name = name

    @property
    def root_block(self) -> Block:
        if isinstance(self.body, BlockRealize):
            return self.body.block
        raise ValueError(f"function {self.name!r} has no root block")

    def symbolic_vars(self) -> list[Var]:
        out: list[Var] = []
        for p in self.params:
            for v in p.symbolic_vars():
                if v not in out:
                    out.append(v)
        return out

    def with_body(self, body: Stmt) -> "PrimFunc":
        return PrimFunc(self.params, body, self.attrs, self.name)

    def with_name(self, name: str) -> "PrimFunc":
        attrs = dict(self.attrs)
        if "global_symbol" in attrs:
            attrs["global_symbol"] = name
        return PrimFunc(self.params, self.body, attrs, name)

    @property
    def buffer_map(self) -> dict:
        """TVM's ``func.buffer_map[func.params[i]]``: here every parameter is its buffer."""
        return {p: p for p in self.params}

    def with_attr(self, key, value=None) -> "PrimFunc":
        """A copy with one attribute set, or several from a dict (TVM's ``func.with_attr``). ``global_symbol``
        is the function's name, so setting it renames the function too."""
        if isinstance(key, dict) and value is None:
            func = self
            for k, v in key.items():
                func = func.with_attr(k, v)
            return func
        if not isinstance(key, str):
            raise TypeError(f"attribute names are strings, got {type(key).__name__}")
        if key == "global_symbol":
            if not isinstance(value, str) or not value.isidentifier():
                raise ValueError(f"global_symbol must be an identifier, got {value!r}")
            return PrimFunc(self.params, self.body, {**self.attrs, key: value}, value)
        return PrimFunc(self.params, self.body, {**self.attrs, key: value}, self.name)

    def script(self) -> str:
        from .printer import func_to_script  # cycle: printer imports this module

        return func_to_script(self)

    def show(self) -> None:
        print(self.script())

    def __str__(self) -> str:
        return self.script()

    __repr__ = __str__


def wrap_root(body: Stmt, alloc_buffers=()) -> BlockRealize:
    """The ``root`` block every PrimFunc body is wrapped in (it owns the intermediate allocations)."""
    return BlockRealize((), TRUE, Block("root", (), (), (), body, None, tuple(alloc_buffers)))
