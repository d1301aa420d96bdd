from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_ERROR = "Trying to backward through the graph a second time"


def _tainted(func: ast.FunctionDef) -> set:
    """Names in `forward` computed from its inputs without `.detach()`: a backward through them reaches the
    caller's graph. A plain forward walk in statement order (loops once) is enough for this question."""
    names = {a.arg for a in func.args.args[1:] + func.args.kwonlyargs}
    if func.args.vararg:
        names.add(func.args.vararg.arg)
    for node in ast.walk(func):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            if _reads(node.value, names) and not _detached(node.value):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


_NO_GRAPH_METHODS = {"detach", "item", "size", "dim", "tolist", "numpy", "numel", "stride", "data_ptr"}
_NO_GRAPH_ATTRS = {"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "data"}
_NO_GRAPH_FUNCS = {"len", "int", "float", "bool", "str", "isinstance", "type"}


def _detached(expr: ast.AST) -> bool:
    """Whether `expr` carries no autograd graph whatever its operands (`.detach()`, `.item()`, `.shape`, ...)."""
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute):
            return expr.func.attr in _NO_GRAPH_METHODS
        return isinstance(expr.func, ast.Name) and expr.func.id in _NO_GRAPH_FUNCS
    return isinstance(expr, ast.Attribute) and expr.attr in _NO_GRAPH_ATTRS


def _reads(expr: ast.AST, names: set) -> bool:
    """Whether `expr` reads one of `names` outside a `.detach()` / `.item()` call."""
    if _detached(expr):
        return False
    if isinstance(expr, ast.Name):
        return expr.id in names and isinstance(expr.ctx, ast.Load)
    return any(_reads(child, names) for child in ast.iter_child_nodes(expr))


class BackwardInForward(Rule):
    code = "GS410"
    name = "backward-in-forward"
    severity = Severity.WARNING
    summary = "`.backward()` inside a module's `forward` frees the caller's graph that its input came from."
    events = (FileEvent,)
    what_it_does = ("Flags a `.backward()` (or `torch.autograd.backward`) call inside the `forward` of an "
                    "`nn.Module`, on a value computed from `forward`'s inputs without `.detach()`.")
    why_bad = ("The input of `forward` usually carries the caller's graph (an encoder's output). A backward "
               "inside `forward` runs through that graph and frees its saved tensors; the training loop's own "
               f"`loss.backward()` then raises \"{_ERROR}\" on the first step. It also puts gradients into the "
               "encoder that the training loss never asked for.")
    example = ("def forward(self, x):\n    commit = ((self.codes[idx] - x) ** 2).mean()\n    commit.backward()\n"
               "    return x + (self.codes[idx] - x).detach()")
    use_instead = ("def forward(self, x):\n    commit = ((self.codes[idx] - x.detach()) ** 2).mean()\n"
                   "    self.commit_loss = commit   # added to the training loss by the caller\n"
                   "    return x + (self.codes[idx] - x).detach()")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    valid = (
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Q(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.codes = nn.Parameter(torch.randn(4, 3))\n\n"
              "    def forward(self, x):\n        commit = ((self.codes[0] - x.detach()) ** 2).mean()\n"
              "        commit.backward()\n        return x + self.codes[0].detach()\n\n\n"
              "enc = nn.Linear(3, 3)\nout = Q()(enc(torch.randn(2, 3)))\nout.sum().backward()\n"),
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n\n    def forward(self, x):\n"
              "        return self.fc(x)\n\n    def train_step(self, x):\n        loss = self(x).sum()\n"
              "        loss.backward()\n        return loss\n\n\nNet().train_step(torch.randn(2, 3))\n"),
        # A meta-learner whose forward runs its own optimisation and returns only numbers (maml-pytorch).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Meta(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(3, 1)\n"
              "        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)\n\n    def forward(self, x, y):\n"
              "        loss = ((self.net(x) - y) ** 2).mean()\n        self.opt.zero_grad()\n        loss.backward()\n"
              "        self.opt.step()\n        return loss.item()\n\n\nacc = Meta()(torch.randn(4, 3), torch.randn(4, 1))\n"),
        # A training step written as `forward` that returns the loss it backwarded, for logging (FUNIT).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.net = nn.Linear(3, 1)\n\n    def forward(self, data, mode):\n"
              "        x, y = data\n        if mode == 'update':\n            rec = ((self.net(x) - y) ** 2).mean()\n"
              "            total = 2 * rec\n            total.backward()\n            return total, rec\n\n\n"
              "model = Model()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
              "total, rec = model((torch.randn(4, 3), torch.randn(4, 1)), 'update')\nopt.step()\nprint(total.item())\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Q(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.codes = nn.Parameter(torch.randn(4, 3))\n\n"
                "    def forward(self, x):\n        commit = ((self.codes[0] - x) ** 2).mean()\n"
                "        commit.backward()\n        return x + self.codes[0]\n\n\n"
                "enc = nn.Linear(3, 3)\nout = Q()(enc(torch.randn(2, 3)))\nout.sum().backward()\n",
                line=12, also=(18,), runtime="raises: Trying to backward through the graph a second time"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs:
            return  # the common case, checked in one pass (this rule runs on every keystroke)
        for cls in q.nodes():
            if not (isinstance(cls, ast.ClassDef) and q.is_module_class(cls)):
                continue
            for func in cls.body:
                if isinstance(func, ast.FunctionDef) and func.name == "forward" and len(func.args.args) > 1:
                    self._check_forward(func, q, report)

    def _check_forward(self, func: ast.FunctionDef, q, report) -> None:
        tainted = _tainted(func)
        returns = [r.value for r in ast.walk(func) if isinstance(r, ast.Return) and r.value is not None
                   and q.enclosing_function(r) is func]
        if not any(_reads(v, tainted) for v in returns):
            return  # nothing from the input's graph goes back to the caller (e.g. a meta-learner's forward)
        returned = {n.id for r in returns for n in ast.walk(r) if isinstance(n, ast.Name)}
        training_step = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"
                            and isinstance(c.func.value, ast.Name) and c.func.value.id in returned
                            for c in ast.walk(func))
        for call in ast.walk(func):
            if not isinstance(call, ast.Call):
                continue
            if isinstance(call.func, ast.Attribute) and call.func.attr == "backward" and q.call_name(call) is None:
                target = call.func.value
            elif q.call_name(call) == "torch.autograd.backward" and call.args:
                target = call.args[0]
            else:
                continue
            if not _reads(target, tainted):
                continue
            if training_step:
                # The forward is a training step that hands back a loss it backwarded (NVlabs' FUNIT:
                # `l_total.backward(); return l_total, l_adv, ...` for the trainer to log, one branch per mode):
                # nothing says a caller backwards again.
                continue
            stmt = q.statement(call) or call
            report.add(self, stmt, "This backward inside `forward` frees the caller's graph; its own backward "
                                   "then raises.")
            return
