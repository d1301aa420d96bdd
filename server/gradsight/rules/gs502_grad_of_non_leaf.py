from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import GradReadEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class GradOfNonLeaf(Rule):
    code = "GS502"
    name = "grad-of-non-leaf"
    severity = Severity.WARNING
    summary = "`.grad` of a non-leaf tensor is None (backward only fills leaves) unless `retain_grad()` was called."
    events = (GradReadEvent,)
    what_it_does = "Flags reads of `t.grad` where `t` is computed (has history) and `t.retain_grad()` was not called."
    why_bad = ("The read returns `None` with a UserWarning (\"The .grad attribute of a Tensor that is not a leaf "
               "Tensor is being accessed...\"); code that then uses it fails with a TypeError far away. Often the "
               "tensor was meant to be a leaf but became a copy (`.to(device)`, `* scale`).")
    example = "h = x * 2\nh.sum().backward()\nprint(h.grad)"
    use_instead = "h = x * 2\nh.retain_grad()\nh.sum().backward()\nprint(h.grad)"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html",)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 2\nh.retain_grad()\nh.sum().backward()\n"
              "g = h.grad\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\ng = x.grad\n"),
    )
    invalid = (Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 2\nh.sum().backward()\ng = h.grad\n",
                       line=5, runtime="silent: g is None"),)

    def check(self, event: GradReadEvent, report) -> None:
        t = event.target
        if t.leaf is not Tri.NO or t.rg is not Tri.YES or t.retains:
            return
        origin = t.origin
        report.add(self, event.node,
                   msg(f"`{event.expr}` is not a leaf", msg(f" ({origin.text}, line ", origin.line, ")") if origin else "")
                   + ", so its `.grad` is None after backward; call `.retain_grad()` before backward or read the "
                   "leaf's `.grad`.", related=[origin])
