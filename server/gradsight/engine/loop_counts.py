"""Inner loops that run the same number of times in every iteration of an enclosing loop (`interp_util`'s
`_guarded_binds`): a name such a loop alone binds is rebound in every outer iteration once the first bound it."""

from __future__ import annotations

import ast
from typing import Callable


# Methods that read a tensor's shape and change nothing (`_loop_changes` does not count them as mutations).
SHAPE_QUERIES = frozenset({"size", "dim", "numel"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)


def same_count(loop: ast.AST, is_ref: Callable[[ast.AST], bool]) -> bool:
    """Whether the `for` statement `loop` runs its body the same number of times whenever it is reached in an
    enclosing loop: it iterates `range(...)` (or `reversed(range(...))`) of integers made of constants and of
    references the enclosing loop never binds or mutates (`is_ref`: names and attribute chains), `len()` of
    those, their `.size(d)`, `.dim()`, `.numel()` or `.shape[d]`, and `+ - * //` of these; its body has no
    `break` or `continue` (every iteration runs to its end) and it has no `else`. Not an iterator or a plain
    reference: an iterator made before the enclosing loop is empty after its first round."""
    if not isinstance(loop, ast.For) or loop.orelse:
        return False
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed" \
            and len(it.args) == 1 and not it.keywords:
        it = it.args[0]
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 3):
        return False
    if not all(_count(a, is_ref) for a in it.args):
        return False
    return not _jumps(loop.body)


def _jumps(body: list) -> bool:
    """Whether a `break` or `continue` stands anywhere among `body`'s statements, nested blocks included (nested
    loops too: the same answer as walking every node, found without visiting expressions, where none can stand)."""
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return True
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(stmt, field, None)
            if block:
                todo.extend(block)
    return False


def _count(n: ast.AST, is_ref: Callable[[ast.AST], bool]) -> bool:
    if isinstance(n, ast.Constant):
        return type(n.value) is int
    if isinstance(n, ast.BinOp):
        return isinstance(n.op, _ARITH) and _count(n.left, is_ref) and _count(n.right, is_ref)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
        return _count(n.operand, is_ref)
    if isinstance(n, (ast.Name, ast.Attribute)):
        return is_ref(n)
    if isinstance(n, ast.Subscript):
        # `x.shape[1]`, `x.size()[1]`
        base, index = n.value, n.slice
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            return False
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return is_ref(base.value)
        return isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr == "size" \
            and not base.args and not base.keywords and is_ref(base.func.value)
    if isinstance(n, ast.Call) and not n.keywords:
        f = n.func
        if isinstance(f, ast.Name) and f.id == "len" and len(n.args) == 1:
            return is_ref(n.args[0])
        if isinstance(f, ast.Attribute) and f.attr in SHAPE_QUERIES and len(n.args) <= 1 \
                and all(isinstance(a, ast.Constant) and type(a.value) is int for a in n.args):
            return is_ref(f.value)
    return False
