"""Names that surely hold a view of a tensor, read from the syntax of the function that binds them.

`t.detach_()` raises "Can't detach views in-place" for every view of a tensor, whether it requires grad or not
(only views of inference tensors are exempt). When `t`'s value is unknown (`logits = model(inputs)` with `model`
a parameter, then `logits_u_w, logits_u_s = logits[n:].chunk(2)`), what the function says about `t` still
settles it: `t` is bound by one statement only, and that statement makes a view of whatever it reads, as long as
the result is a tensor (a slice of a list is a list, `str.split` gives strings), which `t.detach_()` shows it is
(evidence from use).
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from .astwalk import walk

# Tensor methods whose result is a view of the receiver (each checked under torch: `detach_()` on it raises).
VIEW_METHODS = frozenset({"view", "view_as", "t", "transpose", "permute", "narrow", "select", "squeeze", "unsqueeze",
                          "expand", "expand_as", "diagonal", "unflatten", "movedim", "swapaxes", "swapdims",
                          "unfold"})
# Tensor methods returning a sequence of views of the receiver.
SPLIT_METHODS = frozenset({"chunk", "split", "unbind", "tensor_split"})


def basic_index(index: ast.AST) -> bool:
    """An index that slices (a view): a slice, or a tuple of slices, integer constants, None and `...` with at
    least one slice (a list or a tuple cannot take a tuple index). A bare integer or name could be a list's index."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if not any(isinstance(p, ast.Slice) for p in parts):
        return False
    return all(isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis
                                                                             or type(p.value) is int)
               for p in parts)


def _call_kind(value: ast.AST, qual_of: Callable[[ast.AST], Optional[str]]) -> Optional[str]:
    """"view" for an expression that is a view of what it reads, "split" for one giving a sequence of views."""
    if isinstance(value, ast.Subscript) and basic_index(value.slice):
        return "view"
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    name = value.func.attr
    qual = qual_of(value.func)
    if qual is not None:
        # `torch.chunk(x, 2)`, `torch.transpose(x, 0, 1)`: the function form of the same ops.
        if not qual.startswith("torch.") or qual.count(".") != 1 or not value.args:
            return None
    if name in VIEW_METHODS:
        return "view"
    if name in SPLIT_METHODS:
        return "split"
    return None


def view_binding(fn: ast.AST, name: str, qual_of: Callable[[ast.AST], Optional[str]]) -> Optional[ast.AST]:
    """The expression that made the view `name` holds in `fn` (a function or a module), or None: `name` is bound by
    exactly one statement of `fn` (not a parameter, not declared global or nonlocal), `name = <view of x>`,
    `a, name = x.chunk(2)` or `name = x.chunk(2)[0]`."""
    args = fn.args if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
    if args is not None and name in ({a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
                                     | {a.arg for a in (args.vararg, args.kwarg) if a is not None}):
        return None
    stores = []
    for n in walk(fn):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return None
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fn and n.name == name:
            return None
        elif isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name:
            return None
    if len(stores) != 1:
        return None
    target = stores[0]
    stmt = next((n for n in walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and any(t is target for t in walk(n.targets[0]))), None)
    if stmt is None:
        return None
    top = stmt.targets[0]
    if top is target:
        value = stmt.value
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant) \
                and type(value.slice.value) is int and _call_kind(value.value, qual_of) == "split":
            return value  # `name = x.chunk(2)[0]`
        return value if _call_kind(value, qual_of) == "view" else None
    if isinstance(top, (ast.Tuple, ast.List)) and any(e is target for e in top.elts) \
            and not any(isinstance(e, ast.Starred) for e in top.elts):
        return stmt.value if _call_kind(stmt.value, qual_of) == "split" else None
    return None
