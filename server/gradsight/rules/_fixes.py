"""Fix builders shared by rules. Rewrites go through libcst so formatting and comments survive;
simple insertions (`.detach()`) are plain text edits at positions from the stdlib tree."""

from __future__ import annotations

import ast
from typing import Optional

from ..findings import Edit
from ..engine.report import Source


class _LazyLibcst:
    """`libcst`, imported on first use: importing it costs ~0.2 s, and most analyses build no fix, so the
    language server should not pay for it at start-up."""

    def __getattr__(self, name: str):
        import libcst

        value = getattr(libcst, name)
        setattr(self, name, value)  # later lookups skip __getattr__
        return value


cst = _LazyLibcst()


def _aug_to_bin() -> dict:
    return {
        cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
        cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    }


def _parse_statement(source: Source, stmt: ast.stmt) -> Optional[tuple[cst.BaseSmallStatement, Edit]]:
    if getattr(stmt, "end_lineno", None) is None:
        return None
    line, col, end_line, end_col = source.span(stmt)
    text = source.segment(stmt)
    try:
        module = cst.parse_module(text + "\n")
    except cst.ParserSyntaxError:
        return None
    if len(module.body) != 1 or not isinstance(module.body[0], cst.SimpleStatementLine):
        return None
    small = module.body[0].body
    if len(small) != 1:
        return None
    return small[0], Edit(line, col, end_line, end_col, text)


def _code(node) -> str:
    return cst.Module(body=[]).code_for_node(node)


def out_of_place(source: Source, stmt: ast.stmt, target: Optional[str] = None) -> Optional[Edit]:
    """`x *= y` -> `x = x * y`; `x.mul_(y)` (as a statement) -> `x = x.mul(y)`;
    `torch.relu_(t)` / `F.relu_(t)` (as a statement) -> `t = torch.relu(t)`.

    `target` is the source text of the tensor written in place (the engine knows it). It decides whether a
    call such as `a.b_(c)` is a method on `a` or a function of `c`: rebinding the module name (`torch = ...`)
    would break the program, so when neither side is the target no fix is offered.
    """
    parsed = _parse_statement(source, stmt)
    if parsed is None:
        return None
    node, edit = parsed
    new: Optional[cst.BaseSmallStatement] = None
    aug_to_bin = _aug_to_bin()
    if isinstance(node, cst.AugAssign) and type(node.operator) in aug_to_bin:
        op = aug_to_bin[type(node.operator)]()
        value = node.value
        if isinstance(value, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp, cst.Lambda)):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        new = cst.Assign(targets=[cst.AssignTarget(target=node.target)],
                         value=cst.BinaryOperation(left=node.target, operator=op, right=value))
    elif isinstance(node, cst.Expr) and isinstance(node.value, cst.Call):
        new = _rebinding_call(node.value, target)
    if new is None:
        return None
    code = cst.Module(body=[cst.SimpleStatementLine(body=[new])]).code.rstrip("\n")
    return Edit(edit.line, edit.column, edit.end_line, edit.end_column, code)


def _rebinding_call(call, target: Optional[str]):
    """The assignment that replaces an in-place call used as a statement, or None."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and len(func.attr.value) > 1):
        return None
    out_func = func.with_changes(attr=cst.Name(func.attr.value[:-1]))
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if isinstance(func.value, (cst.Name, cst.Attribute)) and (target is None or _code(func.value) == target):
        if target is None and positional and isinstance(positional[0].value, (cst.Name, cst.Attribute)):
            return None  # `torch.relu_(t)` or `t.add_(u)`? Without the target we cannot tell: no fix.
        return cst.Assign(targets=[cst.AssignTarget(target=func.value)], value=call.with_changes(func=out_func))
    if positional and target is not None and _code(positional[0].value) == target \
            and isinstance(positional[0].value, (cst.Name, cst.Attribute)):
        # `torch.relu_(t)`: the function's first argument is the tensor; rebind it, never the module name.
        return cst.Assign(targets=[cst.AssignTarget(target=positional[0].value)],
                          value=call.with_changes(func=out_func))
    return None


def inplace_keyword_statement(source: Source, stmt: ast.stmt, target: str) -> Optional[Edit]:
    """`F.relu(t, inplace=True)` used as a statement -> `t = F.relu(t)`.

    Setting `inplace=False` there would throw the result away and silently drop the operation, so the
    result is bound to the tensor the call used to modify.
    """
    parsed = _parse_statement(source, stmt)
    if parsed is None:
        return None
    node, edit = parsed
    if not (isinstance(node, cst.Expr) and isinstance(node.value, cst.Call)):
        return None
    call = node.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    first = positional[0].value if positional else None
    if first is None:
        first = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("input", "x")), None)
    if first is None or not isinstance(first, (cst.Name, cst.Attribute)) or _code(first) != target:
        return None
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == "inplace")]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    new = cst.Assign(targets=[cst.AssignTarget(target=first)], value=call.with_changes(args=args))
    code = cst.Module(body=[cst.SimpleStatementLine(body=[new])]).code.rstrip("\n")
    return Edit(edit.line, edit.column, edit.end_line, edit.end_column, code)


def keyword_value(source: Source, call: ast.Call, name: str, new_text: str) -> Optional[Edit]:
    for kw in call.keywords:
        if kw.arg == name:
            line, col, end_line, end_col = source.span(kw.value)
            return Edit(line, col, end_line, end_col, new_text)
    return None
