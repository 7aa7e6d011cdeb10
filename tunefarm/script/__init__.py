"""TVMScript front end: ``from tunefarm.script import T`` then ``@T.prim_func`` / ``@ir_module``.

The script is parsed from source (``inspect.getsource`` + ``ast``), never executed. The accepted subset is
the MLC course's TensorIR script:

* parameters ``T.Buffer((128, 128), "float32")``, the older ``T.Buffer[(128, 128), "float32"]``, and
  ``T.handle`` + ``T.match_buffer``; symbolic dimensions ``n = T.int64()``;
* ``T.alloc_buffer(shape, dtype, scope="local")``, ``T.func_attr({...})``;
* loops ``range``, ``T.grid``, ``T.serial`` / ``T.parallel`` / ``T.vectorized`` / ``T.unroll`` (with
  ``annotations={...}``);
* ``with T.block("name")`` with ``T.axis.spatial`` / ``T.axis.reduce`` / ``T.axis.remap``, ``T.init()``,
  ``T.reads`` / ``T.writes`` (inferred when left out), ``T.where``, ``T.block_attr``;
* expressions: arithmetic (``+ - * / // %``), comparisons, ``and`` / ``or`` / ``not``, ``T.max`` /
  ``T.min``, math intrinsics (``T.exp``, ``T.sqrt``, ...), ``T.Select`` / ``T.if_then_else``, ``T.Cast``,
  typed literals ``T.float32(0)``; Python ``if`` on expressions; ``T.evaluate``;
* lowered form only: ``with T.allocate(shape, dtype, scope=...) as buf:``.

Anything else raises ``ParseError`` (a ``SyntaxError`` and ``ValueError``) naming file, line and construct.
``from_source(text)`` parses printed programs (``func.script()``) back: that is the round trip.

``R`` (``@R.function``, ``relax_namespace`` / ``relax_parser``) reads the course's graph functions into the graph
IR of ``tunefarm.ir`` (``graph_expr``, ``graph_function``); the two front ends share this package's parser entry
points, so one ``@ir_module`` class may hold both kinds.
"""
from .diagnostics import ParseError
from .entry import I, T, ir_module, prim_func
from .parser import from_source, register_function_parser, register_namespace
from .relax_namespace import R  # registers @R.function with the parser

__all__ = ["T", "I", "R", "ir_module", "prim_func", "from_source", "ParseError", "register_function_parser",
           "register_namespace"]
