"""IRModule: a named collection of functions (prim funcs, and graph functions from ``tunefarm.graph``)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping


class IRModule(Mapping):
    """Ordered mapping ``name -> function``. Immutable by convention: ``with_function`` returns a copy."""

    def __init__(self, functions: Mapping | None = None, attrs: dict | None = None):
        self.functions: dict = dict(functions or {})
        self.attrs = dict(attrs or {})

    def __getitem__(self, name: str):
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"module has no function {name!r}; it has {list(self.functions)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def with_function(self, name: str, func) -> "IRModule":
        fns = dict(self.functions)
        fns[name] = func
        return IRModule(fns, self.attrs)

    def without(self, name: str) -> "IRModule":
        return IRModule({k: v for k, v in self.functions.items() if k != name}, self.attrs)

    def prim_funcs(self) -> dict:
        from .function import PrimFunc

        return {k: v for k, v in self.functions.items() if isinstance(v, PrimFunc)}

    def script(self) -> str:
        from .printer import module_to_script

        return module_to_script(self)

    def show(self) -> None:
        print(self.script())

    def __str__(self) -> str:
        return self.script()

    __repr__ = __str__

    def __eq__(self, other):  # identity, like every IR node
        return self is other

    __hash__ = object.__hash__
