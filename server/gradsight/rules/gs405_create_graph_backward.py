from __future__ import annotations

from ..engine.events import BackwardEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class CreateGraphBackward(Rule):
    code = "GS405"
    name = "backward-create-graph-leak"
    severity = Severity.WARNING
    summary = "`backward(create_graph=True)` makes a reference cycle between parameters and their gradients."
    events = (BackwardEvent,)
    what_it_does = "Flags `loss.backward(create_graph=True)`."
    why_bad = ("PyTorch warns: \"Using backward() with create_graph=True will create a reference cycle between the "
               "parameter and its gradient which can cause a memory leak.\" For gradient penalties and other "
               "higher-order terms use `torch.autograd.grad(..., create_graph=True)`, or reset `.grad` to None after use.")
    example = "loss.backward(create_graph=True)\npenalty = sum(p.grad.pow(2).sum() for p in model.parameters())"
    use_instead = ("grads = torch.autograd.grad(loss, list(model.parameters()), create_graph=True)\n"
                   "penalty = sum(g.pow(2).sum() for g in grads)")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",)
    valid = (Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = (x ** 3).sum()\n"
                   "g, = torch.autograd.grad(y, x, create_graph=True)\ng.sum().backward()\n"),)
    invalid = (Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = (x ** 3).sum()\n"
                       "y.backward(create_graph=True)\n", line=4,
                       runtime="silent: x.grad is not None and x.grad.grad_fn is not None"),)

    def check(self, event: BackwardEvent, report) -> None:
        if event.api != "Tensor.backward" or event.create_graph is not Tri.YES or event.target.rg is not Tri.YES:
            return
        report.add(self, event.node,
                   "`backward(create_graph=True)` leaks memory through a reference cycle; use `torch.autograd.grad`. "
                   "The gradients it stores in `.grad` reference the graph that made them.")
