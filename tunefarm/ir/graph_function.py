"""Graph functions: parameters, dataflow blocks of bindings, and a returned value."""
from __future__ import annotations

from .graph_expr import Call, GraphExpr, GraphVar
from .graph_printer import function_metadata, function_to_script


class Binding:
    __slots__ = ("var", "value")

    def __init__(self, var: GraphVar, value: GraphExpr):
        self.var = var
        self.value = value


class DataflowBlock:
    """Side-effect-free bindings; ``outputs`` are the vars visible after the block (``R.output``)."""

    __slots__ = ("bindings", "outputs")

    def __init__(self, bindings, outputs=()):
        self.bindings = tuple(bindings)
        self.outputs = tuple(outputs)


class Function:
    """``@R.function``: ``params -> ret`` through ``blocks``. ``attrs`` may name the global symbol."""

    def __init__(self, name: str, params, blocks, ret: GraphExpr, attrs: dict | None = None):
        self.name = name
        self.params = tuple(params)
        self.blocks = tuple(blocks)
        self.ret = ret
        self.attrs = dict(attrs or {})

    def bindings(self):
        for b in self.blocks:
            yield from b.bindings

    def calls(self):
        for b in self.bindings():
            if isinstance(b.value, Call):
                yield b.value

    def replace(self, **changes) -> "Function":
        f = Function(self.name, self.params, self.blocks, self.ret, self.attrs)
        for k, v in changes.items():
            setattr(f, k, v)
        return f

    def script(self, constants: list | None = None) -> str:
        """The function as script text; a module printing several functions passes one ``constants`` list so
        ``metadata["relax.expr.Constant"][i]`` numbers them module-wide."""
        return function_to_script(self, constants=constants)

    def show(self) -> None:
        print(self.script())

    def metadata(self) -> dict:
        """The bound constants as the printed script numbers them: ``{"relax.expr.Constant": [arrays]}``."""
        return function_metadata(self)

    def __str__(self) -> str:
        return self.script()

    __repr__ = __str__


def map_blocks(fn: Function, rebind, output=None) -> tuple:
    """``fn``'s dataflow blocks with every binding replaced by ``rebind(binding)`` (one binding or a list of
    them) and, when ``output`` is given, every block output by ``output(var)``: the loop of every graph pass
    that rewrites a function binding by binding."""
    blocks = []
    for blk in fn.blocks:
        bindings = []
        for b in blk.bindings:
            got = rebind(b)
            if isinstance(got, Binding):
                bindings.append(got)
            else:
                bindings.extend(got)
        blocks.append(DataflowBlock(bindings, blk.outputs if output is None else [output(o) for o in blk.outputs]))
    return tuple(blocks)


def map_args(value: GraphExpr, sub, attrs: dict | None = None, type_=None) -> GraphExpr:
    """A binding's value with ``sub`` applied to its arguments (a call) or to itself (a variable or constant);
    ``attrs`` and ``type_`` replace a call's own when given."""
    if isinstance(value, Call):
        return Call(value.op, [sub(a) for a in value.args], value.attrs if attrs is None else attrs,
                    value.type if type_ is None else type_)
    return sub(value)
