from __future__ import annotations

from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RequiresGradOnNonLeaf(Rule):
    code = "GS209"
    name = "requires-grad-on-non-leaf"
    severity = Severity.ERROR
    summary = "Setting `.requires_grad` on a computed (non-leaf) tensor raises."
    events = (FactoryEvent,)
    what_it_does = "Flags `y.requires_grad = False` (or `True`) where `y` is the result of an op with history."
    why_bad = ("PyTorch raises `RuntimeError: you can only change requires_grad flags of leaf variables.` To use a "
               "computed value without gradient, take `y.detach()`.")
    example = "h = encoder(x)\nh.requires_grad = False"
    use_instead = "h = encoder(x).detach()"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",)
    valid = (Valid("import torch\nw = torch.randn(3, requires_grad=True)\nw.requires_grad = False\n"),
             # FastSpeech2's loss: the first input is the batch (targets, leaves), not the prediction.
             Valid("import torch\nimport torch.nn as nn\n\n\nclass SpeechLoss(nn.Module):\n"
                   "    def forward(self, inputs, predictions):\n        (mel_targets, pitch_targets) = inputs[1:]\n"
                   "        mel_predictions, pitch_predictions = predictions\n"
                   "        pitch_targets.requires_grad = False\n        mel_targets = mel_targets[:, :3]\n"
                   "        mel_targets.requires_grad = False\n"
                   "        return (mel_predictions - mel_targets).pow(2).mean() + (pitch_predictions - pitch_targets).abs().mean()\n"
                   "\n\nw = torch.randn(3, requires_grad=True)\nbatch = (None, torch.randn(2, 4), torch.randn(2))\n"
                   "SpeechLoss()(batch, (torch.randn(2, 3) * w, torch.randn(2) * w[0])).backward()\n"),
             # DeepRobust's Meta-Self: each item is detached (a new leaf) before its flag is set; the list holds the
             # computed weights of the previous call's updates only until then.
             Valid("import torch\n\n\nclass MetaLearner:\n    def __init__(self):\n"
                   "        self.weights = [torch.randn(3, requires_grad=True)]\n\n    def inner_train(self, x):\n"
                   "        for i in range(len(self.weights)):\n            self.weights[i] = self.weights[i].detach()\n"
                   "            self.weights[i].requires_grad = True\n        for _ in range(2):\n"
                   "            loss = (x * self.weights[0]).sum()\n"
                   "            grads = torch.autograd.grad(loss, self.weights, create_graph=True)\n"
                   "            self.weights = [w - 0.1 * g for w, g in zip(self.weights, grads)]\n\n\n"
                   "learner = MetaLearner()\nlearner.inner_train(torch.randn(3))\nlearner.inner_train(torch.randn(3))\n"),)
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.requires_grad = False\n", line=4,
                runtime="raises: you can only change requires_grad flags of leaf variables"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        if event.api != "attr:requires_grad" or event.target.leaf is not Tri.NO:
            return
        if event.target.evidence:
            # Non-leaf only by evidence of use (a loss module's first input taken for the prediction): "raises"
            # would be a guess. FastSpeech2's loss sets `requires_grad = False` on the batch's targets, leaves.
            return
        report.add(self, event.node,
                   "Changing `requires_grad` of a computed (non-leaf) tensor raises; use `.detach()` instead. "
                   "PyTorch says \"you can only change requires_grad flags of leaf variables\".",
                   related=[event.target.origin])
