"""The module scope of a parsed file (`build_scope`: definitions, classes, imports) and the limits on what is
analysed at all."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

from . import torchdb as db
from .interp import ModuleScope
from .report import Source
from .values import ClassInfo, FuncVal

MAX_BYTES = 5_000_000  # beyond this a file is not analysed (a clear message says so)
MAX_NESTING = 200


def build_scope(tree: ast.Module, path: str, source: Source) -> ModuleScope:
    scope = ModuleScope(path=path, tree=tree, source=source)
    records = []
    stars: list = []
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
                    if mod not in stars:
                        stars.append(mod)
                    continue
                sep = "" if mod.endswith(".") or not mod else "."
                scope.imports[alias.asname or alias.name] = f"{mod}{sep}{alias.name}"
    scope.import_records = tuple(records)
    scope.star_imports = tuple(stars)
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


# Library classes that are `torch.nn.Module` subclasses, by the names their packages export: a class deriving
# from one is a module although its base is not in the analysed code.
LIBRARY_MODULE_BASES = frozenset({
    "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
    "pytorch_lightning.core.lightning.LightningModule", "pytorch_lightning.core.module.LightningModule",
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule",
    "transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel",
    "torch_geometric.nn.MessagePassing", "torch_geometric.nn.conv.MessagePassing",
    "allennlp.models.Model", "allennlp.models.model.Model",
    "torchmetrics.Metric", "torchmetrics.metric.Metric",
})
# Bases that say nothing about being a module.
_PLAIN_BASES = frozenset({"object", "?", "abc.ABC", "ABC", "typing.Generic", "Generic", "enum.Enum",
                          "typing.NamedTuple", "NamedTuple", "Exception"})


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
        elif isinstance(b, str) and b in LIBRARY_MODULE_BASES:
            return True
    # Evidence from use: a class derived from a class gradsight cannot see (`allennlp.models.Model`, a base class
    # in another package) that registers parameters or torch.nn layers on `self` is a module: only
    # `nn.Module.__setattr__` makes those layers count, and `register_buffer` exists only there.
    if any(isinstance(b, str) and b not in _PLAIN_BASES and not b.startswith("typing.") for b in info.bases):
        return _builds_submodules(info)
    return False


def _builds_submodules(info: ClassInfo) -> bool:
    scope = info.module
    for meth in info.methods.values():
        if meth.node.name != "__init__":
            continue
        for n in ast.walk(meth.node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id == "self" and n.func.attr in ("register_buffer", "register_parameter",
                                                                       "add_module", "register_module"):
                return True
            if not (isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                    and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                            for t in n.targets)):
                continue
            qual = _static_qual(n.value.func, scope) if scope is not None else None
            if not qual or not qual.startswith("torch.nn.") or qual.startswith("torch.nn.functional"):
                continue
            short = qual.rsplit(".", 1)[-1]
            if short[:1].isupper() and short not in db.PARAMLESS_MODULES and not short.endswith("Loss"):
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


