from __future__ import annotations

import ast

from ..engine.report import text as msg
from ..engine.events import InplaceEvent
from ..engine.report import make_fix
from ..engine.values import MAYBE_SAME_LEAF, Tri
from ..findings import Applicability, Severity
from . import _fixes
from .base import Invalid, Rule, Valid


class InplaceOnLeaf(Rule):
    code = "GS302"
    name = "inplace-on-leaf"
    severity = Severity.ERROR
    summary = "An in-place op on a leaf tensor that requires grad raises while grad mode is on."
    events = (InplaceEvent,)
    what_it_does = ("Flags in-place operations on a leaf tensor that requires grad (a parameter, or a tensor "
                    "created with `requires_grad=True`) while grad mode is enabled, including through a helper "
                    "function that modifies its argument.")
    why_bad = ("PyTorch raises `RuntimeError: a leaf Variable that requires grad is being used in an in-place "
               "operation.` Autograd cannot record an in-place change to the very tensor it accumulates "
               "gradients into. Manual parameter updates belong in `with torch.no_grad():`.")
    example = "w = torch.randn(5, requires_grad=True)\nw -= 0.1 * w.grad"
    use_instead = "w = torch.randn(5, requires_grad=True)\nwith torch.no_grad():\n    w -= 0.1 * w.grad"
    fix_safety = ("Unsafe: the offered rewrite (`w = w + amount`) creates a new non-leaf tensor instead of "
                  "updating the leaf, which avoids the error but means the original leaf is not changed. For "
                  "parameter updates, wrap the statement in `with torch.no_grad():` instead.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",)
    # XQL's `LinearEnsemble`: `reset_parameters`, called only by `__init__`, initialises the plain tensor `__init__`
    # made through in-place ops and wraps it in `nn.Parameter` afterwards; `{after}` runs after the wrap.
    _ensemble = (
        "import math\n\nimport torch\nfrom torch import nn\n\n\nclass LinearEnsemble(nn.Module):\n"
        "    def __init__(self, in_features, out_features, ensemble_size=2):\n        super().__init__()\n"
        "        self.weight = torch.empty((ensemble_size, in_features, out_features))\n"
        "        self.bias = torch.zeros((ensemble_size, 1, out_features))\n        self.reset_parameters()\n\n"
        "    def reset_parameters(self):\n        for w in self.weight:\n            w.transpose_(0, 1)\n"
        "            nn.init.kaiming_uniform_(w, a=math.sqrt(5))\n            w.transpose_(0, 1)\n"
        "        self.weight = nn.Parameter(self.weight)\n{after}        self.bias = nn.Parameter(self.bias)\n\n"
        "    def forward(self, x):\n"
        "        return torch.baddbmm(self.bias, x.repeat(self.weight.shape[0], 1, 1), self.weight)\n\n\n"
        "net = LinearEnsemble(3, 2)\nopt = torch.optim.Adam(net.parameters(), lr=1e-3)\n"
        "net(torch.randn(4, 3)).pow(2).mean().backward()\nopt.step()\n")
    valid = (
        # XQL: the in-place writes run on the plain tensor before the Parameter exists; nothing calls
        # `reset_parameters` on the built layer, so its later Parameter is not the value the loop sees.
        Valid(_ensemble.format(after="")),
        # A move that always copies (a new dtype) gives a non-leaf with history: in place is allowed.
        Valid("import torch\nloss = torch.tensor(0.0, requires_grad=True).to(torch.float64)\n"
              "for w in [torch.randn(3, requires_grad=True)]:\n    loss += w.double().norm()\nloss.backward()\n"),
        Valid("import torch\nimport torch.nn as nn\n\nparams = [nn.Parameter(torch.randn(3, 3)), nn.Parameter(torch.randn(3))]\n"
              "loss = torch.tensor(0.0).to(params[0].device)\nfor param in params:\n"
              "    loss += torch.linalg.norm(param, 2)\nloss.backward()\n"),
        Valid("import torch\nw = torch.randn(5, requires_grad=True)\nw.sum().backward()\nwith torch.no_grad():\n"
              "    w -= 0.1 * w.grad\n"),
        Valid("import torch\nw = torch.randn(5)\nw += 1\n"),
        Valid("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nwith torch.no_grad():\n"
              "    for p in m.parameters():\n        p.mul_(0.5)\n"),
        # solo-learn's DeepClusterV2: the loop freezes each prototype layer before the copy into its weight.
        Valid("import torch.nn as nn\nimport torch.nn.functional as F\n\n"
              "prototypes = nn.ModuleList([nn.Linear(4, n, bias=False) for n in (3, 5)])\nfor proto in prototypes:\n"
              "    for p in proto.parameters():\n        p.requires_grad = False\n"
              "    proto.weight.copy_(F.normalize(proto.weight.data.clone(), dim=-1))\n"),
    )
    invalid = (
        # The look-alike scaling the weight in place after wrapping it: raises while `__init__` runs.
        Invalid(_ensemble.format(after="        self.weight.div_(math.sqrt(self.weight.shape[1]))\n"), line=20,
                runtime="raises: a leaf Variable that requires grad is being used in an in-place operation"),
        # NeuroTorch's Lp regulariser: `.to(device)` returns the same leaf on the CPU (on a GPU, a copy).
        Invalid("import torch\nimport torch.nn as nn\n\nparams = [nn.Parameter(torch.randn(3, 3)), nn.Parameter(torch.randn(3))]\n\n\n"
                "def lp(p=2):\n    loss = torch.tensor(0.0, requires_grad=True).to(params[0].device)\n"
                "    for param in params:\n        loss += torch.linalg.norm(param, p)\n    return loss\n\n\nlp().backward()\n",
                line=10, runtime="raises: a leaf Variable that requires grad is being used in an in-place operation"),
        Invalid("import torch\nw = torch.randn(5, requires_grad=True)\nw.add_(1)\n", line=3,
                runtime="raises: a leaf Variable that requires grad is being used in an in-place operation"),
        Invalid("import torch\nweights = torch.randn(5, requires_grad=True)\n\n\ndef shift(w, amount):\n"
                "    w += amount\n    return w\n\n\nout = shift(weights, 0.5)\n", line=6,
                runtime="raises: a leaf Variable that requires grad is being used in an in-place operation",
                fixed="import torch\nweights = torch.randn(5, requires_grad=True)\n\n\ndef shift(w, amount):\n"
                      "    w = w + amount\n    return w\n\n\nout = shift(weights, 0.5)\n"),
        Invalid("import torch\nw = torch.randn(4, requires_grad=True)\nw[:2].mul_(2)\n", line=3,
                runtime="raises: a view of a leaf Variable that requires grad is being used in an in-place operation"),
        Invalid("import torch.nn as nn\nlayer = nn.Linear(3, 3)\nlayer.weight[0, 0] = 0.0\n", line=3,
                runtime="raises: a view of a leaf Variable that requires grad is being used in an in-place operation"),
    )

    def check(self, event: InplaceEvent, report) -> None:
        t = event.target
        if event.grad_mode is not Tri.YES:
            return
        if t.leaf_view and t.rg is Tri.YES and not t.multiview:  # split outputs raise their own error (GS303)
            where = msg(f" ({t.view.text}, line ", t.view.line, ")") if t.view else ""
            report.add(self, event.node,
                       msg(f"`{event.expr}` is a view of a leaf tensor that requires grad", where,
                           "; modifying it in place with grad mode on raises \"a view of a leaf Variable that requires "
                           "grad is being used in an in-place operation\"; do it under `torch.no_grad()`."),
                       related=[t.view])
            return
        if t.leaf is Tri.MAYBE and t.rg is Tri.YES and t.origin is not None and t.origin.kind == MAYBE_SAME_LEAF:
            # `loss = torch.zeros(1, requires_grad=True).to(device)` then `loss += term`: raises wherever the
            # move changes nothing (on the CPU), so a warning on the statement that modifies it.
            report.add(self, event.node,
                       msg(f"`{event.expr}` is still the leaf where `.{t.origin.arg('op', 'to')}()` changes nothing "
                           "(line ", t.origin.line, "), so this in-place op raises; build it out of place."),
                       related=[t.origin], severity=Severity.WARNING)
            return
        if not (t.leaf is Tri.YES and t.rg is Tri.YES):
            return
        fix = None
        stmt = event.stmt
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            edit = _fixes.out_of_place(report.source, stmt)
            if edit is not None:
                fix = make_fix("Rewrite out of place (the leaf itself is then not modified)", Applicability.UNSAFE, edit)
        kind = "a parameter" if t.param else "a leaf tensor that requires grad"
        where = msg(f" ({t.origin.text}, line ", t.origin.line, ")") if t.origin else ""
        report.add(self, event.node,
                   msg(f"`{event.expr}` is {kind}", where, "; modifying it in place with grad mode on raises "
                       "\"a leaf Variable that requires grad is being used in an in-place operation\"; "
                       "do it under `torch.no_grad()` or out of place."), related=[t.origin], fix=fix,
                   # Known to require grad from evidence of use only (parameters of an object gradsight cannot
                   # see): a warning, never an error (docs/heap.md, evidence levels).
                   severity=Severity.WARNING if getattr(t, "evidence", False) else None)
