"""Which assignments rebind a backwarded name to something that is no longer that loss (`loss = loss.item()`, `loss =
loss.item() / params.window`), and which expressions and functions surely give numbers (`_number_expr`,
`_returns_numbers`): pure functions of the syntax, read by `StatementsMixin.surely_grad_loss` and the call summaries."""

from __future__ import annotations

import ast

from .astwalk import walk


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


_NUMBER_METHODS = frozenset({"item", "tolist"})
_NUMBER_FUNCS = frozenset({"float", "int", "bool", "str", "len", "round", "repr"})


def _number_expr(node) -> bool:
    """Whether the expression surely makes no tensor with a graph, whatever its operands are: `x.item()`,
    `float(x)`, a comparison, a formatted string, arithmetic and tuples of such."""
    if node is None or isinstance(node, (ast.Constant, ast.JoinedStr, ast.Compare)):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        return isinstance(f, ast.Attribute) and f.attr in _NUMBER_METHODS and not node.args \
            or isinstance(f, ast.Name) and f.id in _NUMBER_FUNCS
    if isinstance(node, ast.BinOp):
        return _number_expr(node.left) and _number_expr(node.right)
    if isinstance(node, ast.UnaryOp):
        return _number_expr(node.operand)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_number_expr(e) for e in node.elts)
    return False


def _returns_numbers(fn: ast.AST) -> bool:
    """Whether every `return` of `fn` (not of functions nested in it) hands back numbers, by its spelling
    (`return total.item() / len(batches)`, `return f"{loss:.3f}"`), or nothing."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Return) and not _number_expr(n.value):
            return False
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(n))
    return True
