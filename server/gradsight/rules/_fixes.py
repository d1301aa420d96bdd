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


def out_of_place(source: Source, stmt: ast.stmt) -> Optional[Edit]:
    """`x *= y` -> `x = x * y`; `x.mul_(y)` (as a statement) -> `x = x.mul(y)`."""
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
        call = node.value
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and isinstance(func.value, (cst.Name, cst.Attribute)):
            out_call = call.with_changes(func=func.with_changes(attr=cst.Name(func.attr.value[:-1])))
            new = cst.Assign(targets=[cst.AssignTarget(target=func.value)], value=out_call)
    if new is None:
        return None
    code = cst.Module(body=[cst.SimpleStatementLine(body=[new])]).code.rstrip("\n")
    return Edit(edit.line, edit.column, edit.end_line, edit.end_column, code)


def keyword_value(source: Source, call: ast.Call, name: str, new_text: str) -> Optional[Edit]:
    for kw in call.keywords:
        if kw.arg == name:
            line, col, end_line, end_col = source.span(kw.value)
            return Edit(line, col, end_line, end_col, new_text)
    return None
