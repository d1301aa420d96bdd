"""The module scope of a parsed file (`build_scope`: definitions, classes, imports) and the limits on what is
analysed at all."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from .interp import ModuleScope
from .report import Source
from .values import ClassInfo, FuncVal

MAX_BYTES = 5_000_000  # beyond this a file is not analysed (a clear message says so)
MAX_NESTING = 200


def build_scope(tree: ast.Module, path: str, source: Source) -> ModuleScope:
    scope = ModuleScope(path=path, tree=tree, source=source)
    records = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            records.append(("import", "", 0, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.ImportFrom):
            records.append(("from", node.module or "", node.level or 0, tuple(a.name for a in node.names)))
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    scope.imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            mod = ("." * (node.level or 0)) + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                sep = "" if mod.endswith(".") or not mod else "."
                scope.imports[alias.asname or alias.name] = f"{mod}{sep}{alias.name}"
    scope.import_records = tuple(records)
    for stmt in tree.body:
        _collect_defs(stmt, scope)
    # Resolve class bases once every class is known.
    for info in scope.classes.values():
        bases = []
        for b in info.node.bases:
            if isinstance(b, ast.Name) and b.id in scope.classes:
                bases.append(scope.classes[b.id])
            else:
                bases.append(_static_qual(b, scope) or "?")
        info.bases = tuple(bases)
    for info in scope.classes.values():
        info.is_module = _is_module(info, set())
    return scope


def _statements(body: list) -> "Iterator[ast.stmt]":
    """Every statement, nested ones included, without descending into expressions (imports are statements)."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            sub = getattr(stmt, field, None)
            if sub:
                stack.extend(reversed(sub))


def _collect_defs(stmt: ast.stmt, scope: ModuleScope) -> None:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope.functions[stmt.name] = FuncVal(stmt, None, scope, stmt.name)
    elif isinstance(stmt, ast.ClassDef):
        info = ClassInfo(stmt.name, stmt, module=scope)
        for sub in stmt.body:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                info.methods[sub.name] = FuncVal(sub, info, scope, f"{stmt.name}.{sub.name}")
        scope.classes[stmt.name] = info
    elif isinstance(stmt, (ast.If, ast.Try)):
        # Definitions under `if TYPE_CHECKING:` / `try: import` guards still define names.
        for sub in getattr(stmt, "body", []):
            _collect_defs(sub, scope)


def _static_qual(node: ast.AST, scope: ModuleScope) -> Optional[str]:
    if isinstance(node, ast.Name):
        return scope.imports.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        base = _static_qual(node.value, scope)
        return f"{base}.{node.attr}" if base else None
    return None


def _is_module(info: ClassInfo, seen: set) -> bool:
    if id(info) in seen:
        return False
    seen.add(id(info))
    for b in info.bases:
        if isinstance(b, ClassInfo):
            if _is_module(b, seen):
                return True
        elif isinstance(b, str) and b.startswith("torch.nn.") and b.rsplit(".", 1)[-1][:1].isupper():
            return True
    return False


_NOT_BRACKETS = {c: None for c in range(128) if chr(c) not in "()[]{}"}


def nesting_depth(text: str) -> int:
    depth = best = 0
    brackets = text.translate(_NOT_BRACKETS) if text.isascii() else "".join(c for c in text if c in "()[]{}")
    for ch in brackets:
        if ch in "([{":
            depth += 1
            best = max(best, depth)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return best


