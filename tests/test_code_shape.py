"""The shape of the library's code, enforced over tunefarm/ and search_spaces/ (read with ``ast``):

- no module longer than ``MAX_MODULE_LINES`` lines (split it by idea, one idea per file);
- no function or method longer than ``MAX_FUNCTION_LINES`` lines (its ``def`` line to its last line) unless its
  docstring says why: a line of the docstring starts with ``Long because`` and gives the reason;
- a function-level import of the project's own modules says why it is not at module level (it breaks an import
  cycle, or keeps a light import light): a ``#`` comment on the import's line, or on the line just above the
  run of import lines it belongs to.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
LONG_BECAUSE = "Long because"
OWN_PACKAGES = ("tunefarm", "search_spaces")


def _sources() -> list[Path]:
    return sorted(p for pkg in OWN_PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _functions(tree: ast.AST):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _says_why_it_is_long(fn) -> bool:
    doc = ast.get_docstring(fn) or ""
    return any(line.strip().startswith(LONG_BECAUSE) for line in doc.splitlines())


def _imports_own_module(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in OWN_PACKAGES
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] in OWN_PACKAGES for a in node.names)


def _has_reason(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, or above the run of import lines around it."""
    if "#" in lines[lineno - 1]:
        return True
    i = lineno - 1
    while i > 0 and re.match(r"\s*(from|import) ", lines[i - 1]):
        i -= 1
    return i > 0 and lines[i - 1].strip().startswith("#")


def test_no_module_is_too_long():
    long = [f"{p.relative_to(ROOT)}: {n} lines" for p in _sources()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by idea):\n" + "\n".join(long)


def test_no_function_is_too_long_without_saying_why():
    long = []
    for p in _sources():
        for fn in _functions(ast.parse(p.read_text(), str(p))):
            n = fn.end_lineno - fn.lineno + 1
            if n > MAX_FUNCTION_LINES and not _says_why_it_is_long(fn):
                long.append(f"{p.relative_to(ROOT)}:{fn.lineno} {fn.name}: {n} lines")
    assert not long, (f"functions over {MAX_FUNCTION_LINES} lines whose docstring has no '{LONG_BECAUSE} ...' "
                      "line (split them into named helpers, or say why one piece is clearer):\n" + "\n".join(long))


def test_function_level_imports_of_the_project_say_why():
    silent = []
    for p in _sources():
        text = p.read_text()
        lines = text.splitlines()
        for fn in _functions(ast.parse(text, str(p))):
            for node in ast.walk(fn):
                if _imports_own_module(node) and not _has_reason(lines, node.lineno):
                    silent.append(f"{p.relative_to(ROOT)}:{node.lineno} in {fn.name}: {lines[node.lineno - 1].strip()}")
    assert not silent, ("imports inside functions without a comment saying why (move them to the top of the "
                        "module unless they break an import cycle or keep a light import light):\n"
                        + "\n".join(sorted(set(silent))))


def test_the_checks_see_what_they_look_for():
    """The three rules above read real things: the convention is recognised and silent imports are found."""
    fn = ast.parse('def f():\n    """Do it.\n\n    Long because the steps share state.\n    """\n').body[0]
    assert _says_why_it_is_long(fn)
    fn = ast.parse('def f():\n    """Do it; not long because of anything."""\n').body[0]
    assert not _says_why_it_is_long(fn)
    lines = ["def f():", "    # cycle: b imports this module", "    from .b import x", "    from .c import y",
             "", "    from .d import z", "    import tunefarm  # keeps it light"]
    assert _has_reason(lines, 3) and _has_reason(lines, 4) and not _has_reason(lines, 6) and _has_reason(lines, 7)
    tree = ast.parse("\n".join(lines))
    own = [n.lineno for n in ast.walk(tree) if _imports_own_module(n)]
    assert own == [3, 4, 6, 7]
    assert len(_sources()) > 100
