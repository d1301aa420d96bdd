from __future__ import annotations

from ..engine.events import DeadGradEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class DeadRequiresGrad(Rule):
    code = "GS202"
    name = "requires-grad-never-flows"
    severity = Severity.INFORMATION
    summary = "A tensor asks for a gradient, but every path from it to the loss is cut, so `.grad` stays None."
    events = (DeadGradEvent,)
    what_it_does = ("Flags a tensor created with `requires_grad=True` (or `requires_grad_()`) when the file calls "
                    "backward, but every use of the tensor passes through a graph cut (`.detach()`, `.numpy()`, "
                    "`.tolist()`, `.item()`, `torch.tensor(t)`) before reaching the loss.")
    why_bad = ("Nothing fails: the backward runs and the model's weights get gradients, but this tensor's `.grad` "
               "stays `None`. If you meant to optimise it or read its gradient (saliency maps, adversarial "
               "inputs), the cut silently defeats that; if not, `requires_grad=True` is dead weight.")
    example = ("x = torch.randn(4, requires_grad=True)\nfeatures = torch.from_numpy(x.detach().numpy() * 2)\n"
               "loss = model(features).sum()\nloss.backward()  # x.grad is None")
    use_instead = "x = torch.randn(4, requires_grad=True)\nfeatures = x * 2\nloss = model(features).sum()\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    valid = (
        Valid("import torch\nx = torch.randn(4, requires_grad=True)\nloss = (x * 2).sum()\nloss.backward()\n"),
        Valid("import torch\nx = torch.randn(4, requires_grad=True)\ny = x.detach().numpy()\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nx = torch.randn(1, 4, requires_grad=True)\n"
                "feats = torch.from_numpy(x.detach().numpy() * 2)\nmodel = nn.Linear(4, 1)\n"
                "loss = model(feats).sum()\nloss.backward()\n", line=3,
                runtime="silent: x.grad is None and model.weight.grad is not None"),
    )

    def check(self, event: DeadGradEvent, report) -> None:
        cut = event.cuts[0] if event.cuts else None
        where = f" by {cut.text} at line {cut.line}" if cut else ""
        report.add(self, event.node,
                   f"This tensor requires grad, but its path to every backward is cut{where}, so its `.grad` "
                   "will stay None.", related=[cut])
