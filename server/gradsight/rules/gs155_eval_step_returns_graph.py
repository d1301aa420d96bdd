from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import first_param, own_nodes, self_attr
from .base import Invalid, Rule, Valid

_GRAD_OFF = ("torch.no_grad", "torch.inference_mode")


def _grad_off(q, expr: ast.AST) -> bool:
    call = expr if isinstance(expr, ast.Call) else None
    if call is None:
        return q.qualname(expr) in _GRAD_OFF
    if q.qualname(call.func) in _GRAD_OFF:
        return True
    # `torch.set_grad_enabled(False)` / `torch.set_grad_enabled(training)`: not surely on.
    return q.qualname(call.func) == "torch.set_grad_enabled" and not (
        call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is True)


def _decorated_off(q, fn: ast.AST) -> bool:
    return any(_grad_off(q, d) for d in fn.decorator_list)


def _self_call(node: ast.AST, me: str) -> Optional[str]:
    """`f` of `self.f(...)`."""
    return self_attr(node.func, me) if isinstance(node, ast.Call) else None


def _eval_switch(node: ast.AST, me: str) -> bool:
    """`self.module.eval()`, `self.eval()`, `self.module_.train(training)` (anything but a literal `True`)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    root = node.func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id == me):
        return False
    if node.func.attr == "eval" and not node.args:
        return True
    return node.func.attr == "train" and len(node.args) == 1 and not (
        isinstance(node.args[0], ast.Constant) and node.args[0].value is True)


def _calls_under_off(q, fn: ast.AST, me: str) -> dict:
    """`f` -> the `self.f(...)` call the method makes with grad off (a `no_grad` block or decorator)."""
    out = {}
    if _decorated_off(q, fn):
        for n in own_nodes(fn, with_defs=False):
            if (f := _self_call(n, me)) is not None:
                out.setdefault(f, n)
        return out
    for w in own_nodes(fn, with_defs=False):
        if isinstance(w, (ast.With, ast.AsyncWith)) and any(_grad_off(q, i.context_expr) for i in w.items):
            for n in ast.walk(w):
                if (f := _self_call(n, me)) is not None:
                    out.setdefault(f, n)
    return out


def _sites(q, cls: ast.ClassDef) -> Iterator[tuple]:
    """(the returned `self.f(...)` call, f, the sibling's call of `f` with grad off, the sibling) for a method
    that switches the model to evaluation and returns `self.f(...)` with grad on, in a class where another method
    that switches to evaluation makes the same call with grad off."""
    methods = [fn for fn in cls.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    info = []
    for fn in methods:
        me = first_param(fn)
        if me is None:
            continue
        own = own_nodes(fn, with_defs=False)
        info.append((fn, me, own, any(_eval_switch(n, me) for n in own)))
    offs = {fn.name: (_calls_under_off(q, fn, me), fn) for fn, me, own, ev in info if ev}
    for fn, me, own, ev in info:
        if not ev or _decorated_off(q, fn) or any(
                isinstance(n, ast.Attribute) and n.attr in ("backward", "step") for n in own):
            continue
        if any(isinstance(w, (ast.With, ast.AsyncWith)) and any(_grad_off(q, i.context_expr) for i in w.items)
               for w in own):
            continue
        for ret in own:
            if not (isinstance(ret, ast.Return) and ret.value is not None):
                continue
            f = _self_call(ret.value, me)
            if f is None or f == fn.name or not _runs_model(cls, f):
                continue
            sib = next(((calls[f], other) for name, (calls, other) in offs.items()
                        if name != fn.name and f in calls), None)
            if sib is not None:
                yield ret.value, f, sib[0], sib[1]


def _called_with_grad_off(q, cls: ast.ClassDef, name: str) -> bool:
    """Every `self.<name>(...)` call of the class is made with grad off (or there is none)."""
    calls = 0
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or (me := first_param(fn)) is None:
            continue
        off = _calls_under_off(q, fn, me)
        for n in own_nodes(fn, with_defs=False):
            if _self_call(n, me) == name:
                calls += 1
                if off.get(name) is not n:
                    return False
    return calls > 0


_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _runs_model(cls: ast.ClassDef, f: str, depth: int = 0) -> bool:
    """Whether `self.f(...)` gives a model's output: `f` is a callable attribute (`self.model(x)`), `forward`, or a
    method of the class returning such a call (`def infer(self, x): return self.module_(x)`)."""
    methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if f not in methods or f in ("forward", "__call__"):
        return True
    fn = methods[f]
    me = first_param(fn)
    if me is None or depth > 1:
        return False
    for ret in own_nodes(fn, with_defs=False):
        if isinstance(ret, ast.Return) and ret.value is not None:
            if isinstance(ret.value, ast.Call) and isinstance(ret.value.func, ast.Name) and ret.value.func.id == me:
                return True  # `return self(x)`
            g = _self_call(ret.value, me)
            if g is not None and g != f and _runs_model(cls, g, depth + 1):
                return True
    return False


def _collects(cls: ast.ClassDef, name: str, depth: int = 0) -> bool:
    """Whether the class keeps the results of many `self.<name>(...)` calls: a comprehension over them
    (`torch.cat([self.step(x) for x in xs])`), a loop appending them, or a loop yielding them from a generator
    the class collects the same way (`list(self.forward_iter(X))`)."""
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or (me := first_param(fn)) is None:
            continue
        own = own_nodes(fn, with_defs=False)
        for n in own:
            if isinstance(n, _COMPS):
                parts = [n.elt] if not isinstance(n, ast.DictComp) else [n.key, n.value]
                if any(_self_call(x, me) == name for p in parts for x in ast.walk(p)) \
                        or any(_self_call(g.iter, me) == name for g in n.generators):
                    return True
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("list", "tuple") \
                    and n.args and _self_call(n.args[0], me) == name:
                return True
            elif isinstance(n, (ast.For, ast.AsyncFor)):
                body = [x for st in n.body for x in ast.walk(st)]
                got = {t.id for a in body if isinstance(a, ast.Assign) and _self_call(a.value, me) == name
                       for t in a.targets if isinstance(t, ast.Name)}
                if not got and not any(_self_call(x, me) == name for x in body):
                    continue
                for x in body:
                    kept = x.args if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) \
                        and x.func.attr == "append" else [x.value] if isinstance(x, ast.Yield) and x.value else []
                    if any((isinstance(y, ast.Name) and y.id in got) or _self_call(y, me) == name
                           for k in kept for y in ast.walk(k)):
                        if isinstance(x, ast.Call) or (depth == 0 and _collects(cls, fn.name, 1)):
                            return True
    return False


def _mode_call_lines(top) -> list:
    """Lines of a top-level statement's `x.eval()` / `x.train(...)` calls."""
    attribute = ast.Attribute
    return [c.lineno for c in top.calls if c.func.__class__ is attribute and (c.func.attr == "eval"
                                                                              or c.func.attr == "train")]


class EvalStepReturnsGraph(Rule):
    code = "GS155"
    name = "eval-step-returns-graph"
    severity = Severity.WARNING
    summary = ("A method that switches the model to evaluation returns its output computed with grad on, while "
               "a sibling evaluation method runs the same call under `torch.no_grad()`.")
    events = (FileEvent,)
    what_it_does = ("Flags `return self.infer(x)` (a model's output: `self.model(x)`, or a method returning "
                    "one) in a method that calls `self.module.eval()` (or "
                    "`.train(training)`), neither backwards nor steps, and runs with grad on, when another method "
                    "of the class that also switches to evaluation makes the same `self.infer(...)` call under "
                    "`torch.no_grad()`, and the class keeps the outputs of many calls (a comprehension over the calls, "
                    "a loop appending them, or a generator yielding them that the class collects with "
                    "`list(...)`). A method the class only ever calls with grad off is left alone.")
    why_bad = ("Evaluation mode does not stop autograd: the returned output carries the graph of the forward and "
               "every activation it saved. The caller gets a tensor that requires grad (`.numpy()` raises) and, "
               "when it collects the outputs of many batches (`list(self.forward_iter(X))`, `torch.cat(...)` "
               "of predictions), keeps every batch's graph alive until it drops them (skorch's "
               "`evaluation_step`). The sibling method's `torch.no_grad()` shows the call needs no graph for "
               "evaluation.")
    example = ("def validation_step(self, x, y):\n    self.module.eval()\n    with torch.no_grad():\n"
               "        return self.loss(self.infer(x), y)\n\n"
               "def evaluation_step(self, x):\n    self.module.eval()\n    return self.infer(x)")
    use_instead = ("def evaluation_step(self, x):\n    self.module.eval()\n    with torch.no_grad():\n"
                   "        return self.infer(x)")
    fix_safety = ("There is no automatic fix: run the call under `torch.no_grad()` (or "
                  "`torch.set_grad_enabled(training)` when the step also serves training).")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",)
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Net:\n    def __init__(self, module):\n"
             "        self.module = module\n\n    def infer(self, x):\n        return self.module(x)\n\n"
             "    def validation_step(self, x, y):\n        self.module.eval()\n        with torch.no_grad():\n"
             "            return nn.functional.mse_loss(self.infer(x), y)\n\n"
             "    def evaluation_step(self, x, training=False):\n        self.module.train(training)\n")
    _tail = ("\n    def predict(self, batches):\n        return torch.cat([self.evaluation_step(x) for x in batches])\n"
             "\n\nnet = Net(nn.Linear(4, 1))\npreds = net.predict([torch.randn(8, 4) for _ in range(3)])\n")
    valid = (
        # The fix: the step runs with grad off unless it trains.
        Valid(_head + "        with torch.set_grad_enabled(training):\n            return self.infer(x)\n" + _tail
              + "assert preds.grad_fn is None\n"),
        # Only ever called with grad off.
        Valid(_head + "        return self.infer(x)\n"
              + _tail.replace("        return torch.cat(", "        with torch.no_grad():\n"
                                                          "            return torch.cat(")),
        # A method returning a number, not the model's output.
        Valid(_head.replace("    def infer(self, x):\n        return self.module(x)\n",
                            "    def infer(self, x):\n        return self.module(x).mean().item()\n")
              + "        return self.infer(x)\n"
              + _tail.replace("torch.cat([self.evaluation_step(x) for x in batches])",
                              "[self.evaluation_step(x) for x in batches]")),
        # One output per call, which nothing in the class collects: one batch's graph, dropped with it.
        Valid(_head + "        return self.infer(x)\n"
              + _tail.replace("torch.cat([self.evaluation_step(x) for x in batches])",
                              "self.evaluation_step(torch.cat(batches))")),
    )
    invalid = (
        Invalid(_head + "        return self.infer(x)\n" + _tail, line=19,
                runtime="silent: preds.grad_fn is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "no_grad" not in q.attrs and "inference_mode" not in q.attrs:
            return  # the common case, checked first (this rule runs on every keystroke)
        if "eval" not in q.attrs and "train" not in q.attrs:
            return
        # Lines of `x.eval()` / `x.train(...)` calls (kept per unchanged top-level statement); the
        # rule needs two of them in one class, one per method.
        lines = q.surveyed("GS155.mode-lines", _mode_call_lines)
        if len(lines) < 2:
            return
        for cls in q.class_defs:
            end = cls.end_lineno or cls.lineno
            if sum(cls.lineno <= n <= end for n in lines) < 2:
                continue
            for call, f, sib_call, sib in _sites(q, cls):
                fn_name = next((m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                                and m.lineno <= call.lineno <= (m.end_lineno or m.lineno)), None)
                if fn_name is None or _called_with_grad_off(q, cls, fn_name) or not _collects(cls, fn_name):
                    continue  # only ever called with grad off, or no caller keeps more than one output
                report.add(self, call,
                           f"`self.{f}(...)` runs with grad on here, so the output returned keeps its graph. "
                           f"`{sib.name}` makes the same call under `torch.no_grad()`; wrap this one the same way.",
                           related=[Note(sib_call.lineno, sib_call.col_offset + 1,
                                         f"`{sib.name}` makes the same call with grad off")])
