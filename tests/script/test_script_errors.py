"""Unsupported or malformed scripts raise ParseError naming the file, the line and the construct."""
from __future__ import annotations

import inspect
import sys
import textwrap

import pytest

from tunefarm.script import ParseError, T, from_source

HEADER = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
"""


def parse_body(body: str):
    """Parse a function whose body is ``body``; the body's first line is line 4 of the text."""
    return from_source(HEADER + textwrap.indent(textwrap.dedent(body), "    "))


BAD_BODIES = [
    # (body, line of the offending construct within the text, construct, fragment of the message)
    ("i = 0\nwhile i < 4:\n    i = i + 1\n", 5, "while loop", "while loop"),
    ("for i in range(16):\n    B[i] = (lambda x: x)(A[i])\n", 5, "unknown-call", "unsupported function"),
    ("for i in range(16):\n    B[i] = [x for x in A]\n", 5, "ListComp", "list comprehension"),
    ("for i in range(16):\n    print(A[i])\n", 5, "expression-statement", "no effect"),
    ("for i in range(16):\n    B[i] = foo(A[i])\n", 5, "unknown-call", "foo"),
    ("for i in range(16):\n    B[i] = A[i] ** 2\n", 5, "Pow", "operator"),
    ("for i in range(16):\n    B[i] = C[i]\n", 5, "undefined-name", "undefined name `C`"),
    ("for i in range(16):\n    B[i, 0] = A[i]\n", 5, "index-count", "1 dimension(s)"),
    ("for i in range(16):\n    B[i] = A[0:4]\n", 5, "slice", "only allowed in T.reads"),
    ("for i in range(0, 16, 2):\n    B[i] = A[i]\n", 4, "loop-step", "steps"),
    ("for i in T.thread_binding(16):\n    B[i] = A[i]\n", 4, "loop-iterator", "unsupported loop iterator"),
    ("for i in range(16):\n    with T.block('B'):\n        vi = T.axis.opaque(16, i)\n        B[vi] = A[vi]\n",
     6, "axis.opaque", "not supported"),
    ("for i in range(16):\n    with T.block('B'):\n        vi, vj = T.axis.remap('SX', [i, i])\n", 6, "axis.remap",
     "'S' and 'R'"),
    ("for i in range(16):\n    with T.block('B'):\n        vi = T.axis.remap('S', [i + 1])\n", 6, "axis.remap",
     "loop variables only"),
    ("T.reads(A[0:16])\n", 4, "misplaced-T.reads", "directly inside"),
    ("for i in range(16):\n    with T.init():\n        B[i] = 0.0\n", 5, "misplaced-T.init()", "directly inside"),
    ("for i in range(16):\n    B[i] = T.Cast('float64', A[i])\n", 5, "store-dtype", "convert with T.Cast"),
    ("x = A[0] + 1.0\nA[0] = 2.0\nB[0] = x\n", 6, "let", "no let-statements"),
    ("try:\n    pass\nexcept Exception:\n    pass\n", 4, "try statement", "try statement"),
    ("import numpy\n", 4, "import", "import"),
    ("for i in range(16):\n    B[i] = A[i]\nelse:\n    pass\n", 4, "for-else", "for-else"),
    ("with open('x') as fh:\n    pass\n", 4, "with", "unsupported `with"),
    ("C = T.alloc_buffer((4,), 'float32', scope='global.texture')\n", 4, "scope", "unknown buffer scope"),
    ("C = T.alloc_buffer((4,), 'float31')\n", 4, "dtype", "unsupported dtype"),
    ("C = T.alloc_buffer((4,), 'float32', align=64)\n", 4, "kwarg-align", "unsupported argument `align`"),
    ("for i in range(16):\n    B[i] = A[i] if i < 8 else T.exp(A[i], A[i], foo=1)\n", 5, "exp", "keyword"),
    ("for i in range(16):\n    B[i] = A[i] & 1\n", 5, "BitAnd", "unsupported operator"),
    ("for i in range(16):\n    B[i] = A[i] + f'{i}'\n", 5, "JoinedStr", "f-string"),
    ("n = T.int64()\nfor i in range(16):\n    m = T.int32()\n", 6, "symbolic-var", "top level"),
    ("for i in range(16):\n    B[i] = T.float32(1) + T.int64()\n", 5, "symbolic-var", "assigned"),
    ("return 1\n", 4, "return", "cannot return"),
    ("for i in range(16):\n    if A[i]:\n        B[i] = 1.0\n", 5, "if-condition", "boolean"),
    ("for i in range(16):\n    with T.block('B'):\n        T.reads(A[i])\n        T.reads(A[i])\n", 7, "reads",
     "given twice"),
    ("for i in range(16):\n    B[i] = T.float32('1e9')\n", 5, "float32", "strings"),
    ("for i in range(16):\n    B[i] = A[i] + T.grid(4)\n", 5, "misplaced-grid", "inside an expression"),
    ("for i in range(16):\n    B[i] = T.atan2(A[i], A[i])\n", 5, "unknown-atan2", "not part of the TensorIR"),
]


@pytest.mark.parametrize("body,line,construct,fragment", BAD_BODIES, ids=[b[2] for b in BAD_BODIES])
def test_bad_construct_reports_line_and_construct(body, line, construct, fragment):
    with pytest.raises(ParseError) as info:
        parse_body(body)
    err = info.value
    assert err.lineno == line, str(err)
    assert err.construct == construct, str(err)
    assert fragment in str(err)
    assert f"<script>:{line}:" in str(err)


