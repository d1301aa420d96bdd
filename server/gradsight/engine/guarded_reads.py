"""Where a name a loop binds under invariant tests may be read in the same top-level statement of the body
(`interp_util._guarded_binds`): only after one of its bindings, in that binding's block (its later siblings and
what they hold). Pure functions of the syntax."""

from __future__ import annotations

import ast

from .astwalk import sub_blocks, walk


def _binds(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in walk(t))


def reads_after_binding(top: ast.stmt, name: str) -> bool:
    """Whether every read of `name` in the statement `top` comes after a simple statement binding it in the same
    block (`if t: x, y = f(z); g(x)`): a later sibling statement, or inside one; never the binding's own value."""
    allowed: set = set()
    todo = [top]
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in sub_blocks(stmt):
            bound = False
            for s in block:
                if not isinstance(s, ast.stmt):
                    continue
                if bound:
                    allowed.update(id(n) for n in walk(s))
                elif _binds(s, name):
                    bound = True
                todo.append(s)
    reads = [n for n in walk(top) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return all(id(n) in allowed for n in reads)
