"""IRModule: a named collection of functions (prim funcs, and graph functions: ``graph_function.Function``)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from .function import PrimFunc


class GlobalVar(str):
    """A module's reference to one of its functions (TVM's ``GlobalVar``): here simply the function's name."""

    __slots__ = ()

    @property
    def name_hint(self) -> str:
        return str(self)


class IRModule(Mapping):
    """Ordered mapping ``name -> function``. Immutable by convention: ``with_function`` returns a copy.

    The one exception is ``update_func``, TVM's way of swapping a tuned kernel into a model in place (the
    course does exactly that). It only replaces an entry of this module's own dict: other modules never share
    it, and analyses are cached on the (immutable) functions, not on modules.
    """

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

    @classmethod
    def from_expr(cls, func) -> "IRModule":
        """A module holding ``func`` alone, named by its ``global_symbol`` attribute (else ``main``), as in TVM."""
        name = func.attrs.get("global_symbol") or "main"
        if getattr(func, "name", name) != name and hasattr(func, "with_name"):
            func = func.with_name(name)
        return cls({name: func})

    def get_global_var(self, name: str) -> GlobalVar:
        """The reference ``update_func`` takes (raises KeyError naming the module's functions)."""
        if name not in self.functions:
            raise KeyError(f"module has no function {name!r}; it has {list(self.functions)}")
        return GlobalVar(name)

    def update_func(self, var, func) -> None:
        """Replace the function ``var`` (a ``GlobalVar`` or a name) in place; see the class docstring."""
        name = str(var)
        if name not in self.functions:
            raise KeyError(f"module has no function {name!r} to update; it has {list(self.functions)}")
        if getattr(func, "name", name) != name and hasattr(func, "with_name"):
            func = func.with_name(name)
        self.functions[name] = func

    def with_function(self, name: str, func) -> "IRModule":
        fns = dict(self.functions)
        fns[name] = func
        return IRModule(fns, self.attrs)

    def without(self, name: str) -> "IRModule":
        return IRModule({k: v for k, v in self.functions.items() if k != name}, self.attrs)

    def prim_funcs(self) -> dict:
        return {k: v for k, v in self.functions.items() if isinstance(v, PrimFunc)}

    def main_prim_func(self) -> PrimFunc | None:
        """The PrimFunc TVM takes from a module: the one named ``main``, else the only one; None if neither."""
        prims = self.prim_funcs()
        if "main" in prims:
            return prims["main"]
        return next(iter(prims.values())) if len(prims) == 1 else None

    def script(self, show_meta: bool = False) -> str:
        """The module as script text; bound constants are printed too with ``show_meta=True``."""
        from .printer import module_to_script  # on use: the printer loads numpy, the database imports this

        return module_to_script(self, show_meta)

    def show(self) -> None:
        print(self.script())

    def __str__(self) -> str:
        return self.script()

    __repr__ = __str__

    def __eq__(self, other):  # identity, like every IR node
        return self is other

    __hash__ = object.__hash__


def as_prim_func(func, what: str, error: type = ValueError) -> PrimFunc:
    """``func`` if it is a PrimFunc, else the one TVM takes from an IRModule (``main_prim_func``). ``what`` names
    the caller in messages; ``error`` is raised for a module without such a function."""
    if isinstance(func, PrimFunc):
        return func
    if isinstance(func, IRModule):
        main = func.main_prim_func()
        if main is not None:
            return main
        prims = func.prim_funcs()
        raise error(f"{what}: the module has {len(prims)} prim funcs ({', '.join(prims) or 'none'}); "
                    "pass one of them (or name it 'main')")
    raise TypeError(f"{what}: expected a PrimFunc or an IRModule, got {type(func).__name__}")
