"""``tvm.transform.PassContext``: the ``with`` block the course wraps builds in.

tunefarm's compiler has one optimization level (everything it knows, always), so the context only checks
the level it is given; builds inside it are the same as outside.
"""
from __future__ import annotations


class PassContext:
    """``with tvm.transform.PassContext(opt_level=3): ...``"""

    def __init__(self, opt_level: int = 2):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 4:
            raise ValueError(f"opt_level is an integer from 0 to 4, got {opt_level!r}")
        self.opt_level = opt_level

    def __enter__(self) -> "PassContext":
        return self

    def __exit__(self, *exc) -> None:
        return None


__all__ = ["PassContext"]
