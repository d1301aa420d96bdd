from __future__ import annotations

from ..findings import Severity
from .base import Invalid, Rule, Valid


class SyntaxErrorRule(Rule):
    code = "GS001"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "The file does not parse; gradsight analyses only the part before the error."
    events = ()
    what_it_does = "Reports a syntax error, for example while you are still typing a line."
    why_bad = ("Python cannot run the file. gradsight keeps analysing the lines before the error, so hints "
               "stay useful mid-edit, but nothing after the error is checked.")
    example = "loss = criterion(model(x), y\nloss.backward()"
    use_instead = "loss = criterion(model(x), y)\nloss.backward()"
    references = ("https://docs.python.org/3/reference/grammar.html",)
    valid = (Valid("x = (1 +\n     2)\n"),)
    invalid = (Invalid("import torch\nx = torch.zeros(3\n", line=2, runtime="raises: was never closed"),)

    @classmethod
    def report(cls, exc: SyntaxError, reporter) -> None:
        line = exc.lineno or 1
        col = exc.offset or 1
        text = reporter.source.line_text(line)
        col = max(1, min(col, len(text) + 1))
        end = len(text) + 1 if len(text) + 1 > col else col
        reporter.add(cls, None, f"Syntax error: {exc.msg}; gradsight analysed only the code before line {line}.",
                     span=(line, col, line, end))
