from __future__ import annotations

import ast

from ..engine.events import BackwardEvent
from ..engine.query import FileEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, dotted_name


_MESSAGE = ("`backward(create_graph=True)` leaks memory through a reference cycle; use `torch.autograd.grad`. "
            "The gradients it stores in `.grad` reference the graph that made them.")

class CreateGraphBackward(Rule):
    code = "GS405"
    name = "backward-create-graph-leak"
    severity = Severity.WARNING
    summary = "`backward(create_graph=True)` makes a reference cycle between parameters and their gradients."
    events = (BackwardEvent, FileEvent)
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
                       runtime="silent: x.grad is not None and x.grad.grad_fn is not None"),
               # A gradient penalty through a network handed in: nothing local shows that `op` requires grad, but
               # the backward runs only if it does.
               Invalid("import torch\n\n\ndef penalty(dis, real):\n    merged = real.clone()\n"
                       "    merged.requires_grad = True\n    op = dis(merged)\n"
                       "    op.backward(gradient=torch.ones_like(op), create_graph=True)\n"
                       "    return ((merged.grad.flatten(1).norm(dim=1) - 1) ** 2).mean()\n\n\n"
                       "p = penalty(torch.nn.Linear(3, 1), torch.randn(2, 3))\n", line=8,
                       runtime="silent: p.requires_grad"),)

    def check(self, event, report) -> None:
        if isinstance(event, FileEvent):
            self._unseen_receivers(event.query, report)
            return
        if event.api != "Tensor.backward" or event.create_graph is not Tri.YES or event.target.rg is not Tri.YES:
            return
        report.add(self, event.node, _MESSAGE)

    def _unseen_receivers(self, q, report) -> None:
        """`x.backward(create_graph=True)` on a value the dataflow does not follow (a network's output handed in,
        `self.dis(merged)`): the backward runs only if `x` has a graph, so the cycle is made whenever the line runs.
        A receiver the dataflow does follow is reported (or not) by the `BackwardEvent` path above, at the same
        place, so the two never give two findings."""
        if "backward" not in q.attrs:
            return
        for call in q.surveyed("GS405.create-graph-backwards", _create_graph_backwards):
            if dotted_name(call.func.value) is None:
                continue
            report.add(self, call, _MESSAGE)


def _create_graph_backwards(top) -> list:
    out = []
    for call in top.calls:
        f = call.func
        if not (isinstance(f, ast.Attribute) and f.attr == "backward"):
            continue
        for kw in call.keywords:
            if kw.arg == "create_graph" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                out.append(call)
    return out
