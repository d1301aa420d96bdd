from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ViewInplaceEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class DetachInplaceOnView(Rule):
    code = "GS307"
    name = "detach-inplace-on-view"
    severity = Severity.ERROR
    summary = "`detach_()` on a view raises; use `detach()`."
    events = (ViewInplaceEvent,)
    what_it_does = "Flags `v.detach_()` where `v` is a view (a slice, `.view()`, `.t()`...)."
    why_bad = "PyTorch raises `RuntimeError: Can't detach views in-place. Use detach() instead.`"
    example = "head = x[:2]\nhead.detach_()"
    use_instead = "head = x[:2].detach()"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach_.html",)
    valid = (Valid("import torch\nx = torch.randn(3, requires_grad=True) * 2\nx.detach_()\n"),)
    invalid = (Invalid("import torch\nx = torch.randn(4, requires_grad=True)\nhead = x[:2]\nhead.detach_()\n", line=4,
                       runtime="raises: Can't detach views in-place"),)

    def check(self, event: ViewInplaceEvent, report) -> None:
        if event.op != "detach_":
            return
        v = event.target.view
        report.add(self, event.node,
                   f"`{event.expr}` is a view" + (msg(" (line ", v.line, ")") if v else "")
                   + ", and views cannot be detached in place: this raises \"Can't detach views in-place\"; "
                   "use `.detach()`.", related=[v])
