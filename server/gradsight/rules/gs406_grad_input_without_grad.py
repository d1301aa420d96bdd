from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import BackwardEvent
from ..engine.values import TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class GradInputWithoutGrad(Rule):
    code = "GS406"
    name = "grad-input-without-grad"
    severity = Severity.ERROR
    summary = "`torch.autograd.grad(y, x)` needs every `x` to require grad."
    events = (BackwardEvent,)
    what_it_does = "Flags `torch.autograd.grad(outputs, inputs)` where an input certainly does not require grad."
    why_bad = ("PyTorch raises `RuntimeError: One of the differentiated Tensors does not require grad`. Input "
               "gradients (saliency, adversarial examples) need `x.requires_grad_()` before the forward pass.")
    example = "x = batch\ny = model(x).sum()\ng, = torch.autograd.grad(y, x)"
    use_instead = "x = batch.requires_grad_()\ny = model(x).sum()\ng, = torch.autograd.grad(y, x)"
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    valid = (Valid("import torch\nx = torch.randn(3).requires_grad_()\ny = (x * 2).sum()\ng, = torch.autograd.grad(y, x)\n"),)
    invalid = (Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nx = torch.randn(2, 3)\ny = m(x).sum()\n"
                       "g, = torch.autograd.grad(y, x)\n", line=6,
                       runtime="raises: One of the differentiated Tensors does not require grad"),)

    def check(self, event: BackwardEvent, report) -> None:
        if event.api != "torch.autograd.grad" or event.target.rg is not Tri.YES:
            return
        for node, val in event.inputs:
            if isinstance(val, TensorVal) and val.rg is Tri.NO:
                cause = val.nograd
                line = report.source.span(event.node)[0]
                report.add(self, event.node,
                           f"`{report.source.segment(node)}` does not require grad, so `torch.autograd.grad` raises."
                           + (msg(f" {cause.text[0].upper()}{cause.text[1:]} (line ", cause.line, ").") if cause else "")
                           + " Call `.requires_grad_()` on it before the forward pass.",
                           related=[cause] if cause is not None and cause.line != line else [])
                return
