"""Custom `torch.autograd.Function`s whose `forward` hands back one of its inputs, read from the syntax of `forward`.

`Fn.apply(x, y)` with a `forward(ctx, x, y)` that returns `x` as-is (a gradient-only trick: icefall's `WithLoss`, a
straight-through identity) or `x.view_as(x)` / `x.view(...)` (a gradient reversal) gives a tensor that torch marks as a
view created inside a custom Function: when it requires grad, modifying it (or any view of it) in place raises "... is
a view and is being modified inplace. This view was created inside a custom Function (or because an input was
returned as-is) ...". Only a `forward` whose every `return` gives the same input parameter, never rebound in the body,
is read so; anything else is not known (the call stays unknown).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk

FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_VIEWS = frozenset({"view_as", "view"})


def returned_input(fn: Optional[ast.AST]) -> Optional[int]:
    """The position among `apply`'s arguments of the input that the static `forward(ctx, *inputs)` returns on every
    `return` (as-is, or through `.view_as(...)` / `.view(...)`); None when it does not (or when that is not clear)."""
    if not isinstance(fn, ast.FunctionDef) or fn.args.vararg or fn.args.kwonlyargs or fn.args.posonlyargs:
        return None
    if not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        return None
    inputs = [a.arg for a in fn.args.args[1:]]
    found: Optional[int] = None
    stores = set()
    returns = []
    for n in walk(fn):
        if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None  # a nested definition: its returns are not `forward`'s
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores.add(n.id)
        elif isinstance(n, ast.Return):
            returns.append(n)
    for r in returns:
        v = r.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in _VIEWS:
            v = v.func.value
        if not isinstance(v, ast.Name) or v.id not in inputs or v.id in stores:
            return None
        i = inputs.index(v.id)
        if found is not None and found != i:
            return None
        found = i
    return found
