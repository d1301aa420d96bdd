"""The functions a file hands to PyTorch (or to another object) to be called back during a model's forward, read
from the syntax tree: the walk GS425 (a tensor hook registered from a forward hook) and GS426 (a hook that stores a
copy of what it receives) share. Not a rule: rules are the `gsNNN_*` modules.

`module.register_forward_hook(fn)` calls `fn(module, input, output)` after each forward of `module`, in the grad
mode of the code that runs the model: `output` carries the forward's graph when that code runs in grad mode and
requires no grad under `torch.no_grad()`. A bound method stored on another object (`layer.callback = self.record`)
is called by that object's code with values gradsight does not see; such a callback receives what the other
object computes (an attention map in its `forward`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Optional

from ..engine.astwalk import children, walk

FORWARD_HOOKS = ("register_forward_hook", "register_forward_pre_hook")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass(frozen=True)
class Hook:
    """`fn` (a def or a lambda) is called back with `params` (its parameters that receive values from the forward:
    a forward hook's input and output, a callback's arguments); `site` is the call or statement that hands it out;
    `kind` the registering method (`register_forward_hook`, ...) or "callback"."""

    fn: ast.AST
    params: tuple
    site: ast.AST
    kind: str


def own_nodes(fn: ast.AST) -> list:
    """The nodes of `fn`'s own body, in source order, without the bodies of nested functions, lambdas and classes."""
    if isinstance(fn, ast.Lambda):
        return walk(fn.body)
    out: list = []
    todo = list(reversed(fn.body))
    while todo:
        n = todo.pop()
        out.append(n)
        if isinstance(n, _SCOPES):
            continue
        todo.extend(reversed(list(children(n))))
    return out


def _positional(fn: ast.AST) -> list:
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args]


def _is_method(q, fn: ast.AST) -> bool:
    if not isinstance(fn, _DEFS):
        return False
    parent = q.parent(fn)
    if not isinstance(parent, ast.ClassDef):
        return False
    return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)


def _self_name(q, node: ast.AST) -> Optional[str]:
    """The first parameter of the method `node` stands in (`self`), or None outside a method."""
    fn = q.enclosing_function(node)
    while fn is not None and not _is_method(q, fn):
        fn = q.enclosing_function(fn)
    if fn is None:
        return None
    names = _positional(fn)
    return names[0] if names else None


def self_of(q, fn: ast.AST) -> Optional[str]:
    """The name `fn` reads its object by: its own first parameter when it is a method, else the enclosing method's
    (a hook nested in a method, or made by a factory method)."""
    if _is_method(q, fn):
        names = _positional(fn)
        return names[0] if names else None
    return _self_name(q, fn)


def _method(q, node: ast.AST, name: str) -> Optional[ast.AST]:
    cls = q.enclosing(node, (ast.ClassDef,))
    if cls is None:
        return None
    for stmt in cls.body:
        if isinstance(stmt, _DEFS) and stmt.name == name:
            return stmt
    return None


def _function(q, node: ast.AST, name: str) -> Optional[ast.AST]:
    """The `def name` that `name` read at `node` refers to: one nested in the same function, else a module-level
    one."""
    scope = q.enclosing_function(node)
    found = None
    for fn in q.functions:
        if not isinstance(fn, _DEFS) or fn.name != name:
            continue
        home = q.enclosing_function(fn)
        if home is scope and not isinstance(q.parent(fn), ast.ClassDef):
            return fn
        if home is None and not isinstance(q.parent(fn), ast.ClassDef):
            found = fn
    return found


def _returned_defs(fn: ast.AST) -> list:
    """The nested `def`s a factory hands back (`def make(name): def hook(m, i, o): ...; return hook`)."""
    nested = {n.name: n for n in fn.body if isinstance(n, _DEFS)}
    out = []
    for n in own_nodes(fn):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and n.value.id in nested:
            out.append(nested[n.value.id])
        elif isinstance(n, ast.Return) and isinstance(n.value, ast.Lambda):
            out.append(n.value)
    return out


def resolve(q, expr: ast.AST, at: ast.AST, depth: int = 0) -> list:
    """The functions `expr` (read at `at`) evaluates to, as (function, positional arguments bound in advance)."""
    if isinstance(expr, ast.Lambda):
        return [(expr, 0)]
    if isinstance(expr, ast.Name):
        fn = _function(q, at, expr.id)
        return [(fn, 0)] if fn is not None else []
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == _self_name(q, at):
        fn = _method(q, at, expr.attr)
        return [(fn, 1)] if fn is not None else []
    if isinstance(expr, ast.Call) and depth == 0:
        func = expr.func
        if (q.call_name(expr) == "functools.partial" or (isinstance(func, ast.Name) and func.id == "partial")) \
                and expr.args:
            return [(fn, bound + len(expr.args) - 1) for fn, bound in resolve(q, expr.args[0], at, 1)]
        out = []
        for factory, _bound in resolve(q, func, at, 1):
            if isinstance(factory, _DEFS):
                out.extend((inner, 0) for inner in _returned_defs(factory))
        return out
    return []


def _params(fn: ast.AST, bound: int, kind: str) -> tuple:
    names = _positional(fn)[bound:]
    if kind in FORWARD_HOOKS:
        names = names[1:]  # the module the hook is registered on
    return tuple(names)


def hooks(q, kinds=FORWARD_HOOKS, callbacks: bool = False) -> Iterator[Hook]:
    """Every function this file hands out as a forward hook (`kinds`), and, with `callbacks`, every bound method it
    stores as an attribute of another object (`layer.callback = self.record`)."""
    attrs = q.attrs
    if any(k in attrs for k in kinds):
        for call in q.calls():
            f = call.func
            if not (isinstance(f, ast.Attribute) and f.attr in kinds):
                continue
            arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "hook"), None)
            if arg is None:
                continue
            for fn, bound in resolve(q, arg, call):
                if fn is not None:
                    yield Hook(fn, _params(fn, bound, f.attr), call, f.attr)
    if not callbacks:
        return
    for stmt in q.assigns:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Attribute) and isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Name)):
            continue
        if isinstance(target.value, ast.Name) and target.value.id == value.value.id:
            continue  # `self.a = self.b`, the common case, decided without the parents of the statement
        me = _self_name(q, stmt)
        if me is None or value.value.id != me:
            continue
        fn = _method(q, stmt, value.attr)
        if fn is not None:
            yield Hook(fn, _params(fn, 1, "callback"), stmt, "callback")


def derived(fn: ast.AST, seeds: tuple, keep=None) -> set:
    """`seeds` and the local names of `fn` bound (in source order, loops once) from expressions that read one of
    them; `keep(expr, names)` says whether an expression passes the value on (default: always)."""
    names = set(seeds)
    for n in own_nodes(fn):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and n.value is not None:
            if not reads(n.value, names) or (keep is not None and not keep(n.value, names)):
                continue
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            names |= {t.id for tgt in targets for t in walk(tgt) if isinstance(t, ast.Name)}
        elif isinstance(n, (ast.For, ast.AsyncFor)) and reads(n.iter, names):
            names |= {t.id for t in walk(n.target) if isinstance(t, ast.Name)}
    return names


def reads(expr: ast.AST, names: set) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in walk(expr))


def root_name(expr: ast.AST) -> Optional[str]:
    """`output` for `output`, `output[0]`, `output.last_hidden_state[:, 0]`."""
    while isinstance(expr, (ast.Subscript, ast.Attribute)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None
