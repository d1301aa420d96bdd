"""What one iteration of a training loop does, read from the syntax tree: the walk GS514 (a `continue` past the
step) and GS517 (zeroing every iteration, stepping every few) share. Not a rule: rules are the `gsNNN_*` modules."""

from __future__ import annotations

import ast

from ..engine.astwalk import children, walk
from .base import dotted_name

LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


def method_call(call: ast.AST, name: str) -> bool:
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name


def pos(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


class LoopIteration:
    """One iteration of `loop`'s body, in source order. Nested `def`/`class` bodies are not part of it.

    * `zeros`: its unconditional `zero_grad()` statements (not under an `if`, an `except` or a nested loop), as
      (statement, receiver spelling);
    * `backwards`: every `backward` / `manual_backward` call as (call, plain, nested): `plain` when no `if` or
      `except` guards it, `nested` when it stands in a nested loop (which may not run at all);
    * `steps`: every `step` / `optimizer_step` call, nested loops included (`for opt in opts: opt.step()`), as
      (call, guards);
    * `continues`: this loop's own guarded `continue`s as (statement, guards, the block it stands in);
    * `bound`: the names the iteration assigns, the loop's targets included; `flags`: name -> the expression a plain
      `name = expr` gives it.

    A guard is (node, branch statements): an `if` (for either branch) or an `except` handler."""

    def __init__(self, loop: ast.AST):
        self.zeros: list = []
        self.backwards: list = []
        self.steps: list = []
        self.continues: list = []
        self.bound: set = set()
        self.flags: dict = {}
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            self.bound |= {dotted_name(n) for n in ast.walk(loop.target) if isinstance(n, (ast.Name, ast.Attribute))}
        self._visit(loop.body, [], nested=False, plain=True)

    def _visit(self, stmts: list, guards: list, nested: bool, plain: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, _SCOPES):
                continue
            if isinstance(stmt, ast.Continue):
                if not nested and guards:
                    self.continues.append((stmt, guards, stmts))
                continue
            if plain and not nested and isinstance(stmt, ast.Expr) and method_call(stmt.value, "zero_grad"):
                owner = dotted_name(stmt.value.func.value)
                if owner is not None:
                    self.zeros.append((stmt, owner))
            self._binds(stmt)
            self._calls(stmt, guards, nested, plain)
            if isinstance(stmt, ast.If):
                self._visit(stmt.body, guards + [(stmt, stmt.body)], nested, False)
                self._visit(stmt.orelse, guards + [(stmt, stmt.orelse)], nested, False)
            elif isinstance(stmt, LOOPS):
                self._visit(stmt.body, guards, True, False)
                self._visit(stmt.orelse, guards, True, False)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self._visit(stmt.body, guards, nested, plain)
            elif isinstance(stmt, _TRY):
                self._visit(stmt.body, guards, nested, plain)
                for handler in stmt.handlers:
                    self._visit(handler.body, guards + [(handler, handler.body)], nested, False)
                self._visit(stmt.orelse, guards, nested, False)
                self._visit(stmt.finalbody, guards, nested, plain)
            elif hasattr(ast, "Match") and isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    self._visit(case.body, guards, nested, False)

    def _binds(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in ast.walk(target):
                    if isinstance(n, (ast.Name, ast.Attribute)):
                        self.bound.add(dotted_name(n))
                if isinstance(target, ast.Name):
                    self.flags[target.id] = stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            self.bound.add(dotted_name(stmt.target))

    def _calls(self, stmt: ast.stmt, guards: list, nested: bool, plain: bool) -> None:
        """Calls in the statement's own expressions (its nested statements are visited on their own)."""
        for child in children(stmt):
            if isinstance(child, (ast.stmt, ast.excepthandler)) or type(child).__name__ == "match_case":
                continue
            for node in walk(child):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                    continue
                if node.func.attr in ("backward", "manual_backward"):
                    self.backwards.append((node, plain, nested))
                elif node.func.attr in ("step", "optimizer_step"):
                    self.steps.append((node, guards))
