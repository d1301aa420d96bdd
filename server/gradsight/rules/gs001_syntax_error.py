from __future__ import annotations

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
        "message then says.")
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

    @staticmethod
    def _span(reporter, line: int, col: int) -> tuple:
        text = reporter.source.line_text(line)
        col = max(1, min(col, len(text) + 1))
        end = len(text) + 1 if len(text) + 1 > col else col
        return (line, col, line, end)
