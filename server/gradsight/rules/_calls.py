"""Calls of plain names in a piece of syntax, read the way GS109 (a `no_grad` block around a helper that
differentiates) and GS416 (a helper that backwards a shared output a second time) look for the helpers a block
calls. Not a rule: rules are the `gsNNN_*` modules."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.astwalk import children

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

# `torch.optim`'s optimizer classes, by the last word of the name a call spells (`optim.Adam(...)`, `Adam(...)`).
TORCH_OPTIMIZERS = frozenset({"SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
                              "ASGD", "Rprop", "LBFGS", "SparseAdam"})


def call_word(func: ast.AST) -> Optional[str]:
    """The last word of what a call spells: `opt.step` -> "step", `Adam` -> "Adam"; None for anything else."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def own_name_calls(nodes) -> list:
    """The calls of a plain name (`f(...)`, not `obj.f(...)`) under `nodes`, outside nested functions, lambdas and
    classes, in source order."""
    out: list = []
    todo = list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out.append(node)
        for child in children(node):
            if not isinstance(child, _NESTED):
                todo.append(child)
    return sorted(out, key=lambda c: (c.lineno, c.col_offset))
