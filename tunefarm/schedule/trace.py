"""``Trace``: the recorded program of a schedule -- instructions plus the decisions of its sampling steps.

A trace is data. It prints as the Python of TVM's ``apply_trace`` (for people), serializes to the
MetaSchedule JSON shape ``{"insts": [[kind, inputs, attrs, outputs], ...], "decisions": [[i, d], ...]}``
(for machines), and is applied to a schedule of the original function -- with its own decisions, or with
edited ones, which is how the search mutates candidates. Loading JSON validates every instruction against the
registry and never executes anything. A trace drives a schedule it is given and never makes one: a schedule
built from a trace is ``Schedule.from_trace`` (schedule.py imports this module, never the reverse).

Random variables are named by one counter shared by all kinds, in order of creation: ``b0``, ``l1``, ``v2``.
"""
from __future__ import annotations

import json

from .error import ScheduleError
from .instruction import INSTRUCTION_KINDS, Instruction
from .random_variables import RV_TYPES, BlockRV, ExprRV, LoopRV, RandomVariable


class Trace:
    """Immutable: ``with_decision`` returns a new trace."""

    __slots__ = ("_insts", "_decisions")

    def __init__(self, insts=(), decisions: dict | None = None):
        self._insts = tuple(insts)
        self._decisions = dict(decisions or {})

    # ------------------------------------------------------------------------------------------- access
    @property
    def insts(self) -> tuple[Instruction, ...]:
        return self._insts

    @property
    def decisions(self) -> dict:
        """``inst_index -> decision`` for the sampling instructions (a copy)."""
        return {k: _copy(d) for k, d in self._decisions.items()}

    def get_decision(self, inst_index: int):
        return _copy(self._decisions.get(inst_index))

    def __len__(self) -> int:
        return len(self._insts)

    def with_decision(self, inst_index: int, decision) -> "Trace":
        """The same trace with one sampling decision replaced (``None`` removes it: replay re-samples).

        Only the decision's shape is checked here; whether it fits the program is checked when it is applied.
        """
        self._check_sampling_index(inst_index)
        if decision is not None:
            spec = INSTRUCTION_KINDS[self._insts[inst_index].kind]
            err = spec.check_decision(decision, self._insts[inst_index].attrs)
            if err:
                raise ValueError(f"trace instruction {inst_index} ({spec.name}): the decision must be {err}, "
                                 f"got {decision!r}")
        decisions = dict(self._decisions)
        if decision is None:
            decisions.pop(inst_index, None)
        else:
            decisions[inst_index] = list(decision) if isinstance(decision, (list, tuple)) else decision
        return Trace(self._insts, decisions)

    def without_postproc(self) -> "Trace":
        """The instructions before ``enter_postproc`` (what the search mutates; postprocessors re-run after)."""
        for i, inst in enumerate(self._insts):
            if inst.kind == "EnterPostproc":
                return Trace(self._insts[:i], {k: d for k, d in self._decisions.items() if k < i})
        return self

    def _check_sampling_index(self, inst_index) -> None:
        if isinstance(inst_index, bool) or not isinstance(inst_index, int) or not 0 <= inst_index < len(self._insts):
            raise ValueError(f"instruction index {inst_index!r} is out of range for a trace of {len(self)}")
        kind = self._insts[inst_index].kind
        if not INSTRUCTION_KINDS[kind].sampling:
            raise ValueError(f"trace instruction {inst_index} ({kind}) is not a sampling instruction")

    # ------------------------------------------------------------------------------------------- naming
    def _names(self) -> dict:
        names: dict = {}
        k = 0
        for inst in self._insts:
            for rv in inst.outputs:
                names[rv] = f"{rv.prefix}{k}"
                k += 1
        return names

    # ------------------------------------------------------------------------------------------- python
    def as_python(self) -> list[str]:
        """One line of Python per instruction, as TVM prints ``apply_trace``."""
        names = self._names()
        lines = []
        for i, inst in enumerate(self._insts):
            spec = INSTRUCTION_KINDS[inst.kind]
            lines.append(spec.to_python(inst, names, self._decisions.get(i)))
        return lines

    def __str__(self) -> str:
        """The trace as TVM prints it (``print(sch.trace)``): a function that redoes it on a schedule. The text
        runs as it is when pasted (``apply_trace(Schedule(func))``); tunefarm itself only ever replays data."""
        return "\n".join(["def apply_trace(sch):"] + ["    " + line for line in self.as_python() or ["pass"]])

    def __repr__(self) -> str:
        return f"Trace({len(self)} instructions, {len(self._decisions)} decisions)"

    def show(self) -> None:
        """Print the trace as ``print(sch.trace)`` does (TVM's ``trace.show()``)."""
        print(self)

    # ------------------------------------------------------------------------------------------- json
    def as_json(self) -> dict:
        names = self._names()
        insts = [[inst.kind, [_through(x, names) for x in inst.inputs], [_through(a, names) for a in inst.attrs],
                  [names[o] for o in inst.outputs]] for inst in self._insts]
        decisions = [[i, _through(d, names)] for i, d in sorted(self._decisions.items())]
        return {"insts": insts, "decisions": decisions}

    to_json = as_json

    def dumps(self) -> str:
        return json.dumps(self.as_json(), separators=(",", ":"))

    @staticmethod
    def from_json(data) -> "Trace":
        """Rebuild a trace from ``as_json()`` output (a dict, a bare instruction list, or JSON text).

        Raises ``ValueError`` naming the instruction for unknown kinds, wrong arity, bad attributes, and
        random-variable names that are undefined, defined twice or of the wrong kind.
        """
        return _load(data)

    # ------------------------------------------------------------------------------------------- replay
    def apply_to_schedule(self, sch, remove_postproc: bool = False, *, decisions: dict | None = None) -> None:
        """Run the instructions on ``sch``, any schedule with the primitives (its trace grows by this one).

        TVM's spelling; a new schedule built from a trace is ``Schedule.from_trace``. ``remove_postproc``
        stops at ``enter_postproc``. ``decisions`` overrides the recorded ones (``inst_index -> decision``;
        None re-samples). A ScheduleError raised by an instruction is re-raised naming it (``err.inst_index``).
        """
        trace = self.without_postproc() if remove_postproc else self
        overrides = dict(decisions or {})
        for i in overrides:
            trace._check_sampling_index(i)
        rv_map: dict = {}
        recorded = trace._decisions
        for i, inst in enumerate(trace._insts):
            spec = INSTRUCTION_KINDS[inst.kind]
            decision = overrides[i] if i in overrides else recorded.get(i)
            try:
                try:
                    inputs = tuple([_through(x, rv_map) for x in inst.inputs])
                except KeyError:
                    raise ScheduleError(spec.method, "uses a random variable no earlier instruction defines") from None
                result = spec.apply(sch, inputs, inst.attrs, decision)
                outs = [] if result is None else list(result) if isinstance(result, list) else [result]
                if len(outs) != len(inst.outputs):
                    raise ScheduleError(spec.method, f"produced {len(outs)} results where the trace has "
                                                     f"{len(inst.outputs)} (the program differs from the one "
                                                     "the trace was recorded on)")
            except ScheduleError as e:
                err = ScheduleError(e.primitive, f"trace instruction {i} ({inst.kind}): {e.reason}")
                err.inst_index = i
                raise err from e
            rv_map.update(zip(inst.outputs, outs))


