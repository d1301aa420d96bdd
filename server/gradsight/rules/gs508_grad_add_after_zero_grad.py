from __future__ import annotations

import ast
from typing import Optional

from ..engine.report import Note
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_INPLACE_GRAD = {"add_", "sub_", "mul_", "div_", "copy_", "addcmul_", "addcdiv_", "clamp_", "mul", "add"}


def _sets_to_none(call: ast.Call) -> bool:
    """`zero_grad()` sets gradients to None unless `set_to_none=False` (the default is True since torch 2.0)."""
    for kw in call.keywords:
        if kw.arg == "set_to_none":
            return not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
    return not call.args or not (isinstance(call.args[0], ast.Constant) and call.args[0].value is False)


def _grad_write(node: ast.AST) -> Optional[str]:
    """`p.grad += v` or `p.grad.add_(v)`: the name whose `.grad` is updated assuming it exists."""
    if isinstance(node, ast.AugAssign):
        t = node.target
        if isinstance(t, ast.Attribute) and t.attr == "grad" and isinstance(t.value, ast.Name):
            return t.value.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
            and node.func.attr in _INPLACE_GRAD:
        g = node.func.value
        if isinstance(g, ast.Attribute) and g.attr == "grad" and isinstance(g.value, ast.Name):
            return g.value.id
    return None


def _guarded(scope: ast.AST, name: str) -> bool:
    """Whether the code checks or assigns `name.grad` itself (`if p.grad is None: p.grad = ...`)."""
    for n in ast.walk(scope):
        if isinstance(n, ast.Compare) and isinstance(n.left, ast.Attribute) and n.left.attr == "grad" \
                and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators):
            return True
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("backward", "grad"):
            return True  # a backward in between fills the gradients again
    return False


class GradAddAfterZeroGrad(Rule):
    code = "GS508"
    name = "grad-add-after-zero-grad"
    severity = Severity.WARNING
    summary = "`zero_grad()` sets gradients to `None`, so a following `p.grad += ...` raises TypeError."
    events = (FileEvent,)
    what_it_does = ("Flags `optimizer.zero_grad()` / `model.zero_grad()` (which set `.grad` to `None` by default) "
                    "followed, in the same function and with no backward in between, by `p.grad += v` or "
                    "`p.grad.add_(v)` with no `None` check.")
    why_bad = ("Since PyTorch 2.0, `zero_grad()` defaults to `set_to_none=True`: every `.grad` becomes `None`. "
               "`p.grad += v` then raises \"unsupported operand type(s) for +=: 'NoneType' and 'Tensor'\", and "
               "`p.grad.add_(v)` raises AttributeError. Code written for older versions (federated averaging, "
               "gradient injection, manual noise) breaks this way. `zero_grad(set_to_none=False)` helps only where "
               "every `.grad` already exists (after a backward); a parameter that never had a gradient still has "
               "`None`.")
    example = ("optimizer.zero_grad()\nfor p, g in zip(model.parameters(), grads):\n    p.grad += g\n"
               "optimizer.step()")
    use_instead = ("optimizer.zero_grad()\nfor p, g in zip(model.parameters(), grads):\n"
                   "    p.grad = g.clone() if p.grad is None else p.grad + g\noptimizer.step()")
    references = ("https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",)
    _head = ("import torch\nimport torch.nn as nn\n\n\ndef apply(model, opt, grads):\n")
    _tail = ("\n\n\nmodel = nn.Linear(3, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
             "apply(model, opt, [torch.ones(1, 3), torch.ones(1)])\n")
    valid = (
        Valid(_head + "    model(torch.randn(2, 3)).sum().backward()\n    opt.zero_grad(set_to_none=False)\n"
              "    for p, g in zip(model.parameters(), grads):\n        p.grad += g\n    opt.step()" + _tail),
        Valid(_head + "    opt.zero_grad()\n    for p, g in zip(model.parameters(), grads):\n"
              "        if p.grad is None:\n            p.grad = g.clone()\n        else:\n            p.grad += g\n"
              "    opt.step()" + _tail),
        Valid(_head + "    opt.zero_grad()\n    model(torch.randn(2, 3)).sum().backward()\n"
              "    for p, g in zip(model.parameters(), grads):\n        p.grad += g\n    opt.step()" + _tail),
    )
    invalid = (
        Invalid(_head + "    opt.zero_grad()\n    for p, g in zip(model.parameters(), grads):\n        p.grad += g\n"
                "    opt.step()" + _tail, line=6, also=(8,),
                runtime="raises: unsupported operand type(s) for +=: 'NoneType' and 'Tensor'"),
        Invalid(_head + "    model.zero_grad()\n    for p, g in zip(model.parameters(), grads):\n"
                "        p.grad.add_(g)\n    opt.step()" + _tail, line=6, also=(8,),
                runtime="raises: 'NoneType' object has no attribute 'add_'"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "zero_grad" not in q.attrs or "grad" not in q.attrs:
            return
        for call in q.calls():
            if not (isinstance(call.func, ast.Attribute) and call.func.attr == "zero_grad" and _sets_to_none(call)):
                continue
            stmt = q.statement(call)
            if stmt is None or not isinstance(stmt, ast.Expr):
                continue
            rest = q.following(stmt)
            hit = self._first_write(rest)
            if hit is None:
                continue
            write, name = hit
            if any(_guarded(s, name) for s in rest if s.lineno <= write.lineno):
                continue
            report.add(self, stmt, f"`zero_grad()` sets `{name}.grad` to None, so the update at line "
                                   f"{write.lineno} raises; assign `.grad` when it is None.",
                       related=[_fact(report, write, "raises here")])

    @staticmethod
    def _first_write(stmts: list):
        for s in stmts:
            for n in ast.walk(s):
                name = _grad_write(n)
                if name is not None:
                    return n, name
        return None


def _fact(report, node, text):
    line, column, _, _ = report.source.span(node)
    return Note(line, column, text)
