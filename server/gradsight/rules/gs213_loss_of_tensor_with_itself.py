from __future__ import annotations

import ast
from typing import Optional

from ..engine.events import SameTensorLossEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid


class LossOfTensorWithItself(Rule):
    code = "GS213"
    name = "loss-of-tensor-with-itself"
    severity = Severity.WARNING
    summary = ("A distance loss compares a tensor with itself (`target = pred`, then edits to `target`): the loss "
               "and every gradient are zero.")
    events = (SameTensorLossEvent,)
    what_it_does = ("Flags `mse_loss`, `l1_loss`, `smooth_l1_loss`, `huber_loss` (and `nn.MSELoss`, ...) whose "
                    "prediction and target are the same tensor's memory: one tensor under two names, or a tensor "
                    "and its `.detach()`. The finding stands on the assignment that made the second name when the "
                    "file shows it (`target = pred`), else on the loss.")
    why_bad = ("`target = pred` does not copy: both names are one tensor, and writing the TD targets into "
               "`target[i, a] = r + gamma * q_next` writes them into the prediction too. The loss then measures the "
               "distance of a tensor to itself, zero, so every gradient is zero and the network never learns. "
               "Nothing raises (the classic DQN mistake; philtabor's `Qtarget = Qpred`).")
    example = ("q_pred = net(states)\nq_target = q_pred\nq_target[idx, actions] = rewards + gamma * q_next.max(1)[0]\n"
               "loss = F.mse_loss(q_target, q_pred)   # zero")
    use_instead = ("q_pred = net(states)\nq_target = q_pred.detach().clone()\n"
                   "q_target[idx, actions] = rewards + gamma * q_next.max(1)[0]\nloss = F.mse_loss(q_target, q_pred)")
    fix_safety = "No automatic fix: copy the target (`.detach().clone()`), which changes the values the loss sees."
    references = ("https://pytorch.org/docs/stable/tensor_view.html",)
    valid = (
        # Two calls of one feature extractor (mmagic's LightCNN feature loss): the results are allocated by the same
        # statement inside its `forward`, but they are two tensors.
        Valid("import torch\ntorch.manual_seed(0)\nimport torch.nn as nn\n\n\ndef make_backbone():\n    return nn.Sequential(nn.Linear(4, 4), nn.ReLU())\n\n\nclass Feat(nn.Module):\n    def __init__(self):\n        super().__init__()\n        model = make_backbone()\n        self.features = nn.Sequential(*list(model.children()))\n        self.features.requires_grad_(False)\n\n    def forward(self, x):\n        return self.features(x)\n\n\nclass PerceptualLoss(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.model = Feat()\n        self.criterion = nn.L1Loss()\n\n    def forward(self, pred, gt):\n        pred_feature = self.model(pred)\n        gt_feature = self.model(gt).detach()\n        return self.criterion(pred_feature, gt_feature)\n\n\nw = torch.randn(2, 4, requires_grad=True)\nloss = PerceptualLoss()(w * 2, torch.randn(2, 4))\nloss.backward()\nassert loss.item() > 0 and w.grad.abs().sum() > 0\n"),
        Valid("import torch\ntorch.manual_seed(0)\nimport torch.nn as nn\nnet = nn.Linear(3, 2)\npred = net(torch.randn(4, 3))\n"
              "target = pred.detach().clone()\ntarget[torch.arange(4), 0] = torch.randn(4)\n"
              "loss = nn.MSELoss()(pred, target)\nloss.backward()\nassert net.weight.grad.abs().sum() > 0\n"),
        # Two different slices of one tensor are different values.
        Valid("import torch\ntorch.manual_seed(0)\nimport torch.nn.functional as F\nx = torch.randn(4, 3, requires_grad=True)\n"
              "y = x * 2\nloss = F.mse_loss(y[0], y[1])\nloss.backward()\nassert x.grad.abs().sum() > 0\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nnet = nn.Linear(3, 2)\nloss_fn = nn.MSELoss()\n"
                "pred = net(torch.randn(4, 3))\ntarget = pred\ntarget[torch.arange(4), 0] = torch.randn(4)\n"
                "loss = loss_fn(target, pred)\nloss.backward()\n", line=6,
                runtime="silent: net.weight.grad.abs().sum() == 0"),
        Invalid("import torch\nimport torch.nn.functional as F\nw = torch.randn(3, requires_grad=True)\ny = w * 2\n"
                "loss = F.l1_loss(y, y.detach())\nloss.backward()\n", line=5,
                runtime="silent: w.grad.abs().sum() == 0"),
    )

    def check(self, event: SameTensorLossEvent, report) -> None:
        call = event.node
        names = [n.id for n in (event.pred_node, event.target_node) if isinstance(n, ast.Name)]
        alias = _alias_assignment(report.tree, call, names) if len(names) == 2 and names[0] != names[1] else None
        if alias is not None:
            target, source, where = alias
            report.add(self, where,
                       f"`{target} = {source}` does not copy, so the `{event.op}` below is zero, and so is every "
                       f"gradient. It compares `{source}` with itself; use `{source}.detach().clone()`.",
                       related=[Note(call.lineno, call.col_offset + 1, "the loss is zero here")])
            return
        a, b = (report.source.segment(n) for n in (event.pred_node, event.target_node))
        report.add(self, call, f"`{a}` and `{b}` are one tensor's memory, so this `{event.op}` is zero and so is "
                               "every gradient. Compare with a copy made before the tensor is changed.")


def _alias_assignment(tree, call: ast.AST, names: list) -> Optional[tuple]:
    """The last `a = b` (or `b = a`) between the two loss arguments before the loss, in the loss's function."""
    if tree is None:
        return None
    best = None
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Name) and {n.targets[0].id, n.value.id} == set(names) \
                and n.lineno < call.lineno and (best is None or n.lineno > best[2].lineno):
            if _same_scope(tree, n, call):
                best = (n.targets[0].id, n.value.id, n)
    return best


def _same_scope(tree, a: ast.AST, b: ast.AST) -> bool:
    def scope(node):
        found = tree
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= node.lineno <= n.end_lineno \
                    and (found is tree or n.lineno >= found.lineno):
                found = n
        return found
    return scope(a) is scope(b)
