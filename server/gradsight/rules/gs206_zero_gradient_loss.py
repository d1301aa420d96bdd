from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import BackwardEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class ZeroGradientLoss(Rule):
    code = "GS206"
    name = "zero-gradient-loss"
    severity = Severity.WARNING
    summary = "Every gradient path of this loss runs through an op whose gradient is zero (round, floor, sign...)."
    events = (BackwardEvent,)
    what_it_does = ("Flags a backward on a loss where every path to a tensor that requires grad goes through "
                    "`round`, `floor`, `ceil`, `trunc` or `sign`.")
    why_bad = ("Those ops are differentiable with gradient zero almost everywhere: backward runs without error, "
               "every gradient is zero, and the model never learns. (Comparisons and `argmax` are worse: "
               "their results do not require grad at all, and GS401 reports the backward.)")
    example = "pred = model(x).round()\nloss = (pred - y).abs().mean()\nloss.backward()"
    use_instead = "pred = model(x)\nloss = (pred - y).abs().mean()\nloss.backward()"
    references = ("https://pytorch.org/docs/stable/generated/torch.round.html",)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nloss = (x * 3).round().sum() + x.sum()\n"
              "loss.backward()\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nloss = (x * 3).round().sum()\nloss.backward()\n",
                line=4, runtime="silent: bool((x.grad == 0).all())"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.YES or t.zerograd is None:
            return
        z = t.zerograd
        report.add(self, event.node,
                   msg(f"Every gradient of `{event.expr}` passes through an op with zero gradient, so nothing learns. "
                       "At line ", z.line, f", {z.text.rstrip('.')}."), related=[z])
