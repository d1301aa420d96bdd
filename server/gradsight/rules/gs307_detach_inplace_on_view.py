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
    what_it_does = ("Flags `v.detach_()` where `v` is a view (a slice, `.view()`, `.t()`, a piece of `.chunk()`...). Every "
                    "view raises, whether it requires grad or not, so a `v` of unknown origin (a model's output when the "
                    "model is a parameter) is flagged when the function binds it once, to a view of what it reads: a "
                    "warning then, as only the `detach_()` call shows that `v` is a tensor.")
    why_bad = "PyTorch raises `RuntimeError: Can't detach views in-place. Use detach() instead.`"
    example = "head = x[:2]\nhead.detach_()"
    use_instead = "head = x[:2].detach()"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach_.html",)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True) * 2\nx.detach_()\n"),
        # A model's result of unknown kind indexed by an integer: a tuple's element (not a view) answers too.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Two(nn.Module):\n    def forward(self, x):\n"
              "        return x * 2, x + 1\n\n\ndef pseudo_labels(model, inputs):\n    outs = model(inputs)\n"
              "    first = outs[0]\n    first.detach_()\n    return first.softmax(-1)\n\n\n"
              "pseudo_labels(Two(), torch.randn(4, 3))\n"),
        # The softmax of the view, detached out of place (FixMatch's fix).
        Valid("import torch\nimport torch.nn as nn\n\n\ndef pseudo_labels(model, inputs, n):\n"
              "    logits = model(inputs)\n    weak, strong = logits[n:].chunk(2)\n"
              "    return torch.softmax(weak, dim=-1).detach(), strong\n\n\n"
              "pseudo_labels(nn.Linear(3, 5), torch.randn(6, 3), 2)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(4, requires_grad=True)\nhead = x[:2]\nhead.detach_()\n", line=4,
                runtime="raises: Can't detach views in-place"),
        # `model` is a parameter, so what `logits` is stays unknown; the function binds `weak` once, to a piece of
        # `chunk`, and `weak.detach_()` shows it is a tensor: a view (FixMatch's pseudo-labels).
        Invalid("import torch\nimport torch.nn as nn\n\n\ndef pseudo_labels(model, inputs, n):\n"
                "    logits = model(inputs)\n    weak, strong = logits[n:].chunk(2)\n"
                "    return torch.softmax(weak.detach_(), dim=-1), strong\n\n\n"
                "pseudo_labels(nn.Linear(3, 5), torch.randn(6, 3), 2)\n", line=8,
                runtime="raises: Can't detach views in-place"),
    )

    def check(self, event: ViewInplaceEvent, report) -> None:
        if event.op != "detach_":
            return
        v = event.target.view
        report.add(self, event.node,
                   f"`{event.expr}` is a view" + (msg(" (line ", v.line, ")") if v else "")
                   + ", and views cannot be detached in place: this raises \"Can't detach views in-place\"; "
                   "use `.detach()`.", related=[v],
                   # A value gradsight cannot see, a tensor because `detach_()` is called on it (evidence of use):
                   # a warning, never an error.
                   severity=Severity.WARNING if event.target.evidence else None)