def _through(x, table: dict):
    """``x`` with every random variable in it (lists too) replaced by ``table[rv]``."""
    if isinstance(x, RandomVariable):
        return table[x]
    if isinstance(x, (list, tuple)):
        return [_through(v, table) for v in x]
    return x


def _copy(decision):
    return list(decision) if isinstance(decision, list) else decision


# ------------------------------------------------------------------------------------------------------------
# loading
# ------------------------------------------------------------------------------------------------------------
_INPUT_TYPES = {
    "block": (BlockRV,),
    "loop": (LoopRV,),
    "block_or_loop": (BlockRV, LoopRV),
    "factor": (ExprRV,),
    "expr_or_none": (ExprRV,),
}


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _load(data) -> Trace:
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError as e:
            raise ValueError(f"trace text is not valid JSON: {e}") from None
    if isinstance(data, dict):
        extra = set(data) - {"insts", "decisions"}
        if extra or "insts" not in data:
            raise ValueError(f"a trace must be {{'insts': [...], 'decisions': [...]}}; got keys {sorted(data)}")
        raw_insts, raw_decisions = data["insts"], data.get("decisions", [])
    elif isinstance(data, list):
        raw_insts, raw_decisions = data, []
    else:
        raise ValueError(f"a trace must be a dict or a list of instructions, got {type(data).__name__}")
    if not isinstance(raw_insts, list):
        raise ValueError("trace 'insts' must be a list")
    env: dict = {}
    insts = [_load_inst(i, raw, env) for i, raw in enumerate(raw_insts)]
    if not isinstance(raw_decisions, list):
        raise ValueError("trace 'decisions' must be a list")
    decisions: dict = {}
    for j, item in enumerate(raw_decisions):
        if not isinstance(item, list) or len(item) != 2 or not _is_int(item[0]):
            raise ValueError(f"trace decision {j} must be [inst_index, decision], got {item!r}")
        idx, dec = item
        if not 0 <= idx < len(insts):
            raise ValueError(f"trace decision {j} names instruction {idx}, but the trace has {len(insts)}")
        spec = INSTRUCTION_KINDS[insts[idx].kind]
        if not spec.sampling:
            raise ValueError(f"trace instruction {idx} ({spec.name}) takes no decision")
        if idx in decisions:
            raise ValueError(f"trace instruction {idx} ({spec.name}) has two decisions")
        err = spec.check_decision(dec, insts[idx].attrs)
        if err:
            raise ValueError(f"trace instruction {idx} ({spec.name}): the decision must be {err}, got {dec!r}")
        decisions[idx] = dec
    return Trace(insts, decisions)