def test_parse_error_is_syntax_error_and_value_error():
    with pytest.raises(SyntaxError):
        parse_body("while True:\n    pass\n")
    with pytest.raises(ValueError):
        parse_body("while True:\n    pass\n")


def test_error_message_quotes_the_source_line_with_a_caret():
    with pytest.raises(ParseError) as info:
        parse_body("for i in range(16):\n    B[i] = A[i] ** 2\n")
    text = str(info.value)
    assert "B[i] = A[i] ** 2" in text
    caret_line = text.splitlines()[-1]
    assert caret_line.strip() == "^"


def test_decorated_function_error_names_this_file_and_absolute_line():
    first = inspect.currentframe().f_lineno
    with pytest.raises(ParseError) as info:
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in range(4):
                while True:  # line first + 5
                    pass
    err = info.value
    assert err.filename == __file__
    assert err.lineno == first + 5
    assert "while loop" in str(err)
    assert err.offset == 17  # column of `while` (1-based) in this file


def test_python_object_from_outer_scope_is_rejected():
    import numpy as np

    table = np.arange(4)  # not plain data: an array
    with pytest.raises(ParseError, match="refers to a Python ndarray"):
        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = table[i]


def test_handle_must_be_matched():
    with pytest.raises(ParseError, match="never bound with T.match_buffer") as info:
        from_source("""
@T.prim_func
def f(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4,), "float32")
""")
    assert info.value.lineno == 3


def test_handle_matched_twice_and_used_unmatched():
    with pytest.raises(ParseError, match="matched twice"):
        from_source("""
@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4,), "float32")
    B = T.match_buffer(a, (4,), "float32")
""")
    with pytest.raises(ParseError, match="must be bound with T.match_buffer"):
        from_source("""
@T.prim_func
def f(a: T.handle):
    a[0] = 1.0
""")


def test_missing_annotation_and_bad_annotation():
    with pytest.raises(ParseError, match="needs a T.Buffer"):
        from_source("@T.prim_func\ndef f(a):\n    pass\n")
    with pytest.raises(ParseError, match="unsupported annotation"):
        from_source("@T.prim_func\ndef f(a: T.float32):\n    pass\n")
    with pytest.raises(ParseError, match="scalar parameter `a` does not size a buffer parameter"):
        from_source("@T.prim_func\ndef f(a: T.int32, B: T.Buffer((4,), 'float32')):\n    pass\n")
    with pytest.raises(ParseError, match="returns nothing"):
        from_source("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')) -> int:\n    pass\n")


def test_unknown_decorator_and_missing_decorator():
    with pytest.raises(ParseError, match="unknown decorator `@R.kernel`") as info:
        from_source("""
@ir_module
class M:
    @R.kernel
    def main(x):
        return x
""")
    assert info.value.lineno == 4
    with pytest.raises(ParseError, match="has no script decorator"):
        from_source("""
@ir_module
class M:
    def main(x):
        return x
""")
    with pytest.raises(ParseError, match="unknown decorator"):
        from_source("@staticmethod\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n")


def test_invalid_python_syntax_is_a_parse_error_with_line():
    with pytest.raises(ParseError, match="invalid Python syntax") as info:
        from_source("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in range(4)\n        pass\n")
    assert info.value.lineno == 3


def test_from_source_rejects_other_top_level_code_and_imports():
    with pytest.raises(ParseError, match="unsupported top-level statement"):
        from_source("x = 1\n")
    with pytest.raises(ParseError, match="only accepts imports"):
        from_source("import os\n@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n")
    with pytest.raises(ParseError, match="defines 2 objects"):
        from_source("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    pass\n"
                    "@T.prim_func\ndef g(A: T.Buffer((4,), 'float32')):\n    pass\n")
    with pytest.raises(ParseError, match="no @T.prim_func"):
        from_source("# nothing here\n")


def test_ir_module_class_body_rules():
    with pytest.raises(ParseError, match="unsupported statement in ir_module class"):
        from_source("""
@ir_module
class M:
    n = 4
""")
    with pytest.raises(ParseError, match="base classes"):
        from_source("""
@ir_module
class M(object):
    pass
""")
    with pytest.raises(ParseError, match="must be decorated with @ir_module"):
        from_source("class M:\n    pass\n")


def test_from_source_imports_no_module_of_a_similar_name(tmp_path, monkeypatch):
    """``from tunefarmx import T`` once imported (so ran) any module whose name starts with ``tunefarm``."""
    marker = tmp_path / "ran.txt"
    for name in ("tunefarmx", "tunefarm_evil"):
        (tmp_path / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nT = None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    body = "@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[0] = T.float32(1)\n"
    for header in ("from tunefarmx import T\n", "from tunefarm_evil import T\n", "import tunefarmx\n",
                   "from tunefarm.script.namespace import T\n", "from .tunefarm.script import T\n"):
        with pytest.raises(ParseError, match="only accepts imports of the script namespaces"):
            from_source(header + body)
    assert not marker.exists()
    assert "tunefarmx" not in sys.modules and "tunefarm_evil" not in sys.modules
    assert from_source("from tunefarm.script import T\nimport tunefarm.script\n" + body).name == "f"


def test_huge_expressions_are_parse_errors_not_recursion_errors():
    for n in (600, 50_000):
        expr = " + ".join(["A[0]"] * n)
        with pytest.raises(ParseError, match="nested too deeply"):
            from_source(f"@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    A[1] = {expr}\n")
