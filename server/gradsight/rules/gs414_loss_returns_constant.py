from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Factories that make a fresh tensor with no history (unless `requires_grad=True` is passed).
_FACTORIES = {"tensor", "zeros", "ones", "full", "as_tensor", "scalar_tensor", "zeros_like", "ones_like",
              "full_like", "new_zeros", "new_ones", "new_full", "new_tensor", "empty"}
_LOSS_WORDS = ("Loss", "Criterion")


def _constant_factory(node: ast.AST, q) -> bool:
    """`torch.tensor(0.0, device=...)`, `x.new_zeros(())`: a fresh tensor without `requires_grad=True`."""
    if not isinstance(node, ast.Call) or any(k.arg == "requires_grad" for k in node.keywords):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr.startswith("new_"):
        return f.attr in _FACTORIES
    name = q.qualname(f) or ""
    return name.startswith("torch.") and name.count(".") == 1 and name.split(".")[1] in _FACTORIES


def _own_returns(fn: ast.FunctionDef) -> list:
    """The `return <value>` statements of `fn` itself (not of functions or classes nested in it)."""
    out, todo = [], list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return) and n.value is not None:
            out.append(n)
        elif not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt) or hasattr(c, "body"))
    return sorted(out, key=lambda r: r.lineno)


class LossReturnsConstant(Rule):
    code = "GS414"
    name = "loss-returns-constant"
    severity = Severity.WARNING
    summary = ("A loss module's `forward` returns a new constant tensor on one path (`return torch.tensor(0.0)`): "
               "on a batch that takes it, `loss.backward()` raises.")
    events = (FileEvent,)
    what_it_does = ("Flags a `return torch.tensor(...)` (or `torch.zeros(...)`, `x.new_zeros(...)`, ... without "
                    "`requires_grad=True`) in the `forward` of an `nn.Module` whose name says it is a loss "
                    "(`...Loss`, `...Criterion`), when another `return` of that `forward` returns a computed value: "
                    "an early exit for an edge case (an empty batch, everything padded).")
    why_bad = ("The returned tensor is a leaf with no history. The training loop calls `loss.backward()` on it like "
               "on any other batch, and PyTorch raises \"element 0 of tensors does not require grad and does not "
               "have a grad_fn\" the first time the edge case happens, often hours into training.")
    example = ("class RankLoss(nn.Module):\n    def forward(self, scores, mask):\n        if not mask.any():\n"
               "            return torch.tensor(0.0)\n        return -(scores[mask].log_softmax(0)).mean()")
    use_instead = ("class RankLoss(nn.Module):\n    def forward(self, scores, mask):\n        if not mask.any():\n"
                   "            return scores.sum() * 0.0  # zero, with a graph back to the scores\n"
                   "        return -(scores[mask].log_softmax(0)).mean()")
    fix_safety = ("This rule offers no automatic fix: `requires_grad=True` makes the backward run (and gives the "
                  "model no gradient for that batch), `scores.sum() * 0.0` keeps the graph; which one fits is the "
                  "author's choice.")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",)
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass RankLoss(nn.Module):\n"
             "    def forward(self, scores, mask):\n        if not mask.any():\n")
    _tail = ("        return -(scores[mask].log_softmax(0)).mean()\n\n\n"
             "scores = torch.randn(4, requires_grad=True)\n"
             "loss = RankLoss()(scores, torch.zeros(4, dtype=torch.bool))\nloss.backward()\n")
    valid = (
        Valid(_head + "            return scores.sum() * 0.0\n" + _tail),
        Valid(_head + "            return torch.tensor(0.0, requires_grad=True)\n" + _tail),
        # Not a loss: a module that returns a constant for an empty input is not backwarded directly.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Pool(nn.Module):\n    def forward(self, x):\n"
              "        if x.numel() == 0:\n            return torch.zeros(())\n        return x.mean()\n\n\n"
              "out = Pool()(torch.randn(0))\n"),
        # Every path returns a constant: a metric, not a training loss.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass CountLoss(nn.Module):\n    def forward(self, x):\n"
              "        if x.numel() == 0:\n            return torch.tensor(0.0)\n"
              "        return torch.tensor(float(x.numel()))\n\n\nout = CountLoss()(torch.randn(3))\n"),
    )
    invalid = (
        # sentence-transformers' ListNetLoss had this shape (the padded-only edge case).
        Invalid(_head + "            return torch.tensor(0.0)\n" + _tail, line=8,
                runtime="raises: element 0 of tensors does not require grad", also=(14,)),
        Invalid(_head + "            return scores.new_zeros(())\n" + _tail, line=8,
                runtime="raises: element 0 of tensors does not require grad", also=(14,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not ({"tensor", "zeros", "ones", "full", "as_tensor", "scalar_tensor", "new_zeros", "new_ones",
                 "new_full", "new_tensor", "zeros_like", "ones_like", "full_like", "empty"} & q.attrs):
            return
        # `module_class_names()` is one walk the query shares with other rules; only a loss class costs more.
        if not any(name.endswith(_LOSS_WORDS) for name in q.module_class_names()):
            return
        for cls in q.nodes():
            if not isinstance(cls, ast.ClassDef) or not cls.name.endswith(_LOSS_WORDS) or not q.is_module_class(cls):
                continue
            forward = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
            if forward is None:
                continue
            returns = _own_returns(forward)
            constant = [r for r in returns if _constant_factory(r.value, q)]
            if not constant or len(constant) == len(returns):
                continue
            for r in constant:
                report.add(self, r, "This returns a constant with no graph as the loss: on a batch that takes this "
                                    "path, `loss.backward()` raises. Return a zero built from the inputs "
                                    "(`x.sum() * 0.0`) or pass `requires_grad=True`.")
