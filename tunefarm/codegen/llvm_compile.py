"""LLVM IR text to optimized object code for a target (llvmlite 0.50, LLVM's new pass manager).

Choices measured on this project's machine (AMD EPYC, Zen 3):
- the TargetMachine gets the target's CPU name and feature string (host by default), so AVX2/FMA (and
  AVX-512 where present) are used;
- the middle end is LLVM's O2 per-module pipeline: O3 unrolls tiled loops before it vectorizes them and
  runs slower on our kernels, and explicit vector IR does not need O3; its heuristic loop unroller is
  turned off (``LOOP_UNROLLING``), since unrolling is the schedule's decision;
- a fresh PassBuilder per module (reusing one slows every later run down, running one pass manager twice
  aborts). Each optimizer run leaks about 90 KB inside LLVM, so a process that compiles many modules (a
  tuning worker) should be recycled every ~1000 modules (see ``tunefarm.runtime.jit``).

Loops the schedule unrolls reach LLVM as loops carrying ``llvm.loop.unroll.full`` (``unroll.py``). They are
unrolled by a LoopUnrollPass run *before* the O2 pipeline, so that O2 sees the same straight-line code it
used to get from unrolling in the IR: letting O2's own full-unroll pass do it (it runs after LICM, EarlyCSE
and the first loop passes) measured up to 2.3x slower kernels (accumulators left in memory, loads no longer
shared between unrolled copies). That pass has heuristics of its own (partial, runtime and small-loop full
unrolling, peeling); ``_init`` switches them off with LLVM options, which are process-wide: only loops with
unroll metadata are unrolled, whatever their size. O2 is unaffected by those options: with
``LOOP_UNROLLING`` off its unroll passes only act on loops with metadata, and none is left by then.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

from ..target import Target
from .loop_metadata import UNROLL_FULL

OPT_LEVEL = 2
# LLVM's heuristic loop unrolling is off in O2: unrolling is what the schedule asks for (``unroll.py``);
# LLVM's heuristic unrolling of already-vectorized tiled loops measured no faster here and cost ~2-4 ms of
# compile time per module (O2's unroll passes then act only on loops with unroll metadata; the vectorizer's
# interleaving stays on).
LOOP_UNROLLING = False
# The forced-unrolling pass unrolls exactly the loops with ``llvm.loop.unroll.full``: no heuristic full
# (``full-max-count``), partial, runtime or upper-bound unrolling and no peeling of other loops, and no size
# limit on the marked ones (unrolling is the schedule's decision). (``-unroll-threshold=0`` would be simpler,
# but together with partial unrolling off it makes LoopUnrollPass skip every loop, forced ones included.)
UNROLL_PASS_OPTIONS = ("-unroll-full-max-count=0", "-unroll-allow-partial=0", "-unroll-runtime=0",
                       "-unroll-allow-peeling=0", "-unroll-max-upperbound=0", "-pragma-unroll-threshold=1000000000")
_local = threading.local()  # TargetMachines are not shared between threads
_init_lock = threading.Lock()
_initialized = False


def _init() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            for option in UNROLL_PASS_OPTIONS:
                llvm.set_option("tunefarm", option)
            _initialized = True


def target_machine(target: Target, jit: bool = True) -> llvm.TargetMachine:
    """A TargetMachine for ``target`` (cached per thread; never handed to execution engines, which take
    ownership of theirs)."""
    machines = getattr(_local, "machines", None)
    if machines is None:
        machines = _local.machines = {}
    key = (str(target), jit)
    tm = machines.get(key)
    if tm is None:
        tm = machines[key] = new_target_machine(target, jit)
    return tm


def new_target_machine(target: Target, jit: bool = True) -> llvm.TargetMachine:
    _init()
    triple = llvm.get_process_triple()
    return llvm.Target.from_triple(triple).create_target_machine(
        cpu=target.cpu, features=target.feature_string, opt=3, reloc="default", codemodel="jitdefault", jit=jit)


@dataclass
class ObjectCode:
    object: bytes
    ll: str  # the optimized LLVM IR, for inspection (``Module.get_source("ll")``)


def optimize(ir_text: str, target: Target) -> llvm.ModuleRef:
    """Parse, verify and run the O2 pipeline; returns the optimized module."""
    _init()
    tm = target_machine(target)
    # a fresh LLVMContext per module: the global one is not thread-safe and never frees what it uniques
    mod = llvm.parse_assembly(ir_text, context=llvm.create_context())
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(tm.target_data)
    mod.verify()
    if UNROLL_FULL in ir_text:
        _unroll_marked_loops(mod, tm)
    pb = _pass_builder(tm)  # fresh per module, see the module docstring
    pb.getModulePassManager().run(mod, pb)
    return mod


def _pass_builder(tm: llvm.TargetMachine) -> llvm.PassBuilder:
    pto = llvm.create_pipeline_tuning_options(speed_level=OPT_LEVEL)
    pto.loop_unrolling = LOOP_UNROLLING
    return llvm.create_pass_builder(tm, pto)


def _unroll_marked_loops(mod: llvm.ModuleRef, tm: llvm.TargetMachine) -> None:
    """Fully unroll the loops carrying ``llvm.loop.unroll.full`` (inner loops first), before O2."""
    mpm = llvm.create_new_module_pass_manager()
    mpm.add_loop_unroll_pass()
    mpm.run(mod, _pass_builder(tm))


def compile_ir(ir_text: str, target: Target, keep_ll: bool = True) -> ObjectCode:
    mod = optimize(ir_text, target)
    obj = target_machine(target).emit_object(mod)
    return ObjectCode(obj, str(mod) if keep_ll else "")


def assembly(ll_text: str, target: Target) -> str:
    """Assembly for (already optimized) LLVM IR text."""
    _init()
    mod = llvm.parse_assembly(ll_text, context=llvm.create_context())
    return target_machine(target).emit_assembly(mod)
