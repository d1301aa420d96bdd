from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import InplaceEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class DataInplaceOnSaved(Rule):
    code = "GS204"
    name = "data-write-on-saved-tensor"
    severity = Severity.WARNING
    summary = "Writing through `.data` to a tensor saved for backward gives silently wrong gradients."
    events = (InplaceEvent,)
    what_it_does = ("Flags in-place writes through `t.data` (`t.data.mul_(2)`, `t.data[...] = v`) where an "
                    "earlier op saved `t` for its backward.")
    why_bad = ("`.data` bypasses autograd's version counter, so PyTorch does not raise the in-place error it "
               "would raise for `t.mul_(2)`: backward runs with the modified value and computes wrong "
               "gradients, silently.")
    example = "y = torch.sigmoid(x)\ny.data.mul_(2)\ny.sum().backward()  # x.grad is wrong"
    use_instead = "y = torch.sigmoid(x)\ny = y * 2\ny.sum().backward()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nm.weight.data.mul_(0.5)\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x + 1\ny.data.mul_(2)\ny.sum().backward()\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny.data.mul_(2)\n"
                "y.sum().backward()\n", line=4,
                runtime="silent: not torch.allclose(x.grad, (torch.sigmoid(x) * (1 - torch.sigmoid(x))).detach())"),
    )

    def check(self, event: InplaceEvent, report) -> None:
        t = event.target
        if not (t.is_data and t.saved is not None):
            return
        report.add(self, event.node,
                   msg(f"This writes through `.data` into a tensor that {t.saved.text} at line ", t.saved.line,
                       "; autograd cannot see the change, so backward silently computes wrong gradients."),
                   related=[t.saved])
