from __future__ import annotations

import ast

from ..engine.report import text as msg
from ..engine.events import ModuleCallEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _calls_backward(tree) -> bool:
    return tree is not None and any(
        isinstance(n, ast.Attribute) and n.attr in ("backward", "grad") and isinstance(n.ctx, ast.Load)
        and not (isinstance(n.value, ast.Name) and n.attr == "grad")
        for n in ast.walk(tree))


class EvalBuildsGraph(Rule):
    code = "GS103"
    name = "eval-builds-graph"
    severity = Severity.HINT
    summary = "A model in eval mode runs with grad mode on, building an autograd graph nothing uses."
    events = (ModuleCallEvent,)
    what_it_does = ("Hints at a call of a module after `.eval()` while grad mode is on, in a file that never "
                    "calls backward.")
    why_bad = ("`model.eval()` only switches layers such as dropout and batch norm; it does not stop autograd. "
               "Every output keeps its graph (and the saved activations) alive: slower evaluation and more "
               "memory, for nothing.")
    example = "model.eval()\nfor x in loader:\n    preds.append(model(x))"
    use_instead = "model.eval()\nwith torch.no_grad():\n    for x in loader:\n        preds.append(model(x))"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\nmodel.eval()\nwith torch.no_grad():\n"
              "    out = model(torch.randn(2, 3))\n"),
        Valid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\nmodel.eval()\nout = model(torch.randn(2, 3))\n"
              "out.sum().backward()\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\nmodel.eval()\nout = model(torch.randn(2, 3))\n",
                line=5, runtime="silent: out.requires_grad and out.grad_fn is not None"),
    )

    def check(self, event: ModuleCallEvent, report) -> None:
        if _calls_backward(report.tree):
            return
        report.add(self, event.node,
                   msg("Evaluation with grad mode on builds an autograd graph nothing uses; wrap it in `torch.no_grad()`. "
                       "The model was put in eval mode at line ", event.eval_at.line, ", which does not stop autograd."),
                   related=[event.eval_at])
