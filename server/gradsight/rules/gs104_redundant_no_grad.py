from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import GradModeEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RedundantNoGrad(Rule):
    code = "GS104"
    name = "redundant-no-grad"
    severity = Severity.HINT
    summary = "`torch.no_grad()` inside a region where grad mode is already off does nothing."
    events = (GradModeEvent,)
    what_it_does = "Hints at a `with torch.no_grad():` nested in another `no_grad` block or a `@torch.no_grad()` function."
    why_bad = "Nothing breaks; the inner block is noise that suggests grad mode was on there."
    example = "@torch.no_grad()\ndef evaluate(model, x):\n    with torch.no_grad():\n        return model(x)"
    use_instead = "@torch.no_grad()\ndef evaluate(model, x):\n    return model(x)"
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",)
    valid = (Valid("import torch\nwith torch.no_grad():\n    x = torch.randn(3)\nwith torch.no_grad():\n    y = x * 2\n"),)
    invalid = (
        Invalid("import torch\nwith torch.no_grad():\n    x = torch.randn(3)\n    with torch.no_grad():\n        y = x * 2\n",
                line=4, runtime="silent: not y.requires_grad"),
    )

    def check(self, event: GradModeEvent, report) -> None:
        where = msg(" by line ", event.outer.line) if event.outer else ""
        report.add(self, event.node, msg("Grad mode is already disabled here", where,
                                         f"; this `{event.label}` changes nothing."),
                   related=[event.outer])
