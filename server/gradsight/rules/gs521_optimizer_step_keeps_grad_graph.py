from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_OPTIMIZER_BASES = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})
_GRAD_OFF = frozenset({"torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
                       "torch.inference_mode", "torch.autograd.grad_mode.inference_mode"})


def _grad_off(q, node: ast.AST) -> bool:
    """`torch.no_grad()` / `torch.no_grad` / `torch.inference_mode()` (as a decorator or a `with` item), or torch's
    own `_use_grad_for_differentiable` wrapper."""
    target = node.func if isinstance(node, ast.Call) else node
    name = q.qualname(target) or ""
    return name in _GRAD_OFF or name.rsplit(".", 1)[-1] == "_use_grad_for_differentiable"


# What reading a parameter this way gives has no graph whatever the parameter is: metadata, its `.data`/`.grad`,
# a tensor made only from its shape, a test of identity. Any other use of the parameter computes with it.
_NO_GRAPH_ATTRS = frozenset({"data", "grad", "shape", "size", "dim", "ndim", "ndimension", "numel", "nelement",
                             "device", "dtype", "is_sparse", "is_cuda", "requires_grad", "is_leaf", "detach",
                             "is_complex", "is_floating_point", "layout", "element_size", "stride",
                             "is_contiguous", "storage_offset", "data_ptr", "get_device"})
_NO_GRAPH_CALLS = frozenset({"len", "id", "hash", "isinstance", "type", "torch.is_tensor", "torch.numel",
                             "torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like",
                             "torch.rand_like", "torch.randn_like", "torch.randint_like"})


def _param_in_graph(q, step: ast.FunctionDef, param: str, off: list) -> bool:
    """Whether `step()` computes with the parameter `param` itself, with grad mode on: after any backward a
    parameter requires grad, so such an op (a weight decay `grad.add(p, alpha=wd)`, `grad + wd * p`) has a graph
    even when `p.grad` has none. Reads of `p.data`, `p.grad`, its metadata, `self.state[p]`, `zeros_like(p)` and
    in-place methods of `p` itself (which raise on a leaf, another rule's business) are not."""
    for node in walk(step):
        if type(node) is not ast.Name or node.id != param or type(node.ctx) is not ast.Load:
            continue
        if any(w.lineno <= node.lineno <= (w.end_lineno or w.lineno) for w in off):
            continue
        up = q.parent(node)
        if isinstance(up, ast.keyword):
            up = q.parent(up)  # a keyword argument is judged by its call
        if isinstance(up, ast.Attribute) and (up.attr in _NO_GRAPH_ATTRS or up.attr.endswith("_")):
            continue
        if isinstance(up, ast.Subscript) and up.slice is node or isinstance(up, ast.Compare):
            continue  # `self.state[p]`, `p is None`: an index and an identity test compute nothing
        if isinstance(up, ast.Call) and up.func is not node and (q.call_name(up) or "") in _NO_GRAPH_CALLS:
            continue
        return True
    return False


def _create_graph(q) -> bool:
    """Whether the file asks a backward for a gradient with a graph (`create_graph=` anything but `False`): then
    `p.grad` itself may require grad."""
    for call in q.calls():
        for kw in call.keywords:
            if kw.arg == "create_graph" and not (isinstance(kw.value, ast.Constant) and not kw.value.value):
                return True
    return False


# An optimizer of the examples: momentum with optional weight decay; `{read}` is how `step()` reads the gradient.
_BODY = ("        for group in self.param_groups:\n            for p in group[\"params\"]:\n"
         "                if p.grad is None:\n                    continue\n                {read}\n"
         "                if group[\"wd\"]:\n                    grad = grad.add(p, alpha=group[\"wd\"])\n"
         "                state = self.state[p]\n                if \"buf\" not in state:\n"
         "                    state[\"buf\"] = torch.zeros_like(p)\n                buf = state[\"buf\"]\n"
         "                buf.mul_(0.9).add_(grad)\n                p.data.add_(buf, alpha=-group[\"lr\"])\n")
