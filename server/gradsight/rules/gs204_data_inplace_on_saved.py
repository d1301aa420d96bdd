from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import InplaceEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


class DataInplaceOnSaved(Rule):
    code = "GS204"
    name = "data-write-on-saved-tensor"
    severity = Severity.WARNING
    summary = "Writing through `.data` to a tensor saved for backward gives silently wrong gradients."
    events = (InplaceEvent,)
    what_it_does = ("Flags in-place writes through `t.data` (`t.data.mul_(2)`, `t.data[...] = v`) where an "
                    "earlier op saved `t` for its backward.")
    why_bad = ("`.data` bypasses autograd's version counter, so PyTorch does not raise the in-place error it "
               "would raise for `t.mul_(2)`: backward runs with the modified value and computes wrong "
               "gradients, silently.")
    example = "y = torch.sigmoid(x)\ny.data.mul_(2)\ny.sum().backward()  # x.grad is wrong"
    use_instead = "y = torch.sigmoid(x)\ny = y * 2\ny.sum().backward()"
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-correctness-checks",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nm.weight.data.mul_(0.5)\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x + 1\ny.data.mul_(2)\ny.sum().backward()\n"),
        # The graph `print(F.softplus(self.w))` builds dies at once: the next `reset_parameters()` writes into `w`
        # before the line that saves it, and no backward ever reads the old save (conditional-flow-matching's
        # BayesLinear).
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Bayes(nn.Module):\n"
              "    def __init__(self, init_log_var):\n        super().__init__()\n"
              "        self.init_log_var = init_log_var\n        self.w = nn.Parameter(torch.empty(3))\n"
              "        self.reset_parameters()\n\n    def reset_parameters(self):\n"
              "        self.w.data.fill_(self.init_log_var)\n        print(F.softplus(self.w))\n\n\n"
              "m = Bayes(-3.0)\nm.reset_parameters()\nF.softplus(m.w).sum().backward()\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny.data.mul_(2)\n"
                "y.sum().backward()\n", line=4,
                runtime="silent: not torch.allclose(x.grad, (torch.sigmoid(x) * (1 - torch.sigmoid(x))).detach())"),
        # The look-alike: `__init__` keeps the graph that saved `w` in `self.std`, so a later `reset_parameters()`
        # changes what a backward through `m.std` reads.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass Bayes(nn.Module):\n"
                "    def __init__(self, init_log_var):\n        super().__init__()\n"
                "        self.init_log_var = init_log_var\n        self.w = nn.Parameter(torch.empty(3))\n"
                "        self.reset_parameters()\n        self.std = F.softplus(self.w)\n\n"
                "    def reset_parameters(self):\n        self.w.data.fill_(self.init_log_var)\n\n\n"
                "m = Bayes(-3.0)\nm.init_log_var = 2.0\nm.reset_parameters()\nm.std.sum().backward()\n", line=15,
                runtime="silent: not torch.allclose(m.w.grad, torch.sigmoid(torch.full((3,), -3.0)))"),
    )

    def check(self, event: InplaceEvent, report) -> None:
        t = event.target
        if not (t.is_data and t.saved is not None):
            return
        report.add(self, event.node,
                   msg(f"This writes through `.data` into a tensor that {t.saved.text} at line ", t.saved.line,
                       "; autograd cannot see the change, so backward silently computes wrong gradients."),
                   related=[t.saved])
