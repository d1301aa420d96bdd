from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Context managers that only act inside `with` (or as decorators). `torch.set_grad_enabled(False)` is not among
# them: called as a function it really switches grad mode off.
_CONTEXT_ONLY = {
    "torch.no_grad": "torch.no_grad()",
    "torch.enable_grad": "torch.enable_grad()",
    "torch.inference_mode": "torch.inference_mode()",
    "torch.autograd.no_grad": "torch.no_grad()",
    "torch.autograd.enable_grad": "torch.enable_grad()",
    "torch.autograd.grad_mode.no_grad": "torch.no_grad()",
    "torch.autograd.grad_mode.inference_mode": "torch.inference_mode()",
}
_CONTEXT_WORDS = frozenset(name.rsplit(".", 1)[-1] for name in _CONTEXT_ONLY)


def _context_statements(top) -> list:
    """A top-level statement's expression statements that call a plain name or an attribute named like a
    grad-mode context (`torch.no_grad()`): a superset of those `check` reports, by spelling alone."""
    out = []
    for node in top.call_statements:
        f = node.value.func
        if type(f) is ast.Name or type(f) is ast.Attribute and f.attr in _CONTEXT_WORDS:
            out.append(node)
    return out


class GradModeCallStatement(Rule):
    code = "GS105"
    name = "grad-mode-call-statement"
    severity = Severity.WARNING
    summary = "`torch.no_grad()` called as a statement creates a context manager and changes nothing."
    events = (FileEvent,)
    what_it_does = ("Flags `torch.no_grad()`, `torch.enable_grad()` and `torch.inference_mode()` used as a plain "
                    "statement instead of in a `with` block or as a decorator.")
    why_bad = ("These objects switch grad mode only when entered (`with`) or when they wrap a function. Called "
               "on their own they build an object and throw it away: the code after them still records an "
               "autograd graph (or still runs without one), so memory use or gradients are not what the line "
               "suggests. `torch.set_grad_enabled(False)` is different: called as a function it does switch "
               "grad mode off, so it is not flagged.")
    example = "torch.no_grad()\npreds = model(x)   # still builds a graph"
    use_instead = "with torch.no_grad():\n    preds = model(x)"
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",
                  "https://pytorch.org/docs/stable/generated/torch.set_grad_enabled.html")
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = x * 2\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ntorch.set_grad_enabled(False)\ny = x * 2\n"
              "torch.set_grad_enabled(True)\n"),
        Valid("import torch\n\n\n@torch.no_grad()\ndef f(x):\n    return x * 2\n\n\n"
              "y = f(torch.randn(3, requires_grad=True))\n"),
        Valid("import torch\nctx = torch.no_grad()\nx = torch.randn(3, requires_grad=True)\nwith ctx:\n    y = x * 2\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ntorch.no_grad()\ny = x * 2\n",
                line=3, runtime="silent: y.requires_grad"),
        Invalid("import torch as T\nfrom torch import inference_mode\nx = T.randn(3, requires_grad=True)\n"
                "inference_mode()\ny = x * 2\n", line=4, runtime="silent: not y.is_inference()"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    torch.enable_grad()\n"
                "    y = x * 2\n", line=4, runtime="silent: not y.requires_grad"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # `ast.Expr` of an `ast.Call` spelled like a grad-mode context (kept per unchanged top-level statement)
        for node in q.surveyed("GS105.context-statements", _context_statements):
            shown = _CONTEXT_ONLY.get(q.call_name(node.value) or "")
            if shown is None:
                continue
            report.add(self, node, f"`{shown}` as a statement changes nothing; use it in a `with` block.")
