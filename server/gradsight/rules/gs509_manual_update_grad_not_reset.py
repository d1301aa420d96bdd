from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _update_of(stmt: ast.AST) -> Optional[str]:
    """`w -= lr * w.grad`, `w.data -= lr * w.grad`, `w.sub_(lr * w.grad)`: the name updated from its own grad."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, (ast.Sub, ast.Add)):
        target = stmt.target
        if isinstance(target, ast.Attribute) and target.attr == "data":
            target = target.value
        if isinstance(target, ast.Name) and _reads_grad(stmt.value, target.id):
            return target.id
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("sub_", "add_"):
            recv = call.func.value
            if isinstance(recv, ast.Attribute) and recv.attr == "data":
                recv = recv.value
            if isinstance(recv, ast.Name) and any(_reads_grad(a, recv.id) for a in call.args):
                return recv.id
    return None


def _reads_grad(expr: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name)
               and n.value.id == name for n in ast.walk(expr))


def _resets(loop: ast.AST, name: str) -> bool:
    """Whether anything in the loop clears `name.grad` (or all gradients) or rebinds `name`."""
    for n in ast.walk(loop):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr in ("zero_grad", "zero_", "detach_", "fill_", "grad"):
                return True
            if n.func.attr == "requires_grad_":
                return True
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and t.attr == "grad":
                    return True
                if isinstance(t, ast.Name) and t.id == name:
                    return True
        if isinstance(n, ast.Delete):
            return True
    return False


class ManualUpdateGradNotReset(Rule):
    code = "GS509"
    name = "manual-update-grad-not-reset"
    severity = Severity.WARNING
    summary = "A hand-written update loop never resets `.grad`, so each step uses the sum of all earlier gradients."
    events = (FileEvent,)
    what_it_does = ("Flags an update `w -= lr * w.grad` (or `w.data -= ...`, `w.sub_(...)`) in a loop that calls "
                    "`backward()` but never clears `w.grad` (`w.grad.zero_()`, `w.grad = None`, `zero_grad()`).")
    why_bad = ("`backward()` adds into `.grad`. Without a reset, the gradient used at step k is the sum of the "
               "gradients of steps 1..k: the updates grow, oscillate or diverge, and nothing raises.")
    example = ("for it in range(100):\n    loss = ((w * x - y) ** 2).mean()\n    loss.backward()\n"
               "    with torch.no_grad():\n        w -= 0.1 * w.grad")
    use_instead = ("for it in range(100):\n    loss = ((w * x - y) ** 2).mean()\n    loss.backward()\n"
                   "    with torch.no_grad():\n        w -= 0.1 * w.grad\n    w.grad.zero_()")
    references = ("https://pytorch.org/tutorials/beginner/pytorch_with_examples.html",)
    _head = ("import torch\nx = torch.linspace(-1, 1, 20)\ny = 3 * x\nw = torch.zeros(1, requires_grad=True)\n"
             "for it in range(10):\n    loss = ((w * x - y) ** 2).mean()\n    loss.backward()\n"
             "    with torch.no_grad():\n        w -= 0.1 * w.grad\n")
    _probe = ("silent: not torch.allclose(w.grad, torch.autograd.grad(((w * x - y) ** 2).mean(), w)[0])")
    valid = (
        Valid(_head + "    w.grad.zero_()\n"),
        Valid(_head + "    w.grad = None\n"),
        Valid("import torch\nx = torch.linspace(-1, 1, 20)\ny = 3 * x\nw = torch.zeros(1, requires_grad=True)\n"
              "opt = torch.optim.SGD([w], lr=0.1)\nfor it in range(10):\n    opt.zero_grad()\n"
              "    ((w * x - y) ** 2).mean().backward()\n    with torch.no_grad():\n        w -= 0.1 * w.grad\n"),
    )
    invalid = (
        Invalid(_head, line=9, runtime=_probe),
        Invalid(_head.replace("w -= 0.1 * w.grad", "w.sub_(0.1 * w.grad)"), line=9, runtime=_probe),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs or "grad" not in q.attrs:
            return  # no backward, no update loop to check (one pass; this rule runs on every keystroke)
        for loop in q.nodes():
            if not isinstance(loop, (ast.For, ast.While, ast.AsyncFor)):
                continue
            if not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
                       for n in ast.walk(loop)):
                continue
            for stmt in ast.walk(loop):
                name = _update_of(stmt)
                if name is None or _resets(loop, name):
                    continue
                report.add(self, stmt, f"`{name}.grad` is never reset in this loop, so each update uses the sum of "
                                       "all earlier gradients.")
                return
