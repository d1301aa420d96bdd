from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import make_fix
from ..findings import Applicability, Edit, Severity
from .base import Invalid, Rule, Valid

_SAVED = ("saved_tensors", "saved_variables")
# What a tuple is fine for: indexing, unpacking, its length, iterating, handing it on whole.
_TUPLE_USES = ("len", "list", "tuple", "zip", "enumerate", "iter", "reversed", "isinstance", "print", "any", "all")


class SavedTensorsNotUnpacked(Rule):
    code = "GS419"
    name = "saved-tensors-not-unpacked"
    severity = Severity.ERROR
    summary = ("`w = ctx.saved_tensors` in a custom `Function.backward` binds the tuple of saved tensors, and "
               "using `w` as a tensor raises.")
    events = (FileEvent,)
    what_it_does = ("Flags `name = ctx.saved_tensors` (or the old `ctx.saved_variables`) in a `backward(ctx, ...)` "
                    "of an `autograd.Function` when `name` is then used as a tensor: in arithmetic, with a tensor "
                    "method or attribute (`name.view(...)`, `name.shape`), or as an argument of a tensor method or "
                    "a `torch` function. Indexing it, unpacking it, `len()` and iterating are fine.")
    why_bad = ("`ctx.saved_tensors` is always a tuple, also when one tensor was saved. The backward then raises "
               "when autograd calls it: `grad * w` with a tuple raises a TypeError (\"only integer tensors of a "
               "single element can be converted to an index\"), `w.view(...)` an AttributeError. The forward "
               "runs fine, so the error shows only at `loss.backward()` (nadavbh12/VQ-VAE's `NearestEmbed`).")
    example = ("@staticmethod\ndef backward(ctx, grad_out):\n    w = ctx.saved_tensors\n"
               "    return grad_out * w, None")
    use_instead = ("@staticmethod\ndef backward(ctx, grad_out):\n    w, = ctx.saved_tensors\n"
                   "    return grad_out * w, None")
    fix_safety = ("Safe where the forward saves exactly one tensor (`ctx.save_for_backward(w)`): `w, = "
                  "ctx.saved_tensors` binds that tensor, which is what the backward uses. With several saved "
                  "tensors no fix is offered: which one is meant is not known.")
    references = ("https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",)
    valid = (
        Valid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, w):\n"
              "        ctx.save_for_backward(w)\n        return x * w\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        w, = ctx.saved_tensors\n        return grad_out * w, None\n\n\n"
              "x = torch.randn(3, requires_grad=True)\nScale.apply(x, torch.randn(3)).sum().backward()\n"),
        Valid("import torch\n\n\nclass Mul(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, w):\n"
              "        ctx.save_for_backward(x, w)\n        return x * w\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        saved = ctx.saved_tensors\n        x, w = saved[0], saved[1]\n"
              "        return grad_out * w, grad_out * x\n\n\n"
              "x = torch.randn(3, requires_grad=True)\nMul.apply(x, torch.randn(3)).sum().backward()\n"),
    )
    invalid = (
        Invalid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, w):\n"
                "        ctx.save_for_backward(w)\n        return x * w\n\n    @staticmethod\n"
                "    def backward(ctx, grad_out):\n        w = ctx.saved_tensors\n        return grad_out * w, None\n\n\n"
                "x = torch.randn(3, requires_grad=True)\nScale.apply(x, torch.randn(3)).sum().backward()\n",
                line=12, runtime="raises: only integer tensors of a single element",
                fixed="import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
                      "    def forward(ctx, x, w):\n        ctx.save_for_backward(w)\n        return x * w\n\n"
                      "    @staticmethod\n    def backward(ctx, grad_out):\n        w, = ctx.saved_tensors\n"
                      "        return grad_out * w, None\n\n\n"
                      "x = torch.randn(3, requires_grad=True)\nScale.apply(x, torch.randn(3)).sum().backward()\n"),
        Invalid("import torch\n\n\nclass Pick(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, idx):\n"
                "        ctx.save_for_backward(idx, x)\n        return x[idx]\n\n    @staticmethod\n"
                "    def backward(ctx, grad_out):\n        idx = ctx.saved_tensors\n"
                "        g = torch.zeros(5).index_add(0, idx.view(-1), grad_out)\n        return g, None\n\n\n"
                "x = torch.randn(5, requires_grad=True)\nPick.apply(x, torch.tensor([1, 3])).sum().backward()\n",
                line=12, runtime="raises: 'tuple' object has no attribute 'view'"),
        # A `@classmethod` backward: `ctx` is its second parameter.
        Invalid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @classmethod\n"
                "    def forward(cls, ctx, x, w):\n        ctx.save_for_backward(w)\n        return x * w\n\n"
                "    @classmethod\n    def backward(cls, ctx, grad_out):\n        w = ctx.saved_tensors\n"
                "        return grad_out * w, None\n\n\n"
                "x = torch.randn(3, requires_grad=True)\nScale.apply(x, torch.randn(3)).sum().backward()\n",
                line=12, runtime="raises: only integer tensors of a single element",
                fixed="import torch\n\n\nclass Scale(torch.autograd.Function):\n    @classmethod\n"
                      "    def forward(cls, ctx, x, w):\n        ctx.save_for_backward(w)\n        return x * w\n\n"
                      "    @classmethod\n    def backward(cls, ctx, grad_out):\n        w, = ctx.saved_tensors\n"
                      "        return grad_out * w, None\n\n\n"
                      "x = torch.randn(3, requires_grad=True)\nScale.apply(x, torch.randn(3)).sum().backward()\n"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not any(a in q.attrs for a in _SAVED):
            return
        for cls in q.nodes():
            if not isinstance(cls, ast.ClassDef):
                continue
            methods = {m.name: m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            fn = methods.get("backward")
            if fn is None:
                continue
            # `ctx` comes first in a `@staticmethod` backward, after `cls` in a `@classmethod` one.
            first = 1 if any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list) else 0
            if len(fn.args.args) <= first:
                continue
            ctx = fn.args.args[first].arg
            for stmt in ast.walk(fn):
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and isinstance(stmt.value, ast.Attribute) and stmt.value.attr in _SAVED
                        and isinstance(stmt.value.value, ast.Name) and stmt.value.value.id == ctx):
                    continue
                name = stmt.targets[0].id
                use = _tensor_use(fn, name, stmt)
                if use is None:
                    continue
                fix = None
                saved = _saved_count(methods.get("forward"))
                if saved == 1:
                    t, v = stmt.targets[0], stmt.value
                    edits = [Edit(t.end_lineno, t.end_col_offset + 1, t.end_lineno, t.end_col_offset + 1, ",")]
                    if v.attr == "saved_variables":  # gone from torch 2: the same tuple under its current name
                        edits.append(Edit(v.end_lineno, v.end_col_offset - len(v.attr) + 1, v.end_lineno,
                                          v.end_col_offset + 1, "saved_tensors"))
                    fix = make_fix(f"Unpack the one saved tensor: `{name}, = ctx.saved_tensors`", Applicability.SAFE,
                                   *edits)
                report.add(self, stmt,
                           f"`ctx.{stmt.value.attr}` is a tuple, so `{name}` is a tuple and `{use}` raises when "
                           f"autograd runs this backward. Unpack it: `{name}, = ctx.saved_tensors`.", fix=fix)