# Muon's `step()` (cifar10-airbench): the momentum buffer is fed the gradient, the weight is changed only through
# `p.data`; `{decay}` is where a weight decay through the parameter itself goes.
_MUON = ("import torch\n\n\nclass Muon(torch.optim.Optimizer):\n"
         "    def __init__(self, params, lr=0.1, momentum=0.6, wd=0.0):\n"
         "        super().__init__(params, dict(lr=lr, momentum=momentum, wd=wd))\n\n"
         "    def step(self):\n        for group in self.param_groups:\n            for p in group[\"params\"]:\n"
         "                g = p.grad\n                if g is None:\n                    continue\n{decay}"
         "                state = self.state[p]\n                if \"momentum_buffer\" not in state.keys():\n"
         "                    state[\"momentum_buffer\"] = torch.zeros_like(g)\n"
         "                buf = state[\"momentum_buffer\"]\n                buf.mul_(group[\"momentum\"]).add_(g)\n"
         "                p.data.mul_(len(p.data) ** 0.5 / p.data.norm())\n"
         "                p.data.add_(buf / (buf.norm() + 1e-7), alpha=-group[\"lr\"])\n\n\n"
         "net = torch.nn.Linear(4, 2, bias=False)\nopt = Muon(net.parameters(), wd={wd})\nfor _ in range(3):\n"
         "    torch.nn.functional.cross_entropy(net(torch.randn(8, 4)), torch.randint(0, 2, (8,))).backward()\n"
         "    opt.step()\n    net.zero_grad(set_to_none=True)\n")
_HEAD = ("import torch\nfrom torch.optim.optimizer import Optimizer\n\n\nclass Momentum(Optimizer):\n"
         "    def __init__(self, params, lr=0.1, wd=0.0):\n        super().__init__(params, dict(lr=lr, wd=wd))\n\n")


