from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                       "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
# Constructor options that say whether a part of the module learns.
_OPTIONS = frozenset({"requires_grad", "trainable", "learnable", "freeze"})
# Keywords of a submodule's constructor (or of `nn.Parameter`) that set whether it learns.
_TRAINABILITY_KEYWORDS = frozenset({"requires_grad", "trainable", "learnable", "freeze", "frozen"})


def _grad_off(node: ast.AST, q) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return q.qualname(target) in _GRAD_OFF


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _method(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == name), None)


class NoGradDefeatsTrainableOption(Rule):
    code = "GS108"
    name = "no-grad-defeats-trainable-option"
    severity = Severity.WARNING
    summary = ("A module offers an option to make a submodule learn, but its `forward` always calls that submodule "
               "under `torch.no_grad()`.")
    events = (FileEvent,)
    what_it_does = ("Flags a `with torch.no_grad():` (or `torch.inference_mode()`) that stands directly in the body "
                    "of an `nn.Module`'s `forward` (so it runs whatever the options) and calls `self.X(...)`, when "
                    "`__init__` takes an option named `requires_grad`, `trainable`, `learnable` or `freeze` and hands "
                    "it (or its negation) to the constructor of `self.X` as a trainability keyword "
                    "(`Filterbank(..., freeze=not requires_grad)`). Asking for a learnable submodule then changes "
                    "nothing.")
    why_bad = ("Nothing raises: with the option on, the submodule has parameters that require grad, but its output "
               "is computed without a graph, so they never get a gradient and never change (speechbrain's `Fbank` "
               "and `MFCC` with `requires_grad=True` learned no filterbank until the `no_grad` was removed).")
    example = ("class Fbank(nn.Module):\n    def __init__(self, requires_grad=False):\n        super().__init__()\n"
               "        self.filters = Filterbank(freeze=not requires_grad)\n\n    def forward(self, x):\n"
               "        with torch.no_grad():\n            return self.filters(x)")
    use_instead = "    def forward(self, x):\n        return self.filters(x)   # frozen filters have no grad anyway"
    fix_safety = "There is no automatic fix: remove the `no_grad`, or apply it only when the option is off."
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",)
    _filterbank = ("import torch\nimport torch.nn as nn\n\n\nclass Filterbank(nn.Module):\n"
                   "    def __init__(self, freeze=True):\n        super().__init__()\n"
                   "        self.w = nn.Parameter(torch.ones(4), requires_grad=not freeze)\n\n"
                   "    def forward(self, x):\n        return x * self.w\n\n\n")
    valid = (
        # The fix: no `no_grad`; frozen filters have no grad anyway.
        Valid(_filterbank + "class Fbank(nn.Module):\n    def __init__(self, requires_grad=False):\n"
              "        super().__init__()\n        self.filters = Filterbank(freeze=not requires_grad)\n\n"
              "    def forward(self, x):\n        return self.filters(x)\n\n\n"
              "m = Fbank(requires_grad=True)\nm(torch.randn(2, 4)).sum().backward()\n"
              "assert m.filters.w.grad is not None\n"),
        # The `no_grad` follows the option.
        Valid(_filterbank + "class Fbank(nn.Module):\n    def __init__(self, requires_grad=False):\n"
              "        super().__init__()\n        self.requires_grad = requires_grad\n"
              "        self.filters = Filterbank(freeze=not requires_grad)\n\n    def forward(self, x):\n"
              "        if not self.requires_grad:\n            with torch.no_grad():\n"
              "                return self.filters(x)\n"
              "        return self.filters(x)\n"),
        # A frozen backbone under `no_grad` beside a head the option makes trainable.
        Valid(_filterbank + "class Model(nn.Module):\n    def __init__(self, trainable=True):\n"
              "        super().__init__()\n        self.backbone = nn.Linear(4, 4).requires_grad_(False)\n"
              "        self.head = Filterbank(freeze=not trainable)\n\n    def forward(self, x):\n"
              "        with torch.no_grad():\n            f = self.backbone(x)\n        return self.head(f)\n"),
    )
    invalid = (
        Invalid(_filterbank + "class Fbank(nn.Module):\n    def __init__(self, requires_grad=False):\n"
                "        super().__init__()\n        self.filters = Filterbank(freeze=not requires_grad)\n\n"
                "    def forward(self, x):\n        with torch.no_grad():\n            out = self.filters(x)\n"
                "        return out\n\n\nm = Fbank(requires_grad=True)\nout = m(torch.randn(2, 4))\n",
                line=20, runtime="silent: m.filters.w.requires_grad and not out.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not ({"no_grad", "inference_mode"} & q.attrs) \
                and not any(v.endswith((".no_grad", ".inference_mode")) for v in q.imported):
            return  # the common case, checked first (this rule runs on every keystroke)
        for cls in q.class_defs:
            init, forward = _method(cls, "__init__"), _method(cls, "forward")
            if init is None or forward is None or not q.is_module_class(cls):
                continue
            options = {a.arg for a in init.args.args + init.args.kwonlyargs} & _OPTIONS
            if not options:
                continue
            steered = {}  # attribute -> (option, the keyword's node)
            for n in ast.walk(init):
                if not (isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)):
                    continue
                for kw in n.value.keywords:
                    opt = next((o for o in options if kw.arg in _TRAINABILITY_KEYWORDS and _reads(kw.value, o)), None)
                    if opt is None:
                        continue
                    for t in n.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            steered[t.attr] = (opt, kw)
            if not steered:
                continue
            for stmt in forward.body:
                if not (isinstance(stmt, ast.With) and any(_grad_off(i.context_expr, q) for i in stmt.items)):
                    continue
                call = next((c for s in stmt.body for c in ast.walk(s) if isinstance(c, ast.Call)
                             and isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                             and c.func.value.id == "self" and c.func.attr in steered), None)
                if call is None:
                    continue
                opt, kw = steered[call.func.attr]
                report.add(self, stmt,
                           f"This `no_grad` always runs, so `self.{call.func.attr}` learns nothing even when "
                           f"`{opt}` asks it to. Remove it, or apply it only when the option is off.",
                           related=[Note(kw.value.lineno, kw.value.col_offset + 1,
                                         f"`{opt}` decides here whether `self.{call.func.attr}` learns"),
                                    Note(call.lineno, call.col_offset + 1, "called without grad here")])
