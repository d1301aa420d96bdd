from __future__ import annotations

from ..engine.events import ReassignEvent
from ..engine.values import TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class UpdateMakesNonLeaf(Rule):
    code = "GS506"
    name = "update-makes-non-leaf"
    severity = Severity.WARNING
    summary = "A manual update `w = w - lr * w.grad` outside `no_grad` turns the weight into a non-leaf."
    events = (ReassignEvent,)
    what_it_does = ("Flags `w = w - lr * w.grad` (any rebinding of a leaf that requires grad computed from its own "
                    "`.grad`) with grad mode on.")
    why_bad = ("The new `w` is a computed tensor with history, not a leaf: the next backward leaves `w.grad` as None "
               "(with a warning) and the graph grows every step. Update in place under `torch.no_grad()`.")
    example = "w = w - 0.1 * w.grad"
    use_instead = "with torch.no_grad():\n    w -= 0.1 * w.grad\nw.grad = None"
    references = ("https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html",)
    valid = (Valid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
                   "    w -= 0.1 * w.grad\n"),)
    invalid = (
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nw = w - 0.1 * w.grad\n",
                line=4, runtime="silent: not w.is_leaf"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
                "    w = w - 0.1 * w.grad\n", line=5, runtime="silent: not w.requires_grad"),
    )

    def check(self, event: ReassignEvent, report) -> None:
        old, new = event.old, event.new
        if not (event.reads_grad and isinstance(old, TensorVal) and isinstance(new, TensorVal)):
            return
        if old.leaf is not Tri.YES or old.rg is not Tri.YES or old.param:
            return
        if new.leaf is Tri.NO and new.rg is Tri.YES:
            msg = (f"This rebinds `{event.key}` to a computed tensor (grad mode is on), so it is no longer a leaf: "
                   f"the next backward leaves `{event.key}.grad` as None; update it in place under `torch.no_grad()`.")
        elif new.rg is Tri.NO and new.nograd is not None and "grad mode was disabled" in new.nograd.text:
            msg = (f"Under no_grad this rebinds `{event.key}` to a new tensor that does not require grad, so the "
                   f"next backward never reaches it; update it in place (`{event.key} -= ...`).")
        else:
            return
        report.add(self, event.node, msg, related=[old.origin])
