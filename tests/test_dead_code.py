"""No dead code in the library: vulture finds no unused function, class, method, attribute or variable in
tunefarm/ or search_spaces/.

A name counts as used when anything in the repository uses it -- the library, its tests, examples or
benchmarks -- so a public helper that only tests call stays, and one that nothing calls fails here. Names used
only through a string or by Python itself are listed, with who uses them, in ``dead_code_whitelist.py``;
visitor methods dispatched by the node's class name are recognised by their prefix.
"""
from __future__ import annotations

from pathlib import Path

import vulture

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("tunefarm", "search_spaces")
USERS = ("tests", "examples", "benchmarks")
# methods looked up as ``getattr(self, prefix + type(node).__name__)``
DISPATCHED_BY_CLASS_NAME = ["visit_*", "_e_*", "_s_*"]
MIN_CONFIDENCE = 60  # vulture's lowest: unused functions, classes, methods, attributes and variables


def test_nothing_in_the_library_is_unused():
    v = vulture.Vulture(ignore_names=DISPATCHED_BY_CLASS_NAME)
    v.scavenge([str(ROOT / p) for p in LIBRARY + USERS])
    library = tuple(str(ROOT / p) + "/" for p in LIBRARY)
    unused = [item.get_report(add_size=False) for item in v.get_unused_code(min_confidence=MIN_CONFIDENCE)
              if str(item.filename).startswith(library)]
    assert not unused, ("unused code (remove it, or if something uses it through a string, list it in "
                        "tests/dead_code_whitelist.py saying what):\n" + "\n".join(unused))
