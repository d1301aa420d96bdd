from __future__ import annotations

import ast

from ..engine.report import Note
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_GENERATORS = ("parameters", "named_parameters", "buffers", "children", "modules")


def _generator_binds(top) -> list:
    """A top-level statement's `name = x.parameters()` (or another generator method, no arguments)."""
    return [node for node in top.assigns if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr in _GENERATORS and not node.value.args]


class ParametersGeneratorReused(Rule):
    code = "GS511"
    name = "parameters-generator-reused"
    severity = Severity.WARNING
    summary = "A `model.parameters()` generator is consumed by its first user; a second user gets nothing."
    events = (FileEvent,)
    what_it_does = ("Flags `params = model.parameters()` (a generator) when `params` is then read twice or more, "
                    "e.g. handed to an optimizer and later to `clip_grad_norm_`.")
    why_bad = ("`parameters()` returns a one-shot generator. The first consumer (usually the optimizer) exhausts "
               "it; every later one sees an empty sequence: `clip_grad_norm_(params, 1.0)` clips nothing and "
               "returns 0, a second optimizer or a weight-decay loop does nothing. PyTorch raises nothing.")
    example = "params = model.parameters()\nopt = torch.optim.Adam(params)\n...\nclip_grad_norm_(params, 1.0)"
    use_instead = "params = list(model.parameters())\nopt = torch.optim.Adam(params)\n...\nclip_grad_norm_(params, 1.0)"
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.parameters",)
    _head = "import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 4)\n"
    _tail = ("opt = torch.optim.SGD(weights, lr=0.1)\nloss = (net(torch.randn(3, 4)) * 50).pow(2).mean()\n"
             "opt.zero_grad()\nloss.backward()\nnorm = nn.utils.clip_grad_norm_(weights, 1.0)\n")
    valid = (
        Valid(_head + "weights = list(net.parameters())\n" + _tail),
        Valid(_head + "weights = net.parameters()\nopt = torch.optim.SGD(weights, lr=0.1)\n"),
        Valid(_head + "for epoch in range(2):\n    weights = net.parameters()\n    total = sum(p.numel() for p in weights)\n"),
        Valid(_head + "weights = net.parameters()\nif net.bias is None:\n    opt = torch.optim.SGD(weights, lr=0.1)\n"
              "else:\n    opt = torch.optim.Adam(weights, lr=0.1)\n"),
        Valid(_head + "weights = net.parameters()\nopt = torch.optim.SGD(weights) if net.bias is None "
              "else torch.optim.Adam(weights)\n"),
        # Only one consumer runs on each path: the branch that uses the generator returns (d2l's
        # `configure_optimizers`).
        Valid(_head + "\n\ndef configure(m):\n    weights = m.parameters()\n    if isinstance(weights, list):\n"
              "        return torch.optim.SGD(weights, lr=0.1)\n    return torch.optim.Adam(weights, lr=0.1)\n\n\n"
              "opt = configure(net)\n"),
        # Another framework's code (the file imports MXNet and nothing of torch): `Block.parameters()` there is
        # a dict, read as often as one likes (d2l's mxnet.py). The import is guarded so the example runs here.
        Valid("try:\n    from mxnet import gluon\nexcept ImportError:\n    gluon = None\n\n\nclass Block:\n"
              "    def parameters(self):\n        return {'w': 1.0, 'b': 2.0}\n\n\ndef configure(m):\n"
              "    params = m.parameters()\n    names = list(params)\n    total = sum(params.values())\n"
              "    return names, len(params), total\n\n\nconfigure(Block())\n"),
        Valid(_head + "\n\ndef rest(m):\n    gen = m.modules()\n    next(gen)\n    return gen\n\n\nkids = list(rest(net))\n"),
    )
    invalid = (
        Invalid(_head + "weights = net.parameters()\n" + _tail, line=4, runtime="silent: float(norm) == 0.0"),
        Invalid(_head + "weights = net.parameters()\nif net.bias is None:\n    opt = torch.optim.SGD(weights, lr=0.1)\n"
                "else:\n    opt = torch.optim.Adam(weights, lr=0.1)\n" + _tail[_tail.index("\n") + 1:], line=4,
                runtime="silent: float(norm) == 0.0"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not any(name in q.attrs for name in _GENERATORS):
            return
        if q.other_framework():
            # MXNet's `Block.parameters()` returns a dict, TensorFlow's and JAX's models have their own: only
            # torch's is a one-shot generator.
            return
        for node in q.surveyed("GS511.generator-binds", _generator_binds):
            name = node.targets[0].id
            scope = q.enclosing_function(node) or q.tree
            if self._rebound(scope, name, node):
                continue
            uses = [n for n in q.names_loaded(scope, name) if (n.lineno > node.lineno
                    or (n.lineno == node.lineno and n.col_offset > node.col_offset)) and _consumes(n, q)]
            uses.sort(key=lambda n: (n.lineno, n.col_offset))
            second = next((later for i, first in enumerate(uses) for later in uses[i + 1:]
                           if not _exclusive(first, later, q) and not _returns_between(first, later, q)), None)
            if second is None:
                continue
            line, column, _, _ = report.source.span(second)
            report.add(self, node, f"`{name}` is a one-shot generator: its first user exhausts it, so the use at line "
                                   f"{line} gets nothing; wrap it in `list()`.",
                       related=[Note(line, column, "gets an empty sequence here")])

    @staticmethod
    def _rebound(scope, name: str, assign) -> bool:
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(scope) if n is not assign.targets[0])


def _exclusive(a: ast.AST, b: ast.AST, q) -> bool:
    """Whether `a` and `b` lie in different branches of one `if`/`elif`/`else` statement or `x if c else y`
    expression, so at most one of them runs (an optimizer built in one branch, another in the `else`)."""
    pa, pb = q.ancestors(a)[::-1], q.ancestors(b)[::-1]
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x is not y:
            common = pa[i - 1]
            if isinstance(common, (ast.If, ast.IfExp)):
                def branch(child, node=common):
                    return "else" if (child in node.orelse if isinstance(node, ast.If) else child is node.orelse) \
                        else ("body" if (child in node.body if isinstance(node, ast.If) else child is node.body)
                              else "test")
                return {branch(x), branch(y)} == {"body", "else"}
            return False
    return False


def _returns_between(first: ast.AST, later: ast.AST, q) -> bool:
    """Whether `first` lies in a branch of an `if` that ends the function with a `return`, and `later` comes after
    that `if` in the same function, outside any `finally`: a path that runs `first` never reaches `later`
    (`if isinstance(params, list): return SGD(params)` then `return Trainer(params)`)."""
    fn = q.enclosing_function(first)
    node, parent = first, q.parent(first)
    while parent is not None and parent is not fn:
        if isinstance(parent, ast.If):
            branch = parent.body if node in parent.body else parent.orelse if node in parent.orelse else None
            if branch and any(isinstance(s, ast.Return) for s in branch) \
                    and (later.lineno, later.col_offset) > (parent.end_lineno, parent.end_col_offset) \
                    and q.enclosing_function(later) is fn and not _in_finally(later, fn, q):
                return True
        node, parent = parent, q.parent(parent)
    return False


def _in_finally(node: ast.AST, fn, q) -> bool:
    child, parent = node, q.parent(node)
    while parent is not None and parent is not fn:
        if isinstance(parent, ast.Try) and child in parent.finalbody:
            return True
        child, parent = parent, q.parent(parent)
    return False


def _consumes(use: ast.Name, q) -> bool:
    """Whether this read iterates the generator: an argument of a call (not `next`, which takes one item on
    purpose), or the iterable of a loop or comprehension. `return gen` hands it on and is not counted."""
    parent = q.parent(use)
    if isinstance(parent, ast.Call) and use in parent.args:
        return not (isinstance(parent.func, ast.Name) and parent.func.id in ("next", "id", "type", "isinstance"))
    if isinstance(parent, ast.Starred):
        return True
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is use:
        return True
    return False
