"""Parse errors that point at the offending source line.

A script is Python source read with ``inspect.getsource`` (or given as text). Errors name the file, the line
as it is in that file, and the construct, so a user sees exactly what the script front end did not accept.
"""
from __future__ import annotations

import ast


class ParseError(SyntaxError, ValueError):
    """A TVMScript construct that tunefarm does not accept (or a malformed program).

    It is a ``SyntaxError`` (so tracebacks show file and line) and a ``ValueError`` (bad input).
    ``construct`` names what was rejected; ``filename`` / ``lineno`` / ``offset`` / ``text`` locate it.
    """

    def __init__(self, message: str, filename: str = "<script>", lineno: int | None = None,
                 offset: int | None = None, text: str | None = None, construct: str | None = None):
        super().__init__(message, (filename, lineno, offset, text))
        self.construct = construct
        self.message = message

    def __str__(self) -> str:
        where = self.filename or "<script>"
        if self.lineno is not None:
            where += f":{self.lineno}"
            if self.offset is not None:
                where += f":{self.offset}"
        out = f"{where}: {self.message}"
        if self.text:
            line = self.text.rstrip("\n")
            stripped = line.lstrip()
            out += "\n    " + stripped
            if self.offset is not None:
                col = max(0, self.offset - 1 - (len(line) - len(stripped)))
                out += "\n    " + " " * col + "^"
        return out


class Source:
    """Script text plus where it came from: file name and the line/column offsets of the snippet in it."""

    def __init__(self, text: str, filename: str = "<script>", line_offset: int = 0, col_offset: int = 0):
        self.text = text
        self.filename = filename
        self.line_offset = line_offset  # snippet line 1 is file line 1 + line_offset
        self.col_offset = col_offset  # columns removed by dedent
        self.lines = text.splitlines()

    def parse(self) -> ast.Module:
        try:
            return ast.parse(self.text, filename=self.filename)
        except SyntaxError as e:
            lineno = (e.lineno or 1) + self.line_offset
            raise ParseError(f"invalid Python syntax: {e.msg}", self.filename, lineno,
                             (e.offset or 0) + self.col_offset or None, self.line_text(e.lineno or 1),
                             "python-syntax") from None
        except RecursionError:
            raise ParseError("the source is nested too deeply for Python's parser (an expression of thousands of "
                             "terms?)", self.filename, construct="too-deep") from None

    def line_text(self, snippet_lineno: int) -> str | None:
        if 1 <= snippet_lineno <= len(self.lines):
            return " " * self.col_offset + self.lines[snippet_lineno - 1]
        return None

    def error(self, node, message: str, construct: str | None = None) -> ParseError:
        """A ParseError located at an AST node of this source."""
        lineno = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        file_line = lineno + self.line_offset if lineno is not None else None
        offset = col + 1 + self.col_offset if col is not None else None
        text = self.line_text(lineno) if lineno is not None else None
        return ParseError(message, self.filename, file_line, offset, text, construct)


def describe(node) -> str:
    """A short human description of an AST node for error messages (``while loop``, ``lambda``, ...)."""
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every node ast.parse produces
        text = type(node).__name__
    if len(text) > 60:
        text = text[:57] + "..."
    return text
