from __future__ import annotations

import sys

from ..findings import Severity
from .base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    code = "GS001"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = ("The file does not parse; gradsight skips the top-level statement with the error and analyses the "
               "rest of the file.")
    events = ()
    what_it_does = (
        "Reports a syntax error, for example while you are still typing a line. The rest of the file is still "
        "analysed: gradsight cuts the file into top-level chunks (a chunk starts at a column-0 line of code that "
        "does not continue the statement above: not `else`/`elif`/`except`/`finally`, not after a decorator or "
        "a backslash), parses each on its own, and skips only the chunks that do not parse, with one GS001 "
        "each. A chunk ends where Python's tokenizer really starts the next top-level statement: lines inside a "
        "string or a bracket belong to the chunk that opened it. One exception: a column-0 `def`, `class` or "
        "`async def` (with its decorators) inside a bracket left open starts a new chunk, because no bracket "
        "can hold a definition, so the file is invalid whatever the bracket was meant to hold, and reading the "
        "definition as code is what closing the bracket will give. Strings get no such exception: whatever an "
        "unterminated triple-quoted string swallows is skipped with it, so no finding comes from text Python "
        "reads as a string. Where the cut cannot be certain (an f-string whose braces do not balance, which "
        "Python 3.12+ may read differently), gradsight analyses only the lines before the error, as the "
        "message then says. Python 3.12 syntax is not an error when gradsight runs on an older Python: an "
        "f-string that reuses its quotes or holds a backslash, a comment or a line break in a field (PEP 701), "
        "type parameters (`def first[T](...)`, `class Box[T]:`) and `type` statements (PEP 695) get a note of "
        "severity information instead, and the statement around them is analysed (the f-string's fields and the "
        "`type` statement are not). Where the project's `pyproject.toml` says it supports an older Python "
        "(`requires-python = \">=3.10\"`, Poetry's `python = \"^3.10\"`), the note is an error: the file does not "
        "parse there. On Python 3.12 and later gradsight parses such code itself and says nothing about it.")
    why_bad = ("Python cannot run the file. gradsight keeps analysing everything outside the broken statement, "
               "so findings elsewhere do not disappear and come back while you type, but nothing inside the "
               "skipped statement is checked.")
    example = "loss = criterion(model(x), y\nloss.backward()"
    use_instead = "loss = criterion(model(x), y)\nloss.backward()"
    references = ("https://docs.python.org/3/reference/grammar.html",)
    valid = (Valid("x = (1 +\n     2)\n"),)
    invalid = (Invalid("import torch\nx = torch.zeros(3\n", line=2, runtime="raises: was never closed"),)

    @classmethod
    def report(cls, exc: SyntaxError, reporter) -> None:
        """The text could not be cut into chunks with certainty: only the part before the error is analysed."""
        line = exc.lineno or 1
        reporter.add(cls, None, f"Syntax error: {exc.msg}; gradsight analysed only the code before line {line}.",
                     span=cls._span(reporter, line, exc.offset or 1))

    @classmethod
    def report_skipped(cls, reporter, msg: str, line: int, col: int, first: int, last: int) -> None:
        """A chunk (lines first..last) that does not parse on its own: skipped, the rest analysed."""
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        reporter.add(cls, None, f"Syntax error: {msg}; gradsight skipped {lines} and analysed the rest of the file.",
                     span=cls._span(reporter, line, col))

    @classmethod
    def report_newer(cls, reporter, line: int, col: int, what: str) -> None:
        """Python 3.12 syntax that the Python running gradsight (older) rejects, analysed rewritten (`what`: "f-string",
        "type-parameters" or "type-statement", see `engine/newsyntax.py`). Information, unless the project says it
        supports an older Python (`requires-python`), where it is the syntax error it will be there."""
        subject, missed = {
            "f-string": ("This f-string is Python 3.12 syntax (PEP 701)", "its fields were not analysed"),
            "type-parameters": ("These type parameters are Python 3.12 syntax (PEP 695)",
                                "the definition was analysed without them"),
            "type-statement": ("This `type` statement is Python 3.12 syntax (PEP 695)", "it was not analysed"),
        }[what]
        oldest = getattr(reporter.config, "requires_python", None)
        if oldest is not None and oldest < (3, 12):
            reporter.add(cls, None, f"{subject}, a syntax error on Python {oldest[0]}.{oldest[1]}, which the project "
                                    f"supports (`requires-python`); {missed}.",
                         span=cls._span(reporter, line, col), severity=Severity.ERROR)
            return
        running = "Python {}.{}".format(*sys.version_info[:2])
        reporter.add(cls, None, f"{subject}, which {running} (running gradsight) cannot parse: {missed}.",
                     span=cls._span(reporter, line, col), severity=Severity.INFORMATION)

    @staticmethod
    def _span(reporter, line: int, col: int) -> tuple:
        text = reporter.source.line_text(line)
        col = max(1, min(col, len(text) + 1))
        end = len(text) + 1 if len(text) + 1 > col else col
        return (line, col, line, end)
