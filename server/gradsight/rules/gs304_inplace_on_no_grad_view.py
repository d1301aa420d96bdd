from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ViewInplaceEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class InplaceOnNoGradView(Rule):
    code = "GS304"
    name = "inplace-on-no-grad-view"
    severity = Severity.ERROR
    summary = "A view taken under `no_grad` of a tensor that requires grad may not be modified in place outside it."
    events = (ViewInplaceEvent,)
    what_it_does = ("Flags in-place ops, with grad mode on, on a view (slice, `.view()`, `.t()`...) that was "
                    "created inside `torch.no_grad()` from a tensor that requires grad.")
    why_bad = ("PyTorch raises `RuntimeError: A view was created in no_grad mode and is being modified inplace "
               "with grad mode enabled.` Move the view and the in-place op both inside the `no_grad` block, or "
               "both outside.")
    example = "with torch.no_grad():\n    head = w[:2]\nhead.mul_(0.5)"
    use_instead = "with torch.no_grad():\n    head = w[:2]\n    head.mul_(0.5)"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",)
    valid = (Valid("import torch\nw = torch.randn(4, requires_grad=True)\nwith torch.no_grad():\n    head = w[:2]\n"
                   "    head.mul_(0.5)\n"),)
    invalid = (
        Invalid("import torch\nw = torch.randn(4, requires_grad=True)\nwith torch.no_grad():\n    head = w[:2]\n"
                "head.mul_(0.5)\n", line=5, runtime="raises: A view was created in no_grad mode"),
    )

    def check(self, event: ViewInplaceEvent, report) -> None:
        t = event.target
        if not t.nograd_view or event.grad_mode is not Tri.YES or event.op in ("detach_", "resize_"):
            return
        where = msg(" at line ", t.view.line) if t.view else ""
        report.add(self, event.node,
                   msg("Modifying a view made under no_grad in place with grad mode on raises. "
                       f"`{event.expr}` is that view", where, "; PyTorch says \"A view was created in no_grad mode "
                       "and is being modified inplace\"."),
                   related=[t.view])
