from __future__ import annotations

from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RequiresGradOnNonLeaf(Rule):
    code = "GS209"
    name = "requires-grad-on-non-leaf"
    severity = Severity.ERROR
    summary = "Setting `.requires_grad` on a computed (non-leaf) tensor raises."
    events = (FactoryEvent,)
    what_it_does = "Flags `y.requires_grad = False` (or `True`) where `y` is the result of an op with history."
    why_bad = ("PyTorch raises `RuntimeError: you can only change requires_grad flags of leaf variables.` To use a "
               "computed value without gradient, take `y.detach()`.")
    example = "h = encoder(x)\nh.requires_grad = False"
    use_instead = "h = encoder(x).detach()"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",)
    valid = (Valid("import torch\nw = torch.randn(3, requires_grad=True)\nw.requires_grad = False\n"),)
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.requires_grad = False\n", line=4,
                runtime="raises: you can only change requires_grad flags of leaf variables"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        if event.api != "attr:requires_grad" or event.target.leaf is not Tri.NO:
            return
        report.add(self, event.node,
                   "Changing `requires_grad` of a computed (non-leaf) tensor raises; use `.detach()` instead. "
                   "PyTorch says \"you can only change requires_grad flags of leaf variables\".",
                   related=[event.target.origin])
