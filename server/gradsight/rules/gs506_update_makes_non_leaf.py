from __future__ import annotations

import ast

from ..engine.report import text as join
from ..engine.events import ReassignEvent
from ..engine.values import UNKNOWN, TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class UpdateMakesNonLeaf(Rule):
    code = "GS506"
    name = "update-makes-non-leaf"
    severity = Severity.WARNING
    summary = "A manual update `w = w - lr * w.grad` rebinds the weight to a new tensor: a non-leaf, or (under `no_grad`) one without grad."
    events = (ReassignEvent,)
    what_it_does = ("Flags `w = w - lr * w.grad` (any rebinding of a leaf that requires grad computed from its own "
                    "`.grad`) with grad mode on, and the same rebinding inside `torch.no_grad()`, which makes `w` a "
                    "new tensor that does not require grad. In a training loop the message names the statement "
                    "that fails next: the following read of `w.grad` (None now) or the next iteration's backward. "
                    "A rebinding followed by `w.requires_grad_()` (or `w.requires_grad = True`) before any such "
                    "use is correct and not reported. Also flags `for p in model.parameters(): p = p - lr * p.grad`: "
                    "rebinding the loop variable to a value nothing reads leaves the parameter unchanged.")
    why_bad = ("With grad mode on, the new `w` is a computed tensor with history, not a leaf: the next backward "
               "leaves `w.grad` as None (with a warning) and the graph grows every step. Under `no_grad`, the new "
               "`w` does not require grad at all: `w.grad.zero_()` raises `'NoneType' object has no attribute "
               "'zero_'`, the next update raises a `TypeError` on `lr * None`, or the next backward raises "
               "\"element 0 of tensors does not require grad\" when `w` was its only trainable input. Update in "
               "place under `torch.no_grad()`.")
    example = "w = w - 0.1 * w.grad"
    use_instead = "with torch.no_grad():\n    w -= 0.1 * w.grad\nw.grad = None"
    references = ("https://pytorch.org/tutorials/beginner/examples_autograd/polynomial_autograd.html",)
    valid = (
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
              "    w -= 0.1 * w.grad\n"),
        Valid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
              "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n"
              "    w.requires_grad_()\n"),
        Valid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
              "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n"
              "    w.grad.zero_()\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nm(torch.randn(4, 3)).pow(2).mean().backward()\n"
              "fast = []\nfor p in m.parameters():\n    p = p - 0.1 * p.grad\n    fast.append(p)\n"),
        Valid("import torch\n\n\ndef step(w, lr):\n    with torch.no_grad():\n        w -= lr * w.grad\n"
              "    w.grad.zero_()\n    return w\n"),
    )
    invalid = (
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nw = w - 0.1 * w.grad\n",
                line=4, runtime="silent: not w.is_leaf"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\n(w * 2).sum().backward()\nwith torch.no_grad():\n"
                "    w = w - 0.1 * w.grad\n", line=5, runtime="silent: not w.requires_grad"),
        Invalid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
                "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n"
                "    w.grad.zero_()\n", line=8, runtime="raises: 'NoneType' object has no attribute 'zero_'"),
        Invalid("import torch\nx = torch.randn(4)\nw = torch.randn(4, requires_grad=True)\nfor _ in range(3):\n"
                "    loss = (w * x).sum()\n    loss.backward()\n    with torch.no_grad():\n        w = w - 0.1 * w.grad\n",
                line=8, runtime="raises: element 0 of tensors does not require grad"),
        Invalid("import torch\nimport torch.nn as nn\nm = nn.Linear(3, 1)\nw0 = m.weight.detach().clone()\n"
                "m(torch.randn(4, 3)).pow(2).mean().backward()\nwith torch.no_grad():\n"
                "    for p in m.parameters():\n        p = p - 0.1 * p.grad\n", line=8,
                runtime="silent: torch.equal(m.weight, w0)"),
    )

    def check(self, event: ReassignEvent, report) -> None:
        old, new = event.old, event.new
        if not event.reads_grad or isinstance(event.node, ast.AugAssign):
            return  # `w -= lr * w.grad` updates the tensor in place
        nxt = event.next_use
        key = event.key
        if nxt is not None and nxt[0] == "loopvar":
            if isinstance(old, TensorVal) and old.rg is Tri.NO:
                return
            loop = nxt[1]
            report.add(self, event.node,
                       f"This rebinds the loop variable `{key}` to a new tensor, so the tensor it named is never "
                       f"updated. Update it in place under `torch.no_grad()` (`{key} -= ...`).", related=[loop])
            return
        if nxt is not None and nxt[0] == "reset":
            return  # `w.requires_grad_()` (or a new binding) follows
        if isinstance(old, TensorVal) and isinstance(new, TensorVal) and old.leaf is Tri.YES and not old.param \
                and new.leaf is Tri.NO and new.rg is Tri.YES and old.rg is Tri.YES:
            msg = (f"This rebinds `{key}` to a computed tensor (not a leaf), so the next backward leaves its "
                   f"`.grad` None. Update it in place under `torch.no_grad()`.")
            report.add(self, event.node, msg, related=[old.origin])
            return
        if event.grad_mode is not Tri.NO:
            return
        if isinstance(old, TensorVal):
            if old.leaf is not Tri.YES or old.param or old.rg is Tri.NO:
                return
            # In a loop the value before the update joins the first iteration's leaf with the rebound tensor:
            # `sources` says a path still had the leaf created with requires_grad=True.
            if old.rg is Tri.MAYBE and not (old.sources and nxt is not None):
                return
        elif old is UNKNOWN:
            # A function's argument: reading `key.grad` says it is trained; report only when a later statement
            # surely meets the rebound tensor.
            if nxt is None:
                return
        else:
            return
        value = getattr(event.node, "value", None)
        text = report.source.segment(value) if value is not None else ""
        if isinstance(new, TensorVal) and new.rg is not Tri.NO or "requires_grad" in text or "Parameter" in text:
            return
        related = [old.origin] if isinstance(old, TensorVal) else []
        extra = ""
        if nxt is None:
            then = "the next backward never reaches it"
        else:
            kind, use = nxt
            related.append(use)
            if kind == "grad":
                then = join("its `.grad` (line ", use.line, ") is None afterwards")
            else:
                then = join("the backward at line ", use.line, " misses it")
                extra = " That backward raises if nothing else in its graph requires grad."
        msg = join(f"Under no_grad this rebinds `{key}` to a tensor without grad, so ", then, f".{extra} "
                   f"Update it in place (`{key} -= ...`).")
        report.add(self, event.node, msg, related=related)
