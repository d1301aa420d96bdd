"""Optimizers a class's `__init__` builds over models it was handed, read from the syntax.

A trainer (an RL agent, a GAN trainer) is often a plain class, or one whose base is in another file, so its
methods run with `self` unknown; the models are `__init__` parameters (`self.qf1 = qf1`) and the optimizer
class may be one too (`optimizer_class=optim.Adam`, then `self.qf1_optimizer = optimizer_class(
self.qf1.parameters(), lr=qf_lr)`). What the methods still know from the class's text: `self.qf1_optimizer`
steps the parameters of `self.qf1` and nothing else, as long as neither attribute is stored anywhere but
that `__init__`. That is evidence from use (the caller could pass another optimizer class, a model without
parameters), so findings built on it are warnings.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from .astwalk import walk
from .interp_util import param_defaults


def _self_attr(node: ast.AST, me: str) -> Optional[str]:
    """`attr` for `me.attr`, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
        return node.attr
    return None


def _optimizer_class(qual: Optional[str]) -> bool:
    if not qual or not qual.startswith("torch.optim.") or "lr_scheduler" in qual:
        return False
    return qual.rsplit(".", 1)[-1][:1].isupper()


def init_optimizers(cls: ast.ClassDef, qual_of: Callable[[ast.AST], Optional[str]]) -> tuple:
    """(optimizers, models, init): `optimizers` maps `X` to (`Y`, the optimizer's short name, the call) for each
    `self.X = Opt(self.Y.parameters(), ...)` directly in `__init__`'s body, `Opt` a `torch.optim` optimizer class
    or a parameter of `__init__` whose default is one; `models` maps each such `Y` to the first of those calls.
    Attributes stored (assigned, deleted, augmented) outside that one statement anywhere in the class are left
    out, and so are optimizers over them. `init` is the `__init__` node (None: no table)."""
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None or not init.args.args:
        return {}, {}, None
    me = init.args.args[0].arg
    defaults = param_defaults(init.args)
    found: dict = {}
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call)):
            continue
        target = _self_attr(stmt.targets[0], me)
        call = stmt.value
        if target is None or not call.args or not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        func = call.func
        qual = qual_of(defaults[func.id]) if isinstance(func, ast.Name) and func.id in defaults else qual_of(func)
        first = call.args[0]
        if not _optimizer_class(qual) or not (isinstance(first, ast.Call) and not first.args and not first.keywords
                                              and isinstance(first.func, ast.Attribute)
                                              and first.func.attr == "parameters"):
            continue
        model = _self_attr(first.func.value, me)
        if model is not None and target not in found:
            found[target] = (model, qual.rsplit(".", 1)[-1], call, stmt)
    if not found:
        return {}, {}, None
    # Stores of the attributes anywhere in the class but those statements: the pairing is then not certain.
    stored: dict = {}
    for n in walk(cls):
        targets = ()
        if isinstance(n, (ast.Assign, ast.Delete)):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = (n.target,)
        for t in targets:
            for leaf in walk(t):
                if isinstance(leaf, ast.Attribute) and isinstance(leaf.ctx, (ast.Store, ast.Del)):
                    stored.setdefault(leaf.attr, []).append(n)
    optimizers: dict = {}
    models: dict = {}
    for target, (model, short, call, stmt) in found.items():
        if stored.get(target, []) != [stmt]:
            continue
        if any(s.lineno > 0 and s is not stmt and not _plain_store(s, me, model, init) for s in stored.get(model, [])):
            continue
        optimizers[target] = (model, short, call)
        models.setdefault(model, call)
    return optimizers, models, init if optimizers else None


def _plain_store(stmt: ast.AST, me: str, model: str, init: ast.FunctionDef) -> bool:
    """`self.Y = y` directly in `__init__`'s body (storing what it was handed)."""
    return stmt in init.body and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        and _self_attr(stmt.targets[0], me) == model
