from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import InferenceSaveEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class InferenceTensorSaved(Rule):
    code = "GS101"
    name = "inference-tensor-saved-for-backward"
    severity = Severity.ERROR
    summary = "A tensor created under `torch.inference_mode()` is used where autograd must save it."
    events = (InferenceSaveEvent,)
    what_it_does = ("Flags an op with grad mode on that must save, for its backward, a tensor created inside "
                    "`torch.inference_mode()` (a batch or cache prepared for evaluation, then reused in training).")
    why_bad = ("PyTorch raises `RuntimeError: Inference tensors cannot be saved for backward.` Inference tensors "
               "skip version counting, so autograd cannot trust them. Ops that save nothing (`w + b`) still "
               "work, which is why this appears only in some code paths.")
    example = "with torch.inference_mode():\n    feats = encoder(x)\nloss = (head.weight @ feats.T).sum()  # matmul saves feats"
    use_instead = "with torch.no_grad():\n    feats = encoder(x)\nloss = (head.weight @ feats.T).sum()"
    fix_safety = "No automatic fix: use `torch.no_grad()` instead of `inference_mode()`, or `.clone()` the tensor."
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#inference-mode",)
    valid = (
        Valid("import torch\nwith torch.no_grad():\n    b = torch.randn(3)\nw = torch.randn(3, requires_grad=True)\n"
              "(w * b).sum().backward()\n"),
        Valid("import torch\nwith torch.inference_mode():\n    b = torch.randn(3)\nw = torch.randn(3, requires_grad=True)\n"
              "(w + b).sum().backward()\n"),
    )
    invalid = (
        Invalid("import torch\nwith torch.inference_mode():\n    b = torch.randn(3)\nw = torch.randn(3, requires_grad=True)\n"
                "y = (w * b).sum()\n", line=5, runtime="raises: Inference tensors cannot be saved for backward"),
        Invalid("import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\nwith torch.inference_mode():\n"
                "    batch = torch.randn(4, 3)\nout = layer(batch)\n", line=6,
                runtime="raises: Inference tensors cannot be saved for backward"),
    )

    def check(self, event: InferenceSaveEvent, report) -> None:
        origin = event.target.origin
        where = msg(" (created at line ", origin.line, ")") if origin else ""
        report.add(self, event.node,
                   msg(f"`{event.op}` must save an inference tensor for backward, so this raises. `{event.expr}` was "
                       "created under `torch.inference_mode()`", where, "; PyTorch says \"Inference tensors cannot be "
                       "saved for backward\". Create it under `torch.no_grad()` or `.clone()` it."), related=[origin])
