from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note, make_fix
from ..findings import Applicability, Edit, Severity
from .base import Invalid, Rule, Valid

# Helpers whose name says they detach in place do so on purpose (`repackage_hidden(h)`, `detach_state(s)`).
_ON_PURPOSE = ("detach", "repackage", "truncate", "cut_graph")


class DetachInplaceOnArgument(Rule):
    code = "GS417"
    name = "detach-inplace-on-argument"
    severity = Severity.WARNING
    summary = ("`x.detach_()` on a tensor the function was handed detaches the caller's tensor too; use "
               "`x.detach()`.")
    events = (FileEvent,)
    what_it_does = ("Flags `t.detach_()` where `t` is a parameter of the enclosing function (not `self`), or an "
                    "element of one (`[t.detach_() for t in tensors]`, `for t in tensors: t.detach_()`), and the "
                    "function was not written to detach its argument (its name does not say `detach`, "
                    "`repackage`, `truncate`). `detach_()` on the function's own tensors, on `self.parameters()` "
                    "and on `.grad` is not reported.")
    why_bad = ("`detach_()` changes the tensor object itself, and that object is the caller's: after the call the "
               "caller's tensor has no history (a leaf stops requiring grad). Whatever the caller computes from it "
               "afterwards gets no gradient: the terms silently drop out of the backward, or backward raises "
               "\"element 0 of tensors does not require grad\" when nothing else requires grad. Under "
               "`torch.no_grad()` too: grad mode does not stop `detach_()`.")
    example = ("class CachedSolve:\n    def __init__(self, solves):\n"
               "        self.solves = [s.detach_() for s in solves]   # detaches the caller's tensors")
    use_instead = ("class CachedSolve:\n    def __init__(self, solves):\n"
                   "        self.solves = [s.detach() for s in solves]")
    fix_safety = ("Unsafe: `.detach()` gives a detached tensor with the same values and leaves the caller's tensor "
                  "as it was, which is the point, but a caller that relied on its tensor being detached by the call "
                  "would now keep its graph.")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach_.html",)
    valid = (
        # The function detaches its own tensor.
        Valid("import torch\n\ndef summary(x):\n    y = x * 2\n    y.detach_()\n    return y\n\n"
              "print(summary(torch.randn(3, requires_grad=True)))\n"),
        # Out of place: the caller's tensor keeps its graph.
        Valid("import torch\n\nclass Cache:\n    def __init__(self, solves):\n"
              "        self.solves = [s.detach() for s in solves]\n\n"
              "w = torch.randn(3, requires_grad=True)\ns = w * 2\nc = Cache([s])\n((s * 3).sum() + w.sum()).backward()\n"
              "assert torch.equal(w.grad, torch.full((3,), 7.0))\n"),
        # A helper named for what it does: truncated backpropagation through time detaches on purpose.
        Valid("import torch\n\ndef repackage_hidden(h):\n    for t in h:\n        t.detach_()\n    return h\n\n"
              "w = torch.randn(3, requires_grad=True)\nh = (w * 2, w * 3)\nrepackage_hidden(h)\n"
              "assert not h[0].requires_grad\n"),
        # An output parameter: the function fills the caller's tensor and freezes it on purpose (ParlAI's
        # `create_position_codes(n_pos, dim, out)`).
        Valid("import torch\nimport torch.nn as nn\n\ndef fill_codes(n, dim, out):\n    out.detach_()\n"
              "    out.requires_grad = False\n    out[:, 0] = torch.arange(n, dtype=torch.float)\n\n"
              "emb = nn.Embedding(4, 2)\nfill_codes(4, 2, emb.weight)\nassert not emb.weight.requires_grad\n"),
        # A module's own parameters (re-parameterisation, target networks) are not an argument.
        Valid("import torch.nn as nn\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = nn.Linear(2, 2)\n\n    def fuse(self):\n        for p in self.parameters():\n"
              "            p.detach_()\n\nNet().fuse()\n"),
    )
    invalid = (
        Invalid("import torch\n\ndef solve(a, b):\n    with torch.no_grad():\n        scale = a.detach_().abs().max()\n"
                "    return a @ b / scale\n\n"
                "w = torch.randn(3, 3, requires_grad=True)\na = w * 2\nout = solve(a, torch.randn(3))\n"
                "out.sum().backward()\n",
                line=5, runtime="raises: does not require grad", also=(11,),
                fixed="import torch\n\ndef solve(a, b):\n    with torch.no_grad():\n        scale = a.detach().abs().max()\n"
                      "    return a @ b / scale\n\n"
                      "w = torch.randn(3, 3, requires_grad=True)\na = w * 2\nout = solve(a, torch.randn(3))\n"
                      "out.sum().backward()\n"),
        Invalid("import torch\n\nclass Cache:\n    def __init__(self, solves):\n"
                "        self.solves = [s.detach_() for s in solves]\n\n"
                "w = torch.randn(3, requires_grad=True)\ns = w * 2\nc = Cache([s])\n((s * 3).sum() + w.sum()).backward()\n",
                line=5, runtime="silent: torch.equal(w.grad, torch.ones(3))"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "detach_" not in q.attrs:
            return
        for call in q.calls():
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "detach_" and not call.args
                    and isinstance(func.value, ast.Name)):
                continue
            fn = q.enclosing_function(call)
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    or any(word in fn.name.lower() for word in _ON_PURPOSE):
                continue
            name = func.value.id
            origin = _handed(q, fn, call, name)
            if origin is None or _writes_into(fn, name, call):
                continue
            what, where = origin
            line, column, _, _ = report.source.span(where)
            col = func.end_col_offset
            fix = make_fix("Use the out-of-place `.detach()`", Applicability.UNSAFE,
                           Edit(func.end_lineno, col - len("detach_") + 1, func.end_lineno, col + 1, "detach"))
            report.add(self, call,
                       f"`{name}.detach_()` detaches the caller's tensor ({what}) in place; use `{name}.detach()`. "
                       "What the caller computes from it afterwards gets no gradient.",
                       related=[Note(line, column, "handed in here")] if where is not fn else [], fix=fix)


def _writes_into(fn, name: str, call: ast.Call) -> bool:
    """`fn` otherwise writes into `name` (`name[...] = v`, `name.requires_grad = False`, a separate `name.fill_()`):
    an output parameter, which the function detaches on purpose (`create_position_codes(n, dim, out)`)."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, (ast.Subscript, ast.Attribute)) and isinstance(t.value, ast.Name) \
                        and t.value.id == name:
                    return True
        elif isinstance(n, ast.Call) and n is not call and isinstance(n.func, ast.Attribute) \
                and n.func.attr.endswith("_") and not n.func.attr.endswith("__") \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            return True
    return False


def _params(fn) -> list:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg:
        names.append(a.vararg.arg)
    if names and names[0] in ("self", "cls") and fn.args.args and fn.args.args[0].arg == names[0]:
        names = names[1:]
    return names


def _rebound_before(fn, name: str, line: int) -> bool:
    """`name` is assigned in `fn` before `line` (other than as a loop or comprehension target)."""
    for n in ast.walk(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and n.lineno < line:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(t)):
                    return True
    return False


def _handed(q, fn, call: ast.Call, name: str) -> Optional[tuple]:
    """(how to name it, the node that hands it in) when `name` at `call` is the caller's tensor: a parameter of
    `fn` not rebound before, or the target of a loop or comprehension over such a parameter."""
    params = _params(fn)
    line = call.lineno
    if name in params:
        if _rebound_before(fn, name, line):
            return None
        arg = next(p for p in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                               *([fn.args.vararg] if fn.args.vararg else [])) if p.arg == name)
        return f"`{name}`", arg
    node = call
    while node is not None and node is not fn:
        parent = q.parent(node)
        gens = []
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            gens = parent.generators
        elif isinstance(parent, (ast.For, ast.AsyncFor)) and node in parent.body:
            gens = [parent]
        for g in gens:
            if isinstance(g.target, ast.Name) and g.target.id == name and isinstance(g.iter, ast.Name) \
                    and g.iter.id in params and not _rebound_before(fn, g.iter.id, line):
                return f"an element of `{g.iter.id}`", g.iter
        node = parent
    return None