def _load_inst(i: int, raw, env: dict) -> Instruction:
    if not isinstance(raw, list) or len(raw) != 4:
        raise ValueError(f"trace instruction {i} must be [kind, inputs, attrs, outputs], got {raw!r}"[:300])
    kind, inputs, attrs, outputs = raw
    spec = INSTRUCTION_KINDS.get(kind) if isinstance(kind, str) else None
    if spec is None:
        raise ValueError(f"trace instruction {i}: unknown instruction kind {kind!r} "
                         f"(known: {', '.join(INSTRUCTION_KINDS)})")
    if type(inputs) is list and type(attrs) is list and type(outputs) is list:
        where = None  # the error messages' prefix, formatted only when one is raised
    else:
        where = f"trace instruction {i} ({kind})"
        for label, value in (("inputs", inputs), ("attrs", attrs), ("outputs", outputs)):
            if not isinstance(value, list):
                raise ValueError(f"{where}: {label} must be a list, got {type(value).__name__}")
    try:
        return _load_checked(kind, spec, inputs, attrs, outputs, env)
    except _LoadError as e:
        message = f"{where or f'trace instruction {i} ({kind})'}: {e.args[0]}"
        raise ValueError(message[:300] if e.truncate else message) from None


class _LoadError(Exception):
    """What is wrong with one loaded instruction (``_load_inst`` prefixes where it is)."""

    def __init__(self, message: str, truncate: bool = False):
        super().__init__(message)
        self.truncate = truncate  # cut the full message to 300 characters (it shows a user's value)


_INPUT_LAYOUT: dict = {}  # kind -> (fixed input types, type of the variadic rest or None)


def _input_types(spec, n: int) -> list:
    layout = _INPUT_LAYOUT.get(spec.name)
    if layout is None:
        types = list(spec.inputs)
        if types and types[-1].endswith("+"):
            layout = (types[:-1], types[-1][:-1])
        else:
            layout = (types, None)
        _INPUT_LAYOUT[spec.name] = layout
    fixed, rest = layout
    if rest is not None:
        if n < len(fixed) + 1:
            raise _LoadError(f"expects at least {len(fixed) + 1} inputs, got {n}")
        return fixed + [rest] * (n - len(fixed))
    if n != len(fixed):
        raise _LoadError(f"expects {len(fixed)} inputs, got {n}")
    return fixed


def _load_checked(kind: str, spec, inputs: list, attrs: list, outputs: list, env: dict) -> Instruction:
    types = _input_types(spec, len(inputs))
    if len(attrs) != len(spec.attrs):
        raise _LoadError(f"expects {len(spec.attrs)} attributes "
                         f"({', '.join(n for n, _ in spec.attrs) or 'none'}), got {len(attrs)}")
    for (name, check), value in zip(spec.attrs, attrs):
        err = check(value)
        if err:
            raise _LoadError(f"attribute {name} must be {err}, got {value!r}", truncate=True)
    loaded = []
    for k, (t, x) in enumerate(zip(types, inputs)):
        if x is None and t in ("factor", "expr_or_none"):
            loaded.append(None)
        elif _is_int(x) and t == "factor":
            loaded.append(x)
        elif isinstance(x, str):
            rv = env.get(x)
            if rv is None:
                raise _LoadError(f"input {k} uses the random variable {x!r}, which no earlier instruction defines")
            if not isinstance(rv, _INPUT_TYPES[t]):
                raise _LoadError(f"input {k} must be a {t.replace('_', ' ')} random variable, but {x!r} is a "
                                 f"{rv.kind}")
            loaded.append(rv)
        else:
            raise _LoadError(f"input {k} must be a {t.replace('_', ' ')} random variable name, got {x!r}")
    if kind == "Annotate" and (loaded[1] is None) == (attrs[1] is None):
        raise _LoadError("the value must be given either as an input random variable or as the ann_val "
                         "attribute (exactly one)")
    n = spec.n_outputs(tuple(loaded), tuple(attrs))
    if n is not None and len(outputs) != n:
        raise _LoadError(f"expects {n} outputs, got {len(outputs)}")
    if outputs and not spec.outputs:
        raise _LoadError(f"has no outputs, got {len(outputs)}")
    outs = []
    for name in outputs:
        if not isinstance(name, str) or not name:
            raise _LoadError(f"output names must be non-empty strings, got {name!r}")
        if name in env:
            raise _LoadError(f"the random variable {name!r} is defined twice")
        rv = RV_TYPES[spec.outputs]()
        env[name] = rv
        outs.append(rv)
    attrs = [list(a) if isinstance(a, list) else a for a in attrs]
    return Instruction(kind, loaded, attrs, outs)
