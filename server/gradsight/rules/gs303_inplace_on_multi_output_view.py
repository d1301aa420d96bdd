from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ViewInplaceEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class InplaceOnMultiOutputView(Rule):
    code = "GS303"
    name = "inplace-on-split-output"
    severity = Severity.ERROR
    summary = "Outputs of `split`/`chunk`/`unbind` are views that may not be modified in place when they require grad."
    events = (ViewInplaceEvent,)
    what_it_does = ("Flags in-place ops on an output of `split`, `chunk`, `unbind` (and friends) when that output "
                    "requires grad and grad mode is on.")
    why_bad = ("PyTorch raises `RuntimeError: Output 0 of SplitBackward0 is a view and is being modified inplace. "
               "This view is the output of a function that returns multiple views...`. Use an out-of-place op, "
               "or `.clone()` the piece first.")
    example = "a, b = h.chunk(2, dim=-1)\na.mul_(torch.sigmoid(b))"
    use_instead = "a, b = h.chunk(2, dim=-1)\na = a * torch.sigmoid(b)"
    references = ("https://pytorch.org/docs/stable/generated/torch.split.html",)
    valid = (
        Valid("import torch\nx = torch.randn(4)\na, b = x.split(2)\na.mul_(2)\n"),
        Valid("import torch\nx = torch.randn(4, requires_grad=True)\na, b = x.split(2)\na = a * 2\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(4, requires_grad=True)\na, b = x.split(2)\na.mul_(2)\n", line=4,
                runtime="raises: is a view and is being modified inplace"),
        Invalid("import torch\nx = torch.randn(2, 2, requires_grad=True) * 1\nrows = x.unbind(0)\nfirst = rows[0]\n"
                "first[0] = 1.0\n", line=5, runtime="raises: is a view and is being modified inplace"),
    )

    def check(self, event: ViewInplaceEvent, report) -> None:
        t = event.target
        if not t.multiview or t.rg is not Tri.YES or event.grad_mode is not Tri.YES or event.op in ("detach_", "resize_"):
            return
        where = msg(f" ({t.view.text}, line ", t.view.line, ")") if t.view else ""
        report.add(self, event.node,
                   msg(f"`{event.expr}` is one of several views returned together", where, "; modifying it in place "
                       "raises \"... is a view and is being modified inplace\"; use an out-of-place op or `.clone()` "
                       "it."),
                   related=[t.view])
