from __future__ import annotations

from ..engine.events import CheckpointEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class CheckpointWithoutGradInput(Rule):
    code = "GS505"
    name = "checkpoint-without-grad-input"
    severity = Severity.WARNING
    summary = "Reentrant `checkpoint` with no input that requires grad gives the checkpointed parameters no gradient."
    events = (CheckpointEvent,)
    what_it_does = ("Flags `torch.utils.checkpoint.checkpoint(fn, *inputs)` in reentrant mode (the default, or "
                    "`use_reentrant=True`) when no input requires grad.")
    why_bad = ("PyTorch warns \"None of the inputs have requires_grad=True. Gradients will be None\": the output "
               "has no history, so the parameters inside `fn` never receive gradients (and a backward on it alone "
               "raises `element 0 of tensors does not require grad`). Pass `use_reentrant=False`.")
    example = "out = checkpoint(block, x)  # x is the input batch"
    use_instead = "out = checkpoint(block, x, use_reentrant=False)"
    references = ("https://pytorch.org/docs/stable/checkpoint.html",)
    valid = (Valid("import torch\nimport torch.nn as nn\nfrom torch.utils.checkpoint import checkpoint\nblock = nn.Linear(3, 3)\n"
                   "out = checkpoint(block, torch.randn(2, 3), use_reentrant=False)\nout.sum().backward()\n"),)
    invalid = (Invalid("import torch\nimport torch.nn as nn\nfrom torch.utils.checkpoint import checkpoint\nblock = nn.Linear(3, 3)\n"
                       "out = checkpoint(block, torch.randn(2, 3), use_reentrant=True)\nout.sum().backward()\n", line=5,
                       runtime="raises: element 0 of tensors does not require grad"),)

    def check(self, event: CheckpointEvent, report) -> None:
        if event.reentrant is not Tri.YES or event.grad_mode is not Tri.YES:
            return
        if not all(v.rg is Tri.NO for v in event.inputs):
            return
        report.add(self, event.node,
                   "No input of this reentrant checkpoint requires grad, so the parameters inside get no gradient. "
                   "Its output has no history (PyTorch warns \"None of the inputs have requires_grad=True\"); pass "
                   "`use_reentrant=False`.")
