from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _calls(stmt: ast.stmt, attr: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == attr
               for n in walk(stmt) if not isinstance(n, _FUNCS))


def _zeroes(stmt: ast.stmt) -> bool:
    """`model.zero_grad()`, `opt.zero_grad()`, `p.grad = None`, `p.grad.zero_()` / `p.grad.data.zero_()`."""
    for n in walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "zero_grad":
                return True
            if n.func.attr == "zero_" and any(isinstance(m, ast.Attribute) and m.attr == "grad"
                                              for m in walk(n.func.value)):
                return True
        if isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Store):
            return True
    return False


def _reads_grad(stmt: ast.stmt) -> bool:
    """`g = [p.grad.data.clone() for p in model.parameters()]`: a name bound to a value read from `.grad`."""
    return (isinstance(stmt, ast.Assign) and all(isinstance(t, (ast.Name, ast.Tuple)) for t in stmt.targets)
            and any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Load)
                    for n in walk(stmt.value)))


def _handed_in_zero(fn: ast.AST, stmt: ast.stmt) -> bool:
    """`model.zero_grad()` / `self.opt.zero_grad()` on an object the function was handed (a parameter or an
    attribute of `self`): its `.grad` on entry is whatever the caller left. A model the function builds itself starts
    with no gradients."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for n in walk(stmt):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad":
            root = n.func.value
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and (root.id in params or root.id in ("self", "cls")):
                return True
    return False


class GradReadBeforeFirstZero(Rule):
    code = "GS523"
    name = "grad-read-before-first-zero"
    severity = Severity.WARNING
    summary = ("A function reads `.grad` after each of several backwards and zeroes the gradients between them, but "
               "not before the first: that first read also holds whatever `.grad` had on entry.")
    events = (FileEvent,)
    what_it_does = ("Flags the first `backward()` of a function whose own statements run `backward()`, bind a copy "
                    "of the gradients (`g = [p.grad.clone() for p in model.parameters()]`), zero them "
                    "(`model.zero_grad()`), and run another `backward()` whose gradients they copy again, with no "
                    "zeroing before the first backward: the per-loss gradients of a trust-region or "
                    "gradient-projection update (ACER, PCGrad, GEM).")
    why_bad = ("`backward()` adds into `.grad`. Zeroing between the two backwards shows the function wants each "
               "copy to be the gradient of one loss, but the first copy also contains what `.grad` held when the "
               "function was called: the previous update's gradients when the caller zeroes only after its "
               "`optimizer.step()` or later. The projection is then computed with a stale gradient, silently.")
    example = ("def trust_region(model, loss, kl):\n    loss.backward(retain_graph=True)\n"
               "    g = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n"
               "    (-kl).backward(retain_graph=True)\n    k = [p.grad.clone() for p in model.parameters()]\n"
               "    model.zero_grad()\n    ...")
    use_instead = ("def trust_region(model, loss, kl):\n    model.zero_grad()\n    loss.backward(retain_graph=True)\n"
                   "    g = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n"
                   "    (-kl).backward(retain_graph=True)\n    k = [p.grad.clone() for p in model.parameters()]\n"
                   "    model.zero_grad()\n    ...")
    fix_safety = ("There is no automatic fix: zero the gradients before the first backward (or read them with "
                  "`torch.autograd.grad`, which does not accumulate).")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
                  "https://arxiv.org/abs/1611.01224")

    _HEAD = "import torch\n\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(4, 3)\n\n\n"
    _TAIL = ("\n\nmodel(x).pow(2).mean().backward()   # the previous update's gradients stay in .grad\n"
             "loss = model(x).abs().mean()\ntrue_g = torch.autograd.grad(loss, model.weight, retain_graph=True)[0]\n"
             "g, k = grads(model, loss, model(x).sum())\n")
    valid = (
        # The fix: zeroed before the first backward too.
        Valid(_HEAD + "def grads(model, loss, other):\n    model.zero_grad()\n    loss.backward(retain_graph=True)\n"
              "    g = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n    other.backward()\n"
              "    k = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n    return g, k\n"
              + _TAIL + "assert torch.allclose(g[0], true_g)\n"),
        # One backward and one read: whether `.grad` is clean on entry is the caller's business.
        Valid(_HEAD + "def grad_norm(model, loss):\n    loss.backward()\n"
              "    norm = sum(p.grad.norm() ** 2 for p in model.parameters()) ** 0.5\n    return norm\n\n\n"
              "model.zero_grad()\nprint(grad_norm(model, model(x).sum()))\n"),
        # Per-loss gradients with `torch.autograd.grad`: nothing accumulates.
        Valid(_HEAD + "def grads(model, loss, other):\n"
              "    g = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)\n"
              "    k = torch.autograd.grad(other, list(model.parameters()))\n    return g, k\n"
              + _TAIL + "assert torch.allclose(g[0], true_g)\n"),
    )
    invalid = (
        # ACER's trust-region helper before its fix.
        Invalid(_HEAD + "def grads(model, loss, other):\n    loss.backward(retain_graph=True)\n"
                "    g = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n    other.backward()\n"
                "    k = [p.grad.clone() for p in model.parameters()]\n    model.zero_grad()\n    return g, k\n"
                + _TAIL, line=8, runtime="silent: not torch.allclose(g[0], true_g)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # A cheap test of what the file mentions first: this runs on every keystroke.
        attrs = q.attrs
        if "backward" not in attrs or "grad" not in attrs or "zero_grad" not in attrs:
            return
        for fn in q.functions:
            body = fn.body
            first = next((i for i, s in enumerate(body) if _calls(s, "backward")), None)
            if first is None or any(_zeroes(s) for s in body[:first + 1]):
                continue
            # Then, in this block: a read of `.grad`, a zeroing, another backward, another read.
            want = ["read", "zero", "backward", "read"]
            at = None
            for s in body[first + 1:]:
                if not want:
                    break
                step = want[0]
                if step == "read" and _calls(s, "backward"):
                    break
                if (step == "read" and _reads_grad(s)) or (step == "zero" and _handed_in_zero(fn, s)) \
                        or (step == "backward" and _calls(s, "backward")):
                    want.pop(0)
                    at = at or s
            if want:
                continue
            stmt = body[first]
            report.add(self, stmt,
                       "The gradient read after this backward also holds what `.grad` had on entry. Zero the "
                       "gradients first, as before the next backward.",
                       related=[Note(at.lineno, at.col_offset + 1, "read here")])
