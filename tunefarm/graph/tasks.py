"""Task extraction: the distinct kernels of a model, each with how often the model calls it."""
from __future__ import annotations

import dataclasses

from ..ir.function import PrimFunc
from ..ir.graph_function import Function
from ..ir.module import IRModule
from ..ir.structural import workload_key
from .pipeline import entry_name, prepare


@dataclasses.dataclass
class Task:
    """One kernel to tune. ``weight`` counts calls per model run (how much its latency matters)."""

    name: str
    func: PrimFunc
    weight: int
    workload_key: str

    @property
    def workload_name(self) -> str:
        """The kernel's name with its output's shape, e.g. ``fused_matmul_add_relu_64x128``: the database's
        name of the workload. A model compiled for two batch sizes has two workloads per kernel name, and a
        name is what people pass to ``tunefarm best --workload``."""
        out = self.func.params[-1]  # destination passing: the output comes last
        dims = (getattr(d, "value", getattr(d, "name", d)) for d in out.shape)  # IntImm, or a symbolic Var
        return f"{self.name}_{'x'.join(str(d) for d in dims)}"


def extract_tasks(mod: IRModule, params: dict | None = None, entry: str | None = None,
                  prepared: bool = False) -> list[Task]:
    """Distinct PrimFuncs called by the entry function, keyed by workload key (not by name)."""
    if not prepared:
        mod = prepare(mod, params, entry)
    fn = mod[entry_name(mod, entry)]
    if not isinstance(fn, Function):
        raise TypeError("the entry must be a graph function")
    tasks: dict[str, Task] = {}
    for call in fn.calls():
        name = call.attrs.get("func")
        callee = mod.functions.get(name) if name else None
        if not isinstance(callee, PrimFunc):
            continue  # calls into registered Python functions are not tuned
        key = workload_key(callee)
        if key in tasks:
            tasks[key].weight += 1
        else:
            tasks[key] = Task(name, callee, 1, key)
    return list(tasks.values())