class OptimizerStepKeepsGradGraph(Rule):
    code = "GS521"
    name = "optimizer-step-keeps-grad-graph"
    severity = Severity.WARNING
    summary = ("A custom optimizer's `step()` runs with grad mode on and reads `p.grad` itself: its state updates "
               "build an autograd graph that grows with every step.")
    events = (FileEvent,)
    what_it_does = ("Flags `grad = p.grad` in the `step()` of a `torch.optim.Optimizer` subclass that is not "
                    "decorated with `@torch.no_grad()` and does not read the gradient under `with torch.no_grad():` "
                    "(nor through `.data`), where the gradient or the state can have a graph: the file asks a "
                    "backward for `create_graph=`, or `step()` computes with the parameter itself (a weight decay "
                    "`grad.add(p, alpha=wd)`), not only through `p.data`.")
    why_bad = ("`step()` is ordinary Python: without `torch.no_grad()` every tensor op in it is recorded. After "
               "`loss.backward(create_graph=True)` (a Hessian-vector product, a gradient penalty) `p.grad` has a "
               "graph, and after a weight-decay term `grad.add(p, alpha=wd)` the gradient requires grad through the "
               "parameter itself. The in-place updates of the optimizer's state (`exp_avg.add_(grad)`) then give the "
               "state a `grad_fn`, and each step chains its graph onto the last one: memory grows with the number "
               "of steps. PyTorch's own optimizers run "
               "`step()` under `torch.no_grad()`. After a plain backward, a `step()` that touches the weight only "
               "through `p.data` records nothing (Muon's), so the rule stays quiet there.")
    example = ("class Momentum(Optimizer):\n    def step(self):\n        for group in self.param_groups:\n"
               "            for p in group['params']:\n                grad = p.grad\n"
               "                grad = grad.add(p, alpha=1e-4)\n"
               "                self.state[p]['buf'].mul_(0.9).add_(grad)")
    use_instead = ("class Momentum(Optimizer):\n    @torch.no_grad()\n    def step(self):\n"
                   "        for group in self.param_groups:\n            for p in group['params']:\n"
                   "                grad = p.grad\n                grad = grad.add(p, alpha=1e-4)\n"
                   "                self.state[p]['buf'].mul_(0.9).add_(grad)")
    fix_safety = "There is no automatic fix: decorate `step()` with `@torch.no_grad()` (or read `p.grad.data`)."
    references = ("https://pytorch.org/docs/stable/optim.html#base-class",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html")
    valid = (
        # `@torch.no_grad()` on `step()`: what PyTorch's optimizers do.
        Valid(_HEAD + "    @torch.no_grad()\n    def step(self):\n" + _BODY.format(read="grad = p.grad")
              + "\n\nw = torch.nn.Parameter(torch.ones(3))\nopt = Momentum([w], wd=0.01)\n"
              "w.grad, = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)\nopt.step()\n"
              "assert not opt.state[w][\"buf\"].requires_grad\n"),
        # The gradient read through `.data`: no graph (and no weight decay through `p`).
        Valid(_HEAD + "    def step(self):\n" + _BODY.format(read="grad = p.grad.data")
              + "\n\nw = torch.nn.Parameter(torch.ones(3))\nopt = Momentum([w])\n"
              "w.grad, = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)\nopt.step()\n"
              "assert not opt.state[w][\"buf\"].requires_grad\n"),
        # The read inside `with torch.no_grad():`.
        Valid("import torch\nfrom torch.optim import Optimizer\n\n\nclass Plain(Optimizer):\n"
              "    def __init__(self, params, lr=0.1):\n        super().__init__(params, dict(lr=lr))\n\n"
              "    def step(self):\n        with torch.no_grad():\n            for group in self.param_groups:\n"
              "                for p in group[\"params\"]:\n                    grad = p.grad\n"
              "                    p.add_(grad, alpha=-group[\"lr\"])\n\n\n"
              "w = torch.nn.Parameter(torch.ones(3))\nopt = Plain([w])\n(w ** 2).sum().backward()\nopt.step()\n"),
        # Muon after a plain backward (cifar10-airbench): `p.grad` has no graph, and the weight is read and changed
        # only through `p.data`, so no op in `step()` records anything: the buffer never gets a `grad_fn`.
        Valid(_MUON.format(decay="", wd="0.0")
              + "assert opt.state[net.weight][\"momentum_buffer\"].grad_fn is None\n"),
        # Not an optimizer: a helper reading a gradient with grad mode on is its own business.
        Valid("import torch\n\n\nclass Probe:\n    def step(self, p):\n        grad = p.grad\n        return grad.norm()\n"),
    )
    invalid = (
        # torch-optimizer's Apollo before its fix: `grad = p.grad` with grad mode on, after a double backward.
        Invalid(_HEAD + "    def step(self):\n" + _BODY.format(read="grad = p.grad")
                + "\n\nw = torch.nn.Parameter(torch.ones(3))\nopt = Momentum([w])\n"
                "w.grad, = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)\nopt.step()\n",
                line=14, runtime="silent: opt.state[w]['buf'].requires_grad"),
        # The same optimizer with weight decay, after a plain backward: the decay term runs through `p`.
        Invalid(_HEAD + "    def step(self):\n" + _BODY.format(read="grad = p.grad")
                + "\n\nw = torch.nn.Parameter(torch.ones(3))\nopt = Momentum([w], wd=0.01)\n"
                "for _ in range(2):\n    opt.zero_grad()\n    (w ** 2).sum().backward()\n    opt.step()\n",
                line=14, runtime="silent: opt.state[w]['buf'].grad_fn is not None"),
        # The Muon look-alike with a weight decay added to the gradient through `p` itself: after a plain backward
        # `g.add(p, ...)` requires grad, and the buffer chains every step's graph.
        Invalid(_MUON.format(decay="                g = g.add(p, alpha=group[\"wd\"])\n", wd="0.01"),
                line=11, runtime="silent: opt.state[net.weight]['momentum_buffer'].grad_fn is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        if "grad" not in q.attrs or "param_groups" not in q.attrs:
            return
        graded = None
        for cls in q.class_defs:
            if not any(q.qualname(b) in _OPTIMIZER_BASES for b in cls.bases):
                continue
            step = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "step"), None)
            if step is None or any(_grad_off(q, d) for d in step.decorator_list):
                continue
            off = [n for n in walk(step) if isinstance(n, (ast.With, ast.AsyncWith))
                   and any(_grad_off(q, i.context_expr) for i in n.items)]
            for stmt in walk(step):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Attribute)
                        and stmt.value.attr == "grad" and isinstance(stmt.value.value, ast.Name)):
                    continue
                if any(w.lineno <= stmt.lineno <= (w.end_lineno or w.lineno) for w in off):
                    continue
                name = stmt.targets[0].id
                if not any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load and n.lineno > stmt.lineno
                           for n in walk(step)):
                    continue
                # After a plain backward `p.grad` has no graph, and ops on it and on `p.data` record nothing: a graph
                # needs a gradient made with `create_graph=` or an op on the parameter itself.
                if graded is None:
                    graded = _create_graph(q)
                if not graded and not _param_in_graph(q, step, stmt.value.value.id, off):
                    continue
                report.add(self, stmt,
                           f"`step()` runs with grad mode on, so ops on `{name}` build a graph the optimizer state "
                           f"keeps. Decorate `step()` with `@torch.no_grad()`.")
