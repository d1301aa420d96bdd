"""Small syntax helpers the whole-file rules share (pure `ast`)."""
from __future__ import annotations

import ast
from typing import Optional

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def imports_torch(q) -> bool:
    """Whether the file imports torch or one of its modules (`q.imported`: the qualified names the file imports)."""
    return any(n == "torch" or n.startswith("torch.") for n in q.imported)


def torch_only_for_data(q) -> bool:
    """Whether the only thing the file imports from torch is `torch.utils.data` (`from torch.utils import data` for
    `data.Dataset`): data-loading code, whose arrays are NumPy's (`import torch.utils.data` binds `torch` itself, so
    it does not count)."""
    names = [n for n in q.imported if n == "torch" or n.startswith("torch.")]
    return bool(names) and all(n == "torch.utils.data" or n.startswith("torch.utils.data.") for n in names)


def first_param(fn: ast.AST) -> Optional[str]:
    """The name of a method's first parameter (`self`), or None."""
    args = fn.args.posonlyargs + fn.args.args
    return args[0].arg if args else None


def self_attr(node: ast.AST, me: str) -> Optional[str]:
    """`x` of `self.x` (`me` is the method's first parameter)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
        return node.attr
    return None


def own_nodes(fn: ast.AST, with_defs: bool = True) -> list:
    """The nodes of `fn`'s body, not descending into functions, lambdas and classes defined in it (those nodes
    themselves are listed unless `with_defs` is False)."""
    out, todo = [], list(fn.body)
    while todo:
        n = todo.pop()
        if isinstance(n, _DEFS):
            if with_defs:
                out.append(n)
            continue
        out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def enclosing_arms(q, node: ast.AST):
    """(`if` statement, True where its body holds `node` / False where its `else` does) for each `if` around `node`,
    innermost first, up to the function that holds it (an `if` whose test holds `node` is left out)."""
    child = node
    for anc in q.ancestors(node)[1:]:
        if isinstance(anc, _DEFS):
            return
        if isinstance(anc, ast.If) and child is not anc.test:
            yield anc, any(child is b for b in anc.body)
        child = anc

