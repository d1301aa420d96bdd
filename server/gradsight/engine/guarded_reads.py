"""Where a name a loop binds under invariant tests may be read in the same top-level statement of the body
(`interp_util._guarded_binds`): only after one of its bindings, in that binding's block (its later siblings and
what they hold). Pure functions of the syntax."""

from __future__ import annotations

import ast

from .astwalk import sub_blocks, walk


def _bound_names(stmt: ast.stmt) -> list:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return [n.id for t in targets for n in walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]


def binding_layout(top: ast.stmt, nodes=walk) -> tuple:
    """For the statement `top`: name -> [(end of a simple statement binding it, end of that statement's block)], and
    name -> the positions where it is read. Its statements are read once, its expressions through `nodes` (the
    interpreter's memoised walk)."""
    spans: dict = {}
    todo = [top]
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in sub_blocks(stmt):
            for s in block:
                if not isinstance(s, ast.stmt):
                    continue
                for name in _bound_names(s):
                    spans.setdefault(name, []).append(((s.end_lineno, s.end_col_offset),
                                                       (block[-1].end_lineno, block[-1].end_col_offset)))
                todo.append(s)
    reads: dict = {}
    for n in nodes(top):
        if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load:
            reads.setdefault(n.id, []).append((n.lineno, n.col_offset))
    return spans, reads


def reads_after_binding(layout: tuple, name: str) -> bool:
    """Whether every read of `name` in a statement (its `binding_layout`) comes after a simple statement binding it
    in the same block (`if t: x, y = f(z); g(x)`): in a later sibling statement, never in the binding's own value."""
    spans, reads = layout
    mine = spans.get(name)
    return bool(mine) and all(any(after < pos <= end for after, end in mine) for pos in reads.get(name, ()))
