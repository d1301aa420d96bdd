from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import first_param, own_nodes, self_attr
from .base import Invalid, Rule, Valid

# What takes a value out of autograd: a name bound through one of these carries no graph onward.
_CUTS = frozenset({"detach", "detach_", "data", "item", "tolist", "numpy"})
# Calls whose result has no graph but what their arguments bring (the loss's graph must then come from the kept
# values or the method's arguments): torch functions, tensor methods of local values, plain builtins.
_TORCH_ROOTS = frozenset({"torch", "F", "functional", "nn", "math", "np", "numpy"})
_BUILTINS = frozenset({"len", "sum", "min", "max", "abs", "float", "int", "range", "list", "tuple", "zip", "enumerate"})


def _cut(value: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in _CUTS for n in ast.walk(value))


def _retains(call: ast.Call) -> bool:
    """`backward(retain_graph=<anything but False/None>)`: the graph stays after this backward."""
    for k in call.keywords:
        if k.arg == "retain_graph":
            return not (isinstance(k.value, ast.Constant) and k.value.value in (False, None))
    return len(call.args) >= 2 and not (isinstance(call.args[1], ast.Constant) and call.args[1].value in (False, None))


def _plain_call(call: ast.Call, me: str, local: set) -> bool:
    """A call that brings no graph of its own: `torch.cat(...)`, `F.softmax(...)`, `x.view(-1)` on a local or an
    argument, `len(x)`. A model (`self.model(x)`, `net(x)`) or any other unknown callable is not."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in _BUILTINS
    root = f
    while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
        root = root.func if isinstance(root, ast.Call) else root.value
    if not isinstance(root, ast.Name):
        return False
    if root.id in _TORCH_ROOTS:
        return True
    # A tensor method of a local value or an argument; `self.x.method()` is a method of the object's state.
    return root.id in local and root.id != me


def _sites(fn: ast.AST) -> Iterator[tuple]:
    """(statement `self.A = [t[n:]]`, attribute, local `t`, the retaining backward) in a method that combines the
    values kept in `self.A` into `t`, backwards a loss built from `t` with `retain_graph`, and keeps a piece of `t`
    in `self.A` for the next call."""
    me = first_param(fn)
    if me is None:
        return
    own = own_nodes(fn, with_defs=False)
    backwards = [n for n in own if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "backward" and _retains(n)]
    if not backwards:
        return
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} - {me}
    # Local data flow, order left out: each name's reads (names and `self.<attr>`), and the calls its values make.
    reads: dict = {}
    calls: dict = {}
    stores = []
    for n in own:
        if isinstance(n, ast.Assign):
            if len(n.targets) == 1 and self_attr(n.targets[0], me) is not None:
                stores.append(n)
                continue
            targets = [x.id for t in n.targets for x in ast.walk(t) if isinstance(x, ast.Name)]
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None and isinstance(n.target, ast.Name):
            targets = [n.target.id]
        else:
            continue
        cut = _cut(n.value)
        got = set() if cut else {x.id for x in ast.walk(n.value) if isinstance(x, ast.Name)} | \
            {"." + a for x in ast.walk(n.value) if (a := self_attr(x, me)) is not None}
        made = [] if cut else [x for x in ast.walk(n.value) if isinstance(x, ast.Call)]
        for t in targets:
            reads.setdefault(t, set()).update(got)
            calls.setdefault(t, []).extend(made)
    if not stores:
        return
    local = set(reads) | params

    def closure(start: set) -> set:
        out, todo = set(), list(start)
        while todo:
            x = todo.pop()
            if x in out:
                continue
            out.add(x)
            todo.extend(reads.get(x, ()))
        return out

    for bw in backwards:
        start = {x.id for x in ast.walk(bw.func.value) if isinstance(x, ast.Name)}
        if _cut(bw.func.value) or not start:
            continue
        feeds = closure(start)
        # Where the loss's graph can come from: nothing but the kept values and the arguments.
        if any(not _plain_call(c, me, local) for x in feeds for c in calls.get(x, ())):
            continue
        for stmt in stores:
            attr = self_attr(stmt.targets[0], me)
            value = stmt.value
            if _cut(value):
                continue
            items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            for item in items:
                if not (isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name)):
                    continue
                t = item.value.id
                if t in feeds and "." + attr in closure({t}):
                    yield stmt, attr, t, bw
                    break


class BackwardedRemainderKept(Rule):
    code = "GS429"
    name = "backwarded-remainder-kept"
    severity = Severity.WARNING
    summary = ("A method keeps a slice of the tensor it combined from its cached values and backwarded with "
               "`retain_graph`: every call chains its graph onto the next one.")
    events = (FileEvent,)
    what_it_does = ("Flags `self.cache = [t[n:]]` (or `self.cache = t[n:]`) in a method that builds `t` from "
                    "`self.cache` (`t = torch.cat(self.cache)`), backwards a loss made from `t` with "
                    "`retain_graph=...`, and makes no model call of its own (so the loss's graph is the cached "
                    "values').")
    why_bad = ("A slice keeps the graph of the whole tensor it was cut from: its `grad_fn` leads to the "
               "concatenation and through it to every cached entry, the ones this call used included. The next "
               "call concatenates the slice with new entries, so its backward walks this call's graph again, and "
               "the retained graphs chain from call to call: memory grows with every update (autonomous-learning-"
               "library's `SoftmaxPolicy.reinforce`). Without `retain_graph` the second backward raises instead.")
    example = ("def reinforce(self, errors):\n    log_probs = torch.cat(self._log_probs)\n    n = len(errors)\n"
               "    self._log_probs = [log_probs[n:]]\n    loss = -torch.dot(log_probs[:n], errors) / n\n"
               "    loss.backward(retain_graph=True)")
    use_instead = ("def reinforce(self, errors):\n    i = self._entries_for(len(errors))\n"
                   "    log_probs = torch.cat(self._log_probs[:i])\n    self._log_probs = self._log_probs[i:]\n"
                   "    loss = -torch.dot(log_probs, errors) / len(errors)\n    loss.backward()")
    fix_safety = ("There is no automatic fix: keeping the unused entries themselves (each with its own graph) "
                  "instead of a slice of their concatenation changes how the cache is split.")
    references = ("https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory",)
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Policy:\n    def __init__(self):\n"
             "        self.model = nn.Linear(4, 3)\n        self.optimizer = torch.optim.SGD(self.model.parameters(), "
             "lr=0.01)\n        self._log_probs = []\n\n    def __call__(self, state):\n"
             "        dist = torch.distributions.Categorical(logits=self.model(state))\n"
             "        action = dist.sample()\n        self._log_probs.append(dist.log_prob(action))\n"
             "        return action\n\n    def reinforce(self, errors):\n")
    _tail = ("        loss = -torch.dot(log_probs, errors) / len(errors)\n"
             "        loss.backward(retain_graph=len(self._log_probs) > 0)\n        self.optimizer.step()\n"
             "        self.optimizer.zero_grad()\n\n\ndef depth(t):\n    n, todo, seen = 0, [t.grad_fn], set()\n"
             "    while todo:\n        fn = todo.pop()\n        if fn is None or fn in seen:\n            continue\n"
             "        seen.add(fn)\n        n += fn.name().startswith('Cat')\n"
             "        todo.extend(f for f, _ in fn.next_functions)\n    return n\n\n\npolicy = Policy()\n"
             "for _ in range(4):\n    for _ in range(3):\n        policy(torch.randn(2, 4))\n"
             "    policy.reinforce(torch.randn(4))\n")
    valid = (
        # The fix: keep the unused entries themselves, each with its own graph.
        Valid(_head + "        i, n = 0, 0\n        while n < len(errors):\n            n += len(self._log_probs[i])\n"
              "            i += 1\n        log_probs = torch.cat(self._log_probs[:i])[:len(errors)]\n"
              "        self._log_probs = self._log_probs[i:]\n"
              + _tail.replace("retain_graph=len(self._log_probs) > 0", "")
              + "assert all(depth(t) == 0 for t in policy._log_probs)\n"),
        # A buffer of data (no graph) split per update, and a loss whose graph comes from the model.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Learner:\n    def __init__(self):\n"
              "        self.model = nn.Linear(4, 1)\n        self.inputs = []\n\n    def update(self, n):\n"
              "        x = torch.cat(self.inputs)\n        self.inputs = [x[n:]]\n"
              "        loss = self.model(x[:n]).pow(2).mean()\n        loss.backward(retain_graph=True)\n\n\n"
              "learner = Learner()\nlearner.inputs = [torch.randn(3, 4), torch.randn(3, 4)]\nlearner.update(4)\n"
              "learner.update(2)\n"),
    )
    invalid = (
        Invalid(_head + "        log_probs = torch.cat(self._log_probs)\n"
                "        self._log_probs = [log_probs[len(errors):]]\n        log_probs = log_probs[:len(errors)]\n"
                + _tail, line=19,
                runtime="silent: depth(policy._log_probs[0]) >= 4"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "backward" not in q.attrs:
            return  # the common case, checked first (this rule runs on every keystroke)
        if not any("retain_graph" in line for line in report.source.lines):
            return
        for cls in q.class_defs:
            for fn in cls.body:
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for stmt, attr, t, bw in _sites(fn):
                    report.add(self, stmt,
                               f"`self.{attr}` keeps a slice of `{t}`, whose graph the backward at line {bw.lineno} "
                               f"retains. The next call's backward walks this call's graph again and the chain "
                               f"grows every call: keep the unused entries themselves instead of a slice of their "
                               f"concatenation.",
                               related=[Note(bw.lineno, bw.col_offset + 1, "backwarded here with the graph retained")])
