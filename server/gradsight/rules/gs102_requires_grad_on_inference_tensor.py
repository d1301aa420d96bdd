from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RequiresGradOnInferenceTensor(Rule):
    code = "GS102"
    name = "requires-grad-on-inference-tensor"
    severity = Severity.ERROR
    summary = "`requires_grad_()` on a tensor created under `torch.inference_mode()` raises outside it."
    events = (FactoryEvent,)
    what_it_does = "Flags `t.requires_grad_()` (or `t.requires_grad = True`) where `t` is an inference tensor."
    why_bad = ("PyTorch raises `RuntimeError: Setting requires_grad=True on inference tensor outside InferenceMode "
               "is not allowed.`")
    example = "with torch.inference_mode():\n    x = torch.randn(3)\nx.requires_grad_()"
    use_instead = "with torch.inference_mode():\n    x = torch.randn(3)\nx = x.clone().requires_grad_()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#inference-mode",)
    valid = (
        Valid("import torch\nwith torch.no_grad():\n    x = torch.randn(3)\nx.requires_grad_()\n"),
        Valid("import torch\nwith torch.inference_mode():\n    x = torch.randn(3)\nx = x.clone().requires_grad_()\n"),
    )
    invalid = (
        Invalid("import torch\nwith torch.inference_mode():\n    x = torch.randn(3)\nx.requires_grad_()\n", line=4,
                runtime="raises: Setting requires_grad=True on inference tensor outside InferenceMode"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        if not (event.target.inference and event.flag is Tri.YES and not event.inference_mode
                and event.api in ("requires_grad_", "attr:requires_grad")):
            return
        origin = event.target.origin
        report.add(self, event.node,
                   "An inference tensor cannot require grad, so this raises; `.clone()` it first. It was created "
                   "under `torch.inference_mode()`" + (msg(" (line ", origin.line, ")") if origin else "")
                   + "; PyTorch says \"Setting requires_grad=True on inference tensor outside InferenceMode is not "
                   "allowed\".", related=[origin])