def _tensor_use(fn, name: str, assign: ast.Assign) -> Optional[str]:
    """The first use of `name` after `assign` that needs a tensor (None when every use is fine for a tuple, or the
    name is bound again first)."""
    parents: dict = {}
    for p in ast.walk(fn):
        for c in ast.iter_child_nodes(p):
            parents[c] = p
    uses = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
                   and isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) > (assign.lineno, assign.col_offset)),
                  key=lambda n: (n.lineno, n.col_offset))
    for n in uses:
        if any(isinstance(s, ast.Assign) and s is not assign and assign.lineno < s.lineno < n.lineno and any(
                isinstance(t, ast.Name) and t.id == name for tgt in s.targets for t in ast.walk(tgt))
               for s in ast.walk(fn)):
            return None
        p = parents.get(n)
        if isinstance(p, ast.Attribute) and p.value is n and p.attr not in ("count", "index"):
            return ast.unparse(p)
        if isinstance(p, ast.BinOp):
            return ast.unparse(p)
        if isinstance(p, ast.Call) and n in p.args:
            fname = p.func.id if isinstance(p.func, ast.Name) else None
            if fname in _TUPLE_USES:
                continue
            if isinstance(p.func, ast.Attribute) or fname is None:
                return ast.unparse(p)
    return None


def _saved_count(forward) -> Optional[int]:
    """How many tensors `forward` saves, when it calls `ctx.save_for_backward` once with plain arguments."""
    if forward is None:
        return None
    calls = [c for c in ast.walk(forward) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
             and c.func.attr == "save_for_backward"]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args):
        return None
    return len(calls[0].args)
