from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Optimizers that call the closure once per `step()`: a `zero_grad()` outside the closure is then enough.
_SINGLE_EVAL = frozenset({"SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "Rprop", "NAdam",
                          "RAdam", "ASGD", "SparseAdam", "Adafactor"})


def _clears(node: ast.AST) -> bool:
    """`x.zero_grad()`, `p.grad = None`, `p.grad.zero_()`, `p.grad.data.zero_()`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("zero_grad", "clear_grad", "clear_gradients"):
            return True
        if node.func.attr == "zero_" and "grad" in ast.unparse(node.func.value).split("."):
            return True
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
        return True
    return False


def _backwards(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"


class _Reach:
    """What a function does, following calls to functions and `self` methods of the same file (a few levels)."""

    def __init__(self, tree: ast.Module):
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.methods: dict = {}
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for m in cls.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.methods.setdefault(m.name, m)

    def callees(self, fn: ast.AST) -> list:
        out = []
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            f = n.func
            if isinstance(f, ast.Name) and f.id in self.functions:
                out.append(self.functions[f.id])
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                    and f.attr in self.methods:
                out.append(self.methods[f.attr])
        return out

    def any(self, fn: ast.AST, test, depth: int = 3, seen=None) -> bool:
        seen = set() if seen is None else seen
        if id(fn) in seen:
            return False
        seen.add(id(fn))
        if any(test(n) for n in ast.walk(fn)):
            return True
        return depth > 0 and any(self.any(c, test, depth - 1, seen) for c in self.callees(fn))


def _spelling(node: ast.AST) -> str | None:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - ast.unparse handles every expression node
        return None


class StepClosureWithoutZeroGrad(Rule):
    code = "GS513"
    name = "step-closure-without-zero-grad"
    severity = Severity.WARNING
    summary = ("A closure passed to `optimizer.step(closure)` runs `backward()` without zeroing the gradients "
               "first; optimizers that call it several times per step add each evaluation's gradients up.")
    events = (FileEvent,)
    what_it_does = ("Flags a function or lambda handed to `opt.step(...)` that calls `backward()` (itself or in a "
                    "function or `self` method of the same file that it calls) and never zeroes gradients "
                    "(`zero_grad()`, `p.grad = None`, `p.grad.zero_()`). Not flagged when the optimizer is built in the file as a "
                    "single-evaluation `torch.optim` class (SGD, Adam, ...) and the function zeroes before or "
                    "after the step; `LBFGS` and optimizers gradsight cannot see are flagged whatever is outside the "
                    "closure, since they may call it many times.")
    why_bad = ("`LBFGS` (and line-search optimizers) call the closure several times in one `step()`: each "
               "evaluation's `backward()` adds onto the gradients the previous one left, so the step follows the "
               "sum of all evaluations' gradients instead of the current one, and the line search's directions and "
               "curvature pairs are wrong. Nothing raises. The PyTorch docs require the closure to clear the "
               "gradients, compute the loss and return it.")
    example = "def closure():\n    loss = loss_fn(model(x), y)\n    loss.backward()\n    return loss\n\nopt.step(closure)"
    use_instead = ("def closure():\n    opt.zero_grad()\n    loss = loss_fn(model(x), y)\n    loss.backward()\n"
                   "    return loss\n\nopt.step(closure)")
    fix_safety = "This rule offers no automatic fix: which optimizer's gradients to clear is left to you."
    references = ("https://pytorch.org/docs/stable/optim.html#optimizer-step-closure",)
    _head = ("import torch\n\ntorch.manual_seed(0)\nx, y = torch.randn(8, 3), torch.randn(8)\n"
             "w = torch.zeros(3, requires_grad=True)\n")
    # The same LBFGS step from the same start with a closure that zeroes: the buggy step lands elsewhere.
    _check = ("v = torch.zeros(3, requires_grad=True)\nref = torch.optim.LBFGS([v], max_iter=5)\n\n\n"
              "def ok():\n    ref.zero_grad()\n    loss = ((x @ v - y) ** 2).mean()\n    loss.backward()\n"
              "    return loss\n\n\nref.step(ok)\n")
    valid = (
        Valid(_head + "opt = torch.optim.LBFGS([w], max_iter=5)\n\n\ndef closure():\n    opt.zero_grad()\n"
              "    loss = ((x @ w - y) ** 2).mean()\n    loss.backward()\n    return loss\n\n\nopt.step(closure)\n"
              + _check + "assert torch.allclose(w, v)\n"),
        # A single-evaluation optimizer built here, zeroed before the step: the closure runs once.
        Valid(_head + "opt = torch.optim.SGD([w], lr=0.1)\n\n\ndef closure():\n"
              "    loss = ((x @ w - y) ** 2).mean()\n    loss.backward()\n    return loss\n\n\nfor _ in range(3):\n"
              "    opt.zero_grad()\n    opt.step(closure)\n"),
    )
    invalid = (
        Invalid(_head + "opt = torch.optim.LBFGS([w], max_iter=5)\n\n\ndef closure():\n"
                "    loss = ((x @ w - y) ** 2).mean()\n    loss.backward()\n    return loss\n\n\nopt.zero_grad()\n"
                "opt.step(closure)\n" + _check, line=10,
                runtime="silent: not torch.allclose(w, v)"),
        # A trainer that zeroes only after the step (skorch's `train_step`), the backward in another method: right
        # for one evaluation per step, wrong for LBFGS, which the trainer accepts.
        Invalid("import torch\n\n\nclass Net:\n    def __init__(self, module, optimizer):\n"
                "        self.module = module\n        self.optimizer = optimizer\n\n"
                "    def train_step_single(self, x, y):\n        loss = ((self.module(x) - y) ** 2).mean()\n"
                "        loss.backward()\n        return loss\n\n    def train_step(self, x, y):\n"
                "        def step_fn():\n            return self.train_step_single(x, y)\n"
                "        self.optimizer.step(step_fn)\n        self.optimizer.zero_grad()\n\n\n"
                "torch.manual_seed(0)\nm = torch.nn.Linear(3, 1)\nm2 = torch.nn.Linear(3, 1)\n"
                "m2.load_state_dict(m.state_dict())\nnet = Net(m, torch.optim.LBFGS(m.parameters(), max_iter=4))\n"
                "x, y = torch.randn(8, 3), torch.randn(8, 1)\nnet.train_step(x, y)\n"
                "opt2 = torch.optim.LBFGS(m2.parameters(), max_iter=4)\n\n\ndef ok():\n    opt2.zero_grad()\n"
                "    loss = ((m2(x) - y) ** 2).mean()\n    loss.backward()\n    return loss\n\n\nopt2.step(ok)\n",
                line=16, runtime="silent: not torch.allclose(m.weight, m2.weight)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "step" not in q.attrs or "backward" not in q.attrs:
            return
        reach = None
        for call in q.calls():
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr == "step" and len(call.args) + len(call.keywords) == 1):
                continue
            arg = call.args[0] if call.args else call.keywords[0].value
            if call.keywords and call.keywords[0].arg != "closure":
                continue
            reach = reach or _Reach(q.tree)
            fn = self._closure(arg, call, q, reach)
            # The backward in the closure or a function it calls (not deeper: an inner loop's adaptation step
            # several calls down is not the closure's loss); a zeroing anywhere it reaches counts.
            if fn is None or not reach.any(fn, _backwards, depth=1) or reach.any(fn, _clears):
                continue
            if self._single_eval_zeroed(f.value, call, q):
                continue
            body = fn.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str) and len(body) > 1:
                body = body[1:]  # the docstring
            at = body[0] if body else fn
            report.add(self, at,
                       "This closure runs `backward()` without zeroing the gradients first, so each evaluation adds "
                       "onto the last. `step(closure)` may call it several times per step (LBFGS, line searches); "
                       "call `zero_grad()` at its start.")

    @staticmethod
    def _closure(arg: ast.AST, call: ast.Call, q, reach: _Reach):
        """The function `arg` names: a lambda, a `def` of the enclosing function or of the file, a `self` method."""
        if isinstance(arg, ast.Lambda):
            return arg
        if isinstance(arg, ast.Name):
            scope = q.enclosing_function(call)
            while scope is not None:
                for n in ast.walk(scope):
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == arg.id and n is not scope:
                        return n
                scope = q.enclosing_function(scope)
            return reach.functions.get(arg.id)
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == "self":
            return reach.methods.get(arg.attr)
        return None

    @staticmethod
    def _single_eval_zeroed(opt: ast.AST, call: ast.Call, q) -> bool:
        """The optimizer is built in this file only as single-evaluation `torch.optim` classes, and the function
        holding the step zeroes gradients (before or after it): one evaluation per step, cleared every step."""
        name = _spelling(opt)
        built = [a for a in q.assigns if len(a.targets) == 1 and _spelling(a.targets[0]) == name]
        if not built:
            return False
        for a in built:
            qual = q.call_name(a.value) if isinstance(a.value, ast.Call) else None
            if not qual or not qual.startswith("torch.optim.") or qual.rsplit(".", 1)[-1] not in _SINGLE_EVAL:
                return False
        scope = q.enclosing_function(call) or q.tree
        return any(_clears(n) for n in ast.walk(scope))
