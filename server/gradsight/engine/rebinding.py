"""Which assignments rebind a backwarded name to something that is no longer that loss (`loss = loss.item()`, `loss =
loss.item() / params.window`): pure functions of the syntax, read by `StatementsMixin.surely_grad_loss`."""

from __future__ import annotations

import ast

from .astwalk import walk
from .interp_objects import _number_expr


def _number_bindings(region: ast.AST) -> dict:
    """Each plain name `region` assigns: (line, whether the value surely is no backwarded loss: a number, `loss =
    loss.item()`, an element of `loss, l1 = loss.item(), l1.item()`, or arithmetic on its cut value,
    `_cut_rebinding`) for each of its assignments. `loss += term` keeps a tensor one."""
    out: dict = {}
    for n in walk(region):
        if isinstance(n, (ast.AugAssign, ast.For)) and isinstance(n.target, ast.Name):
            out.setdefault(n.target.id, []).append((n.lineno, False))
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
            continue
        target, value = n.targets[0], n.value
        pairs = [(target, value)]
        if isinstance(target, ast.Tuple):
            same = isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts)
            pairs = list(zip(target.elts, value.elts if same else [None] * len(target.elts)))
        for t, v in pairs:
            if isinstance(t, ast.Name):
                out.setdefault(t.id, []).append((n.lineno, v is not None and (_number_expr(v) or _cut_rebinding(
                    t.id, v))))
    return out


def _cut_rebinding(name: str, value: ast.AST) -> bool:
    """`loss = loss.item() / params.window`: arithmetic that reads `name` only through `.item()` / `.tolist()` /
    `float(...)` / `int(...)`, at least once: whatever the other operands are, the result is not the tensor that
    was backwarded under that name (`0.5 * (a + b)` or `len(x) * loss` stay tensors)."""
    if not isinstance(value, ast.BinOp):
        return False
    cut_reads = {id(n) for c in walk(value) if isinstance(c, ast.Call) and not c.keywords and (
        isinstance(c.func, ast.Attribute) and c.func.attr in ("item", "tolist") and not c.args
        and isinstance(c.func.value, ast.Name) and c.func.value.id == name
        or isinstance(c.func, ast.Name) and c.func.id in ("float", "int") and len(c.args) == 1
        and isinstance(c.args[0], ast.Name) and c.args[0].id == name) for n in walk(c) if isinstance(n, ast.Name)
        and n.id == name}
    reads = [n for n in walk(value) if isinstance(n, ast.Name) and n.id == name]
    return bool(reads) and all(id(n) in cut_reads for n in reads)
