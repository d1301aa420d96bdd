from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at


class RewrappedLeaf(Rule):
    code = "GS210"
    name = "rewrapped-leaf-hides-cut"
    severity = Severity.WARNING
    summary = "`torch.tensor(x.item(), requires_grad=True)` makes a fresh leaf: gradients never reach what computed x."
    events = (FactoryEvent,)
    what_it_does = ("Flags a tensor created with `requires_grad=True` from values that left autograd (`.item()`, "
                    "`.tolist()`, `.numpy()`, `float(t)`), typically to \"fix\" the error "
                    "`element 0 of tensors does not require grad`.")
    why_bad = ("The new tensor is a leaf with no history. Backward runs without error, but stops at it: the model "
               "that produced the values receives no gradient and never trains, silently.")
    example = "loss = torch.tensor(criterion(model(x), y).item(), requires_grad=True)\nloss.backward()"
    use_instead = "loss = criterion(model(x), y)\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.item.html",)
    valid = (Valid("import torch\nv = [1.0, 2.0]\nw = torch.tensor(v, requires_grad=True)\n"),)
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\nout = model(torch.randn(4, 3)).mean()\n"
                "loss = torch.tensor(out.item(), requires_grad=True)\nloss.backward()\n", line=5,
                runtime="silent: model.weight.grad is None"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        if event.api != "rewrap" or event.flag is not Tri.YES:
            return
        cut = event.target.nograd
        report.add(self, event.node,
                   msg("This new leaf is built from values that left autograd, so gradients stop here. Use the "
                       f"original tensor: {cut.text} at ", at(cut), "."), related=[cut])
