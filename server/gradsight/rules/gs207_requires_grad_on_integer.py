from __future__ import annotations

from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RequiresGradOnInteger(Rule):
    code = "GS207"
    name = "requires-grad-on-integer-tensor"
    severity = Severity.ERROR
    summary = "Only floating-point and complex tensors can require grad."
    events = (FactoryEvent,)
    what_it_does = ("Flags `requires_grad=True` on a tensor gradsight knows is integer or boolean: "
                    "`torch.zeros(n, dtype=torch.long, requires_grad=True)`, `torch.arange(5).requires_grad_()`, "
                    "`torch.randint(...)` with `requires_grad=True`.")
    why_bad = ("PyTorch raises `RuntimeError: Only Tensors of floating point and complex dtype can require "
               "gradients` (or `only Tensors of floating point dtype can require gradients` from "
               "`requires_grad_()`). Integer values have no gradient; labels and indices never need one.")
    example = "labels = torch.randint(0, 10, (32,), requires_grad=True)"
    use_instead = "labels = torch.randint(0, 10, (32,))"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    valid = (
        # The dtype may come from a dict of keyword arguments (botorch's tests: `**tkwargs` holds `dtype`).
        Valid("import torch\ntkwargs = {\"dtype\": torch.float64}\nzero = torch.tensor(0, requires_grad=True, **tkwargs)\n"
              "(zero * 2).backward()\n"),
        Valid("import torch\nx = torch.arange(5.0, requires_grad=True)\n"),
        Valid("import torch\nx = torch.arange(5).float().requires_grad_()\n"),
        # An empty literal gets the default (float) dtype.
        Valid("import torch\nh = torch.tensor([], requires_grad=True)\ns = torch.tensor((), requires_grad=True)\n"),
    )
    invalid = (
        Invalid("import torch\nlabels = torch.zeros(4, dtype=torch.long, requires_grad=True)\n", line=2,
                runtime="raises: Only Tensors of floating point and complex dtype can require gradients"),
        Invalid("import torch\nscale = torch.tensor(3, requires_grad=True)\n", line=2,
                runtime="raises: Only Tensors of floating point and complex dtype can require gradients"),
        Invalid("import torch\nidx = torch.arange(5)\nidx.requires_grad_()\n", line=3,
                runtime="raises: only Tensors of floating point dtype can require gradients"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        if event.flag is not Tri.YES or event.target.is_int is not Tri.YES:
            return
        if event.api not in ("factory", "requires_grad_", "attr:requires_grad"):
            return
        report.add(self, event.node,
                   "This tensor has an integer or boolean dtype, so requiring grad raises. "
                   "Use a float dtype (`3.0`, `dtype=torch.float32`) or drop requires_grad.")
