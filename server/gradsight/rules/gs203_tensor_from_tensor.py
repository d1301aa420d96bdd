from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import GraphCutEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class TensorFromTensor(Rule):
    code = "GS203"
    name = "tensor-from-grad-tensor"
    severity = Severity.WARNING
    summary = "`torch.tensor(t)` copies a tensor that requires grad without its history: gradients stop here."
    events = (GraphCutEvent,)
    what_it_does = ("Flags `torch.tensor(t)` where `t` requires grad, with grad mode on (typically inside a loss "
                    "or a forward pass), and `torch.tensor([t1, t2, ...])` of a list (a literal or a list "
                    "comprehension) whose tensors require grad.")
    why_bad = ("The copy is a new leaf with `requires_grad=False`: nothing upstream of it receives a gradient. "
               "PyTorch only warns (\"To copy construct from a tensor, it is recommended to use "
               "sourceTensor.detach().clone()...\"), and `torch.tensor([a, b])` built from tensors does not even "
               "warn. `torch.as_tensor(t)` is different: it returns `t` itself, history included.")
    example = "scores = model(x)\nloss = torch.tensor(scores).pow(2).mean()"
    use_instead = ("scores = model(x)\nloss = scores.pow(2).mean()\n# a list of tensors: torch.stack(parts) keeps "
                   "their history")
    references = ("https://pytorch.org/docs/stable/generated/torch.tensor.html",)
    valid = (
        # The conversion only runs for a value that is not a tensor (torchrl's RBF controller `max_action`).
        Valid("import torch\n\n\ndef squash(x, max_action=1.0):\n    if not isinstance(max_action, torch.Tensor):\n"
              "        max_action = torch.tensor(max_action, dtype=x.dtype)\n    return torch.tanh(x) * max_action\n\n\n"
              "w = torch.randn(3, requires_grad=True)\nscale = torch.ones(3, requires_grad=True)\n"
              "squash(w, scale).sum().backward()\nsquash(w).sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.as_tensor(x * 2)\ny.sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = torch.tensor(x * 2)\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum() for i in range(3)]\n"
              "torch.stack(parts).sum().backward()\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum().item() for i in range(3)]\n"
              "stats = torch.tensor(parts)\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.tensor(x * 2)\n", line=3,
                runtime="silent: not y.requires_grad"),
        Invalid("import torch\nw = torch.randn(3, requires_grad=True)\nparts = [(w * i).sum() for i in range(3)]\n"
                "total = torch.tensor(parts).sum()\n", line=4, runtime="silent: not total.requires_grad"),
    )

    def check(self, event: GraphCutEvent, report) -> None:
        origin = event.target.origin
        report.add(self, event.node,
                   f"`{event.api}()` copies values that require grad into a tensor without history: no gradient "
                   "flows back. Use the tensor itself (or `.detach().clone()` if a copy without gradient is "
                   "intended)" + (msg(f"; the values come from {origin.text}, line ", origin.line, ".") if origin else "."),
                   related=[origin])
