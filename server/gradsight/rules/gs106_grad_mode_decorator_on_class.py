from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_MODES = {
    "torch.no_grad": "torch.no_grad()",
    "torch.autograd.no_grad": "torch.no_grad()",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad()",
    "torch.inference_mode": "torch.inference_mode()",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode()",
    "torch.enable_grad": "torch.enable_grad()",
    "torch.autograd.enable_grad": "torch.enable_grad()",
}

_NAMES = {"no_grad", "inference_mode", "enable_grad"}


class GradModeDecoratorOnClass(Rule):
    code = "GS106"
    name = "grad-mode-decorator-on-class"
    severity = Severity.WARNING
    summary = "`@torch.no_grad()` on a class wraps only its construction: its methods still run in grad mode."
    events = (FileEvent,)
    what_it_does = ("Flags `@torch.no_grad()`, `@torch.inference_mode()` and `@torch.enable_grad()` written "
                    "above a `class` statement.")
    why_bad = ("A grad-mode decorator wraps the callable below it. On a class that callable is the class itself, "
               "so only building the instance (`__init__`) runs with the mode; every method runs in whatever mode "
               "its caller is in. An inference wrapper decorated this way records a graph for every batch, and "
               "outputs kept across batches keep their graphs alive (yolov7's `YOLOv7.detect`). PyTorch 2 only "
               "warns (\"Decorating classes is deprecated\").")
    example = "@torch.no_grad()\nclass Detector:\n    def detect(self, images):\n        return self.model(images)"
    use_instead = ("class Detector:\n    @torch.no_grad()\n    def detect(self, images):\n"
                   "        return self.model(images)")
    fix_safety = "No automatic fix: decorate the methods that should run without grad."
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",)
    valid = (
        Valid("import torch\n\n\nclass Detector:\n    def __init__(self):\n        self.model = torch.nn.Linear(2, 2)\n\n"
              "    @torch.no_grad()\n    def detect(self, x):\n        return self.model(x)\n\n\n"
              "assert not Detector().detect(torch.randn(1, 2)).requires_grad\n"),
    )
    invalid = (
        Invalid("import warnings\nimport torch\nwarnings.simplefilter('ignore')\n\n\n@torch.no_grad()\nclass Detector:\n"
                "    def __init__(self):\n        self.model = torch.nn.Linear(2, 2)\n\n    def detect(self, x):\n"
                "        return self.model(x)\n\n\nout = Detector().detect(torch.randn(1, 2))\n", line=6,
                runtime="silent: out.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not (_NAMES & q.attrs or any(qual.rsplit(".", 1)[-1] in _NAMES for qual in q.imported)):
            return  # the common case, decided without a walk (this rule runs on every keystroke)
        for node in _classes(q.tree.body):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                shown = _MODES.get(q.qualname(target) or "")
                if shown is None:
                    continue
                report.add(self, dec, f"`@{shown}` on class `{node.name}` wraps only its `__init__`; its methods "
                                      "run in the caller's grad mode. Decorate the methods instead.")


def _classes(stmts):
    """The module-level class statements (also under a top-level `if` or `try`). Classes nested in functions or
    classes are not looked at: the check runs on every keystroke, and a walk of every statement of a large file
    costs more than such classes are worth."""
    for stmt in stmts:
        if isinstance(stmt, ast.ClassDef):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.Try)):
            yield from _classes(stmt.body)
            yield from _classes(stmt.orelse)
            if isinstance(stmt, ast.Try):
                for h in stmt.handlers:
                    yield from _classes(h.body)
                yield from _classes(stmt.finalbody)
