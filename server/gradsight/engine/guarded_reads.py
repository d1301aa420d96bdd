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


def chain_binds(stmt: ast.If, name_binds) -> dict:
    """For an `if`/`elif` chain without a final `else`: name -> how often the chain binds it (`name_binds`), for the
    names every arm binds in a simple statement of its own block (`if len(data) == 2: ... predictions = model(x)
    elif len(data) == 3: ... predictions = model(x_d, x_s)`). A loop whose first run takes no arm reads such a name
    unbound (NameError), so the chain is written to cover every case: `_guarded_binds` takes it for a guard."""
    arms = []
    cur = stmt
    while True:
        arms.append(cur.body)
        if not cur.orelse:
            break
        if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
            cur = cur.orelse[0]
            continue
        return {}  # a final `else`: the names every branch binds are bound, not guarded
    if len(arms) < 2:
        return {}
    common = None
    for arm in arms:
        names = {n for s in arm if isinstance(s, ast.stmt) for n in _bound_names(s)}
        common = names if common is None else common & names
        if not common:
            return {}
    counts = name_binds(stmt)
    return {name: counts[name] for name in common if name in counts}


def note_chain(stmt: ast.If, i: int, tests: tuple, guarded: dict, count: dict, last: dict, name_binds) -> None:
    """`_guarded_binds`' bookkeeping for the names `chain_binds` finds in the `if` statement `stmt` (the `i`th of
    the loop body, under the invariant `tests`)."""
    for name, n in chain_binds(stmt, name_binds).items():
        guarded.setdefault(name, []).extend(tests)
        count[name], last[name] = count.get(name, 0) + n, i


def _may_guard(loop: ast.AST) -> bool:
    """Whether `_guarded_binds` can find anything in `loop`: an `if` reached from the body's top level through `if`
    and `with` blocks only (without one, every binding is unguarded), found without walking expressions."""
    todo = list(getattr(loop, "body", None) or [])
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.If, ast.For)):
            return True
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            todo.extend(stmt.body)
    return False
