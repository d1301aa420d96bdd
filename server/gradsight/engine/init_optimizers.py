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
    `self.X = Opt(self.Y.parameters(), ...)` (or `params=self.Y.parameters()`) directly in `__init__`'s body, `Opt` a `torch.optim` optimizer class
    or a parameter of `__init__` whose default is one; `models` maps each such `Y` to the first of those calls.
    An optimizer attribute stored (assigned, deleted, augmented) outside that one statement anywhere in the class
    is left out, and so is one over a model stored anywhere but `__init__` above it; such a model stays in `models`
    where every other store builds a new object into it (a checkpoint's loader). `init` is the `__init__` node
    (None: no table)."""
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
        # The parameters, first positional argument or `params=` (`Adam(params=self.agent.parameters(), lr=lr)`).
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
        if target is None or first is None or not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        func = call.func
        qual = qual_of(defaults[func.id]) if isinstance(func, ast.Name) and func.id in defaults else qual_of(func)
        if not _optimizer_class(qual) or not (isinstance(first, ast.Call) and not first.args and not first.keywords
                                              and isinstance(first.func, ast.Attribute)
                                              and first.func.attr == "parameters"):
            continue
        model = _self_attr(first.func.value, me)
        if model is not None and target not in found:
            found[target] = (model, qual.rsplit(".", 1)[-1], call, stmt)
    if not found:
        return {}, {}, None
    stored = _self_stores(cls)
    optimizers: dict = {}
    models: dict = {}
    for target, (model, short, call, stmt) in found.items():
        if stored.get(target, []) != [stmt]:
            continue
        others = [s for s in stored.get(model, []) if s.lineno > 0 and not _built_before(s, init, stmt)
                  and not _plain_store(s, me, model, init)]
        if not others:
            # Nothing but `__init__`, before the optimizer took its parameters, stores the model: the optimizer
            # steps exactly its parameters.
            optimizers[target] = (model, short, call)
            models.setdefault(model, call)
        elif all(_rebuilt(s) for s in others):
            # Other methods put a newly built model there (`self.actor = EvolvableMLP(**checkpoint[...])` when
            # loading a checkpoint): which parameters the optimizer holds is no longer certain, but the attribute
            # still holds the model the class trains.
            models.setdefault(model, call)
    return optimizers, models, init if models else None


def _self_stores(cls: ast.ClassDef) -> dict:
    """Attribute name -> the statements of the class's methods that store (assign, delete, augment) that attribute
    of the instance they run on: `self.x = ...`, or through a name bound to `self`. A store into another object
    (`clone.actor = ...` on `clone = type(self)(...)`) is not one."""
    stored: dict = {}
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = fn.args.posonlyargs + fn.args.args
        nodes = walk(fn)
        selves = {params[0].arg} if params else set()
        selves |= {t.id for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                   and n.value.id in selves for t in n.targets if isinstance(t, ast.Name)}
        for n in nodes:
            targets = ()
            if isinstance(n, (ast.Assign, ast.Delete)):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = (n.target,)
            for t in targets:
                for leaf in walk(t):
                    if isinstance(leaf, ast.Attribute) and isinstance(leaf.ctx, (ast.Store, ast.Del)) \
                            and (not isinstance(leaf.value, ast.Name) or leaf.value.id in selves):
                        stored.setdefault(leaf.attr, []).append(n)
    return stored


def _built_before(stmt: ast.AST, init: ast.FunctionDef, opt_stmt: ast.AST) -> bool:
    """A store in `__init__` (its branches included) above the statement that builds the optimizer."""
    return stmt.lineno < opt_stmt.lineno and init.lineno <= stmt.lineno <= (init.end_lineno or init.lineno)


def _rebuilt(stmt: ast.AST) -> bool:
    """`self.Y = SomeClass(...)` (or `.to(device)` of one): the attribute gets a newly built object, not None."""
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.targets[0], ast.Attribute)


def _plain_store(stmt: ast.AST, me: str, model: str, init: ast.FunctionDef) -> bool:
    """`self.Y = y` directly in `__init__`'s body (storing what it was handed)."""
    return stmt in init.body and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        and _self_attr(stmt.targets[0], me) == model
