"""Names the dead-code check (``test_dead_code.py``) must count as used although nothing calls them by name.

vulture reads this file as source and never runs it: a bare name or ``_.name`` marks that name as used. Each
entry says who uses it. Methods dispatched by the class name of the node they handle (``visit_<Class>``,
``_e_<Class>``, ``_s_<Class>``) are not listed; the test ignores those patterns instead.
"""
_ = object

# Python calls these: PEP 562 module hooks (lazy public names), the pickle allowlist hook, and the
# executable's native-call subclass (assigning ``__class__``)
__getattr__
__dir__
_.find_class
_.__class__

# llvmlite configures itself through attribute assignment (``fn.linkage = ...``, ``pmb.loop_unrolling = ...``)
_.linkage
_.data_layout
_.loop_unrolling
_.function_type

# attributes that only keep objects alive (the native code holds raw pointers into them)
_._keep
_._fallback
_._ptrs

# farm work-item handlers, named by ``"module:function"`` strings (testing/batch.py CANDIDATE_HANDLER,
# testing/simulate.py SIMULATE, testing/simulated_job.py SIMULATED_MEASURE and SIMULATED_SEARCH, the farm
# tests' handler names)
measure_candidate
measure_program
echo
segfault
hang
unserializable
read_shared
timed_hold
compile_count
lost_reply
tally
search_from_pool

# search spaces, named by ``"file:function"`` strings in search_spaces/registry.py
dense_bias_relu_space
elementwise_space
multi_level_tiling_mm

# TVM's names for what TVM users call (tvm.runtime.Module, relax executables, BenchmarkResult, tir.Schedule)
_.get_function
_.export_library
_.std
_.work_on

# documentation kept as data: each schema migration's one-line summary, and the sha256 of the course's
# published pickle (the module docstring of graph/params.py cites it for anyone loading that pickle)
_.description
COURSE_PICKLE_SHA256

# http.server calls a handler's ``do_<METHOD>`` and ``log_message``; socketserver reads ``daemon_threads``
# (the dashboard's server, tunefarm/dashboard/server.py)
_.do_HEAD
_.do_POST
_.do_PUT
_.do_DELETE
_.do_PATCH
_.do_OPTIONS
_.log_message
_.daemon_threads
