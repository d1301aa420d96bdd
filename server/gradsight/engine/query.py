"""The syntax query API rules use for whole-file checks, and the observation that carries it.

Some problems are visible in the shape of the code once names are resolved: a `parameters()` generator handed
to two consumers, a custom `autograd.Function` whose `backward` returns too few gradients, a `.backward()` call
inside a module's `forward`. Rules for these receive one `FileEvent` per analysis and ask a `Query` instead of
re-walking the tree by spelling: qualified names (`import torch as T` and `from torch import no_grad` resolve
to `torch.no_grad`), the enclosing function and class of a node, whether a class is an `nn.Module`, and the
statements that follow a node in its block.

The query is built lazily from the tree and the module scope the interpreter already resolved; it never reads
files and never raises on odd code. It is created once per analysis, so every rule shares one walk.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional

from .events import Event


class Query:
    """Questions about one parsed file. Positions are the tree's; nothing is cached across analyses."""

    def __init__(self, tree: ast.Module, imports: dict, classes: dict):
        self.tree = tree
        self._imports = imports  # local name -> qualified name (module scope)
        self._classes = classes  # class name -> ClassInfo (with `is_module`)
        self._parents: Optional[dict] = None
        self._nodes: Optional[list] = None

    # -- names -------------------------------------------------------------------------------------------
    def qualname(self, node: ast.AST) -> Optional[str]:
        """`T.no_grad` -> `torch.no_grad` when `import torch as T`; `nn.Linear` -> `torch.nn.Linear`."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self._imports.get(node.id)
        if head is None:
            return None
        return ".".join([head] + parts[::-1])

    def call_name(self, call: ast.AST) -> Optional[str]:
        return self.qualname(call.func) if isinstance(call, ast.Call) else None

    def is_module_class(self, cls: ast.ClassDef) -> bool:
        info = self._classes.get(cls.name)
        if info is not None and getattr(info, "node", None) is cls:
            return bool(getattr(info, "is_module", False))
        return any((self.qualname(b) or "").startswith("torch.nn.") and (self.qualname(b) or "").endswith("Module")
                   for b in cls.bases)

    def subclasses(self, qualified: str) -> Iterator[ast.ClassDef]:
        """Classes of this file with a base that resolves to `qualified` (e.g. `torch.autograd.Function`)."""
        for node in self.nodes():
            if isinstance(node, ast.ClassDef) and any(self.qualname(b) == qualified for b in node.bases):
                yield node

    # -- structure ---------------------------------------------------------------------------------------
    def nodes(self) -> list:
        if self._nodes is None:
            self._nodes = list(ast.walk(self.tree))
        return self._nodes

    def calls(self) -> Iterator[ast.Call]:
        return (n for n in self.nodes() if isinstance(n, ast.Call))

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        if self._parents is None:
            self._parents = {}
            for parent in self.nodes():
                for child in ast.iter_child_nodes(parent):
                    self._parents[child] = parent
        return self._parents.get(node)

    def enclosing(self, node: ast.AST, kinds) -> Optional[ast.AST]:
        node = self.parent(node)
        while node is not None and not isinstance(node, kinds):
            node = self.parent(node)
        return node

    def enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        return self.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))

    def statement(self, node: ast.AST) -> Optional[ast.stmt]:
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node

    def following(self, stmt: ast.stmt) -> list:
        """The statements after `stmt` in its own block (not the enclosing blocks)."""
        parent = self.parent(stmt)
        if parent is None:
            return []
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and stmt in block:
                return block[block.index(stmt) + 1:]
        return []

    def names_loaded(self, node: ast.AST, name: str) -> list:
        return [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


@dataclass(frozen=True)
class FileEvent(Event):
    """Once per analysis, after the interpreter ran: `node` is the module, `query` answers questions about it."""

    query: Query = None  # type: ignore[assignment]
