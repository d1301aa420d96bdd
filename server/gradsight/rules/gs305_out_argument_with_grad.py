from __future__ import annotations

from ..engine.events import OutArgEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


# `torch.max(p, dim=1, out=...)` on a softmax output with a graph; `{out}`: the keyword's value.
_MAX_OUT = ("import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(8, 2)\n"
            "probs = torch.softmax(model(torch.randn(4, 8)), dim=1)\n"
            "_, labels = torch.max(probs, dim=1, keepdim=False, out={out})\n")


class OutArgumentWithGrad(Rule):
    code = "GS305"
    name = "out-argument-with-grad"
    severity = Severity.ERROR
    summary = "`out=` arguments do not support autograd when an input requires grad."
    events = (OutArgEvent,)
    what_it_does = "Flags `torch.op(..., out=buf)` with grad mode on when an input requires grad."
    why_bad = ("PyTorch raises `RuntimeError: exp(): functions with out=... arguments don't support automatic "
               "differentiation, but one of the arguments requires grad.`")
    example = "torch.exp(x, out=buf)"
    use_instead = "buf = torch.exp(x)"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    valid = (Valid("import torch\nx = torch.randn(3, requires_grad=True)\nbuf = torch.empty(3)\nwith torch.no_grad():\n"
                   "    torch.exp(x, out=buf)\n"),
             # `out=None` spelled out is the default: no buffer, the call records history (dlwpt-code;
             # bench/fresh25-false/01).
             Valid(_MAX_OUT.format(out="None")))
    invalid = (
        Invalid(_MAX_OUT.format(out="(torch.empty(4), torch.empty(4, dtype=torch.long))"), line=6,
                runtime="raises: functions with out=... arguments don't support automatic differentiation"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nbuf = torch.empty(3)\ntorch.exp(x, out=buf)\n",
                line=4, runtime="raises: functions with out=... arguments don't support automatic differentiation"),
    )

    def check(self, event: OutArgEvent, report) -> None:
        if event.grad_mode is not Tri.YES:
            return
        report.add(self, event.node,
                   "An `out=` call on inputs that require grad raises; assign the result instead. "
                   f"`{event.op.rsplit('.', 1)[-1]}(..., out=...)` cannot record history and `{event.grad_inputs[0]}` "
                   "requires grad; PyTorch says \"functions with out=... arguments don't support automatic "
                   "differentiation\".")
