from __future__ import annotations

from ..engine.events import BackwardEvent
from ..engine.values import TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class GradInputUnused(Rule):
    code = "GS407"
    name = "grad-input-unused"
    severity = Severity.ERROR
    summary = "`torch.autograd.grad(y, [x, z])` raises when some input does not feed `y` (unless allow_unused=True)."
    events = (BackwardEvent,)
    what_it_does = ("Flags `torch.autograd.grad` inputs created with `requires_grad=True` that gradsight can see "
                    "never reach the outputs.")
    why_bad = ("PyTorch raises `RuntimeError: The differentiated Tensor at index 1 appears to not have been used "
               "in the graph. Set allow_unused=True if this is the desired behavior.`")
    example = "x = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\ngx, gz = torch.autograd.grad((x * 2).sum(), [x, z])"
    use_instead = "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)  # gz is None"
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    valid = (Valid("import torch\nx = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\n"
                   "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)\n"),)
    invalid = (Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\n"
                       "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z])\n", line=4,
                       runtime="raises: appears to not have been used in the graph"),)

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if event.api != "torch.autograd.grad" or t.rg is not Tri.YES or event.allow_unused is not Tri.NO:
            return
        if not t.sources:
            return  # gradsight does not know what feeds the output: stay quiet
        for index, (node, val) in enumerate(event.inputs):
            if not isinstance(val, TensorVal) or val.leaf is not Tri.YES or val.rg is not Tri.YES or not val.sources:
                continue
            if val.sources & t.sources:
                continue
            report.add(self, event.node,
                       f"Input {index} (`{report.source.segment(node)}`) never feeds `{event.expr}`, so "
                       "`torch.autograd.grad` raises \"appears to not have been used in the graph\"; remove it or pass "
                       "`allow_unused=True`.", related=[val.origin])
            return
