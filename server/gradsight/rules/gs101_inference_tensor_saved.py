from __future__ import annotations

from ..engine.report import Note, text as msg
from ..engine.events import InferenceSaveEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


# A knowledge-distillation loss (timm's `apply_kd_loss`) with the teacher under `torch.{ctx}()`.
_KD = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
       "def kd_loss(student_logits, teacher, x):\n    with torch.{ctx}():\n"
       "        target = F.softmax(teacher(x), dim=-1)\n"
       "    return F.kl_div(F.log_softmax(student_logits, dim=-1), target, reduction=\"batchmean\")\n\n\n"
       "student, teacher = nn.Linear(4, 3), nn.Linear(4, 3)\nx = torch.randn(2, 4)\n"
       "kd_loss(student(x), teacher, x).backward()\n")


class InferenceTensorSaved(Rule):
    code = "GS101"
    name = "inference-tensor-saved-for-backward"
    severity = Severity.ERROR
    summary = "A tensor created under `torch.inference_mode()` is used where autograd must save it."
    events = (InferenceSaveEvent,)
    what_it_does = ("Flags an op with grad mode on that must save, for its backward, a tensor created inside "
                    "`torch.inference_mode()` (a batch or cache prepared for evaluation, then reused in training). A loss "
                    "whose target the function made in its own `inference_mode()` block, computed after leaving it "
                    "with grad mode on, is reported even when its prediction's grad state is unknown (a parameter): "
                    "leaving the block for the loss is taken as evidence that the prediction requires grad, so that "
                    "finding is a warning, on the `with` to change.")
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
        # The teacher's target made under `no_grad()`: a plain tensor without history, which the loss may save.
        Valid(_KD.format(ctx="no_grad")),
        # The prediction made in the inference-mode block, the loss only read as a number: nothing is saved.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "def evaluate(model, x, y):\n    with torch.inference_mode():\n        out = model(x)\n"
              "    return F.cross_entropy(out, y).item()\n\n\n"
              "evaluate(nn.Linear(4, 3), torch.randn(2, 4), torch.tensor([0, 2]))\n"),
    )
    invalid = (
        Invalid("import torch\nwith torch.inference_mode():\n    b = torch.randn(3)\nw = torch.randn(3, requires_grad=True)\n"
                "y = (w * b).sum()\n", line=5, runtime="raises: Inference tensors cannot be saved for backward"),
        Invalid("import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 2)\nwith torch.inference_mode():\n"
                "    batch = torch.randn(4, 3)\nout = layer(batch)\n", line=6,
                runtime="raises: Inference tensors cannot be saved for backward"),
        # A distillation loss whose teacher target comes from the function's own inference-mode block: the student's
        # prediction (a parameter, unknown here) is taken to require grad, since the function leaves the block to
        # compute the loss with autograd on (evidence from use: a warning on the `with`).
        Invalid(_KD.format(ctx="inference_mode"), line=7, severity=Severity.WARNING,
                runtime="raises: Inference tensors cannot be saved for backward"),
    )

    def check(self, event: InferenceSaveEvent, report) -> None:
        origin = event.target.origin
        where = msg(" (created at line ", origin.line, ")") if origin else ""
        if event.evidence is not None:
            # The prediction's grad state is known from use only (the function left its own inference-mode block
            # to compute this loss with autograd on): a warning, never an error (evidence levels). The finding
            # stands on the `with` to change; the loss that raises is a related note.
            loss = event.raises
            report.add(self, event.node,
                       msg(f"This `inference_mode()` makes `{event.expr}` an inference tensor, which `{event.op}` must "
                           f"save: the loss raises. Use `torch.no_grad()` here, or `.clone()` `{event.expr}`; PyTorch "
                           "says \"Inference tensors cannot be saved for backward\"."),
                       severity=Severity.WARNING,
                       related=[Note(loss.lineno, loss.col_offset + 1, "raises here"), event.evidence, origin])
            return
        report.add(self, event.node,
                   msg(f"`{event.op}` must save an inference tensor for backward, so this raises. `{event.expr}` was "
                       "created under `torch.inference_mode()`", where, "; PyTorch says \"Inference tensors cannot be "
                       "saved for backward\". Create it under `torch.no_grad()` or `.clone()` it."), related=[origin])
