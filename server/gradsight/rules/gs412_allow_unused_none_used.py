from __future__ import annotations

import ast
from typing import Optional

from ..engine.report import Note
from ..engine.events import BackwardEvent
from ..engine.values import TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _enclosing_statement(tree: ast.AST, node: ast.AST) -> tuple[Optional[ast.stmt], Optional[ast.AST]]:
    """The statement holding `node` and the function (or module) around it."""
    best = (None, tree)
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in ast.walk(scope):
            if isinstance(stmt, ast.stmt) and stmt is not scope and any(n is node for n in ast.walk(stmt)):
                if best[0] is None or (stmt.lineno, -stmt.end_lineno) >= (best[0].lineno, -best[0].end_lineno):
                    best = (stmt, scope)
    return best


def _checks_none(scope: ast.AST, name: str) -> bool:
    for n in ast.walk(scope):
        if isinstance(n, ast.Compare) and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators):
            if any(isinstance(x, ast.Name) and x.id == name for x in ast.walk(n.left)):
                return True
        if isinstance(n, (ast.If, ast.IfExp, ast.While)) and isinstance(n.test, ast.Name) and n.test.id == name:
            return True
        if isinstance(n, ast.BoolOp) and any(isinstance(v, ast.Name) and v.id == name for v in n.values):
            return True
    return False


def _first_tensor_use(scope: ast.AST, name: str, after: int) -> Optional[ast.AST]:
    """A read of `name` as a tensor operand (arithmetic, method call, indexing) after line `after`."""
    for n in sorted((n for n in ast.walk(scope) if hasattr(n, "lineno") and n.lineno > after),
                    key=lambda n: (n.lineno, n.col_offset)):
        operands = []
        if isinstance(n, ast.BinOp):
            operands = [n.left, n.right]
        elif isinstance(n, ast.AugAssign):
            operands = [n.value]
        elif isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Load):
            operands = [n.value]
        if any(isinstance(o, ast.Name) and o.id == name for o in operands):
            return n
    return None


class AllowUnusedNoneUsed(Rule):
    code = "GS412"
    name = "allow-unused-none-used"
    severity = Severity.WARNING
    summary = "`autograd.grad(..., allow_unused=True)` returns None for an unused input, which is then used as a tensor."
    events = (BackwardEvent,)
    what_it_does = ("Flags `torch.autograd.grad(out, inputs, allow_unused=True)` when an input certainly does not "
                    "feed `out` and its gradient is then used in arithmetic or as a tensor without a `None` check.")
    why_bad = ("With `allow_unused=True`, the gradient of an input that `out` does not depend on is `None`, not "
               "zeros. Using it as a tensor raises a TypeError (\"unsupported operand type(s)\") or an "
               "AttributeError, away from the real cause.")
    example = "ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True)\nb_new = b - 0.1 * gb"
    use_instead = ("ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True, materialize_grads=True)\n"
                   "b_new = b - 0.1 * gb")
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    _head = ("import torch\na = torch.randn(3, requires_grad=True)\nb = torch.randn(3, requires_grad=True)\n"
             "score = (a * 2).sum()\n")
    valid = (
        Valid(_head + "ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True)\n"
              "b_new = b if gb is None else b - 0.1 * gb\n"),
        Valid(_head + "ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True, materialize_grads=True)\n"
              "b_new = b - 0.1 * gb\n"),
        Valid(_head + "ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True)\na_new = a - 0.1 * ga\n"),
    )
    invalid = (
        Invalid(_head + "ga, gb = torch.autograd.grad(score, [a, b], allow_unused=True)\nb_new = b - 0.1 * gb\n",
                line=5, runtime="raises: unsupported operand type(s)"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if event.api != "torch.autograd.grad" or event.allow_unused is not Tri.YES or t.rg is not Tri.YES:
            return
        if not t.sources or t.psrc_partial or report.tree is None:
            return
        unused = [i for i, (_, val) in enumerate(event.inputs)
                  if isinstance(val, TensorVal) and val.leaf is Tri.YES and val.rg is Tri.YES and val.sources
                  and not (val.sources & t.sources)]
        if not unused:
            return
        stmt, scope = _enclosing_statement(report.tree, event.node)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], (ast.Tuple, ast.List))
                and stmt.value is event.node):
            return
        if any(kw.arg == "materialize_grads" for kw in event.node.keywords):
            return
        elts = stmt.targets[0].elts
        for i in unused:
            if i >= len(elts) or not isinstance(elts[i], ast.Name):
                continue
            name = elts[i].id
            if _checks_none(scope, name):
                continue
            use = _first_tensor_use(scope, name, stmt.end_lineno)
            if use is None:
                continue
            line, column, _, _ = report.source.span(use)
            report.add(self, event.node, f"`{name}` is None (its input does not feed `{event.expr}`), and line "
                                         f"{line} uses it as a tensor, which raises.",
                       related=[Note(line, column, "raises here")])
