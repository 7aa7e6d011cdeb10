"""The layers of docs/ARCHITECTURE.md, enforced: each package imports only from the rows below its own.

Every ``import`` and ``from ... import`` of tunefarm/ and search_spaces/ is read with ``ast`` -- at module level
and inside functions alike -- and resolved to the package it names. A package may import its own modules and
anything in a lower row; never a package of its own row, never a higher one. With strictly ordered rows no
cycle between packages can exist; the second test checks that directly as well.
"""
from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ROWS = {
    "ir": 0,
    "script": 1, "te": 1, "reference": 1, "target": 1,
    "schedule": 2,
    "codegen": 3,
    "runtime": 4,
    "farm": 5, "database": 5, "search": 5,
    "search_spaces": 6,
    "tuning": 7,
    "graph": 8,
    "nn": 9,
    "dashboard": 10, "tvm": 10, "testing": 10,
    "cli": 11,
}
# the package's own entry points: lazy public names and ``python -m tunefarm``
EXEMPT = {"tunefarm/__init__.py", "tunefarm/__main__.py"}


def _package(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "search_spaces":
        return "search_spaces"
    if parts[0] != "tunefarm" or len(parts) < 2:
        return None
    return parts[1]


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, nested ones included."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            names = [f"{name}.{a.name}" for a in node.names] if node.module is None else [name]
            out += [(node.lineno, n) for n in names]
    return out


def _sources() -> list[Path]:
    files = sorted((ROOT / "tunefarm").rglob("*.py")) + sorted((ROOT / "search_spaces").rglob("*.py"))
    return [f for f in files if str(f.relative_to(ROOT)) not in EXEMPT]


def _edges() -> list[tuple[str, str, str]]:
    """(importing package, imported package, where) for imports between two different packages."""
    out = []
    for path in _sources():
        src = _package(_module_name(path))
        for line, name in _imports(path):
            dst = _package(name)
            if dst is not None and dst != src:
                out.append((src, dst, f"{path.relative_to(ROOT)}:{line} imports {name}"))
    return out


def test_every_package_has_a_row():
    pkgs = {_package(_module_name(p)) for p in _sources()}
    assert pkgs <= set(ROWS), f"packages without a row in the layer table: {sorted(pkgs - set(ROWS))}"


def test_imports_only_go_down_the_layers():
    unknown = sorted({where for src, dst, where in _edges() if dst not in ROWS})
    assert not unknown, "imports of modules that are in no package of the layer table:\n" + "\n".join(unknown)
    bad = [f"{where} (row {ROWS[src]} {src} -> row {ROWS[dst]} {dst})"
           for src, dst, where in _edges() if ROWS[dst] >= ROWS[src]]
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_cycle_between_packages():
    graph = collections.defaultdict(set)
    for src, dst, _ in _edges():
        graph[src].add(dst)

    def reaches(a: str, b: str, seen: set) -> bool:
        for n in graph.get(a, ()):
            if n == b:
                return True
            if n not in seen:
                seen.add(n)
                if reaches(n, b, seen):
                    return True
        return False

    cycles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a, set())})
    assert not cycles, f"packages that import each other (directly or through others): {cycles}"


# Import circles between modules of one package that are part of the design, and why; any other circle fails.
NATURAL_CIRCLES = {
    "ir": "a node prints itself through the printer, which imports every node type",
    "te": "a tensor's operators build tensors through the op library, which imports the tensor",
    "dashboard": "the PostgreSQL queries, a subclass, load on use: psycopg is an optional extra",
}


def _module_imports(path: Path, modules: set) -> set:
    """The modules ``path`` imports (nested imports too; ``from pkg import mod`` names ``pkg.mod``), without
    its own ancestor packages (Python has run those before the module anyway)."""
    mod = _module_name(path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != mod and not mod.startswith(name + "."):
                out.add(name)
    return out


def _module_circles() -> list[set]:
    """The sets of modules that import one another (strongly connected components of more than one)."""
    paths = {_module_name(p): p for p in _sources()}
    graph = {m: _module_imports(p, set(paths)) for m, p in paths.items()}
    reach = {m: set() for m in graph}
    for m in graph:
        todo = list(graph[m])
        while todo:
            n = todo.pop()
            if n in graph and n not in reach[m]:
                reach[m].add(n)
                todo += graph[n]
    circles = {frozenset({m} | {n for n in reach[m] if m in reach[n]}) for m in graph if m in reach[m]}
    return [set(c) for c in circles]


def test_modules_import_one_another_only_where_the_design_says():
    """E.g. a trace drives a schedule it is given and never builds one: schedule.py imports trace.py, never
    the reverse, not even inside a function (``Schedule.from_trace`` builds a schedule from a trace)."""
    bad = sorted(sorted(c) for c in _module_circles() if {_package(m) for m in c} - set(NATURAL_CIRCLES))
    assert not bad, "modules that import one another (directly or through others):\n" + "\n".join(map(str, bad))
    trace = ROOT / "tunefarm" / "schedule" / "trace.py"
    assert "tunefarm.schedule.schedule" not in _module_imports(trace, {"tunefarm.schedule.schedule"})
