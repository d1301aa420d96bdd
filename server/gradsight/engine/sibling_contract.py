"""An override that breaks the stop-gradient contract its sibling implementations keep.

A base class declares a method (`compute_target`) that its subclasses implement; a method of the class family
calls it on `self` and backwards a loss built from the result (`update_critic`: `q_tpn = self.compute_target(batch)`,
`loss = ...`, `loss.backward()`). When every other implementation of that method in view computes what it returns
under `torch.no_grad()` (or detaches it), the value is meant as a constant: that is the family's visible contract.
An override that returns a trained module's output with its graph (`return self._value_func(batch.next_observations)`,
the module's parameters handed to an optimizer in the family) breaks it: the caller's backward also runs into that
module, and the optimizer steps it with a gradient the algorithm does not have (d3rlpy's IQL before its fix).

Read from the syntax of this file's class and the classes its resolved bases' files hold (siblings: classes of this
file or of a base's file that derive from the same base). Certain shapes only: every other concrete implementation
(at least one) stops the gradient on every return; the override has no `no_grad`/`detach` of its own; a method of the
family calls it on `self` with grad mode on (not inside a `no_grad` block) and backwards something.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk
from .events import SiblingStopsEvent
from .interp_util import _class_methods, _has_backward
from .values import ClassInfo, Fact

_GRAD_OFF = ("no_grad", "inference_mode")
_STOPS = ("detach", "detach_", "no_grad", "inference_mode", "set_grad_enabled", "enable_grad")
_SKIP = frozenset({"forward", "__call__"})


def _grad_off_expr(node: ast.AST) -> bool:
    """`torch.no_grad()`, `no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)` (as a context or a
    decorator)."""
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "set_grad_enabled":
            return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value is False
        return name in _GRAD_OFF
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name in _GRAD_OFF


def _returns(fn: ast.AST) -> list:
    """[(return statement, under grad-off)] for the valued returns of `fn` itself (not of nested definitions)."""
    out: list = []

    def visit(body: list, off: bool) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(st, ast.Return):
                if st.value is not None and not (isinstance(st.value, ast.Constant) and st.value.value is None):
                    out.append((st, off))
                continue
            inner = off
            if isinstance(st, (ast.With, ast.AsyncWith)):
                inner = off or any(_grad_off_expr(it.context_expr) for it in st.items)
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                sub = getattr(st, field, None)
                if sub:
                    visit(sub, inner)

    visit(fn.body, any(_grad_off_expr(d) for d in fn.decorator_list))
    return out


def _trivial(fn: ast.AST) -> bool:
    """An abstract or placeholder body: docstring, `pass`, `...`, `raise NotImplementedError`."""
    for st in fn.body:
        if isinstance(st, ast.Pass) or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.Raise):
            continue
        return False
    return True


def _stops(fn: ast.AST) -> bool:
    """Every valued return of `fn` is under grad-off or returns `<x>.detach()` (at least one such return)."""
    rets = _returns(fn)
    return bool(rets) and all(off or isinstance(r.value, ast.Call) and isinstance(r.value.func, ast.Attribute)
                              and r.value.func.attr == "detach" for r, off in rets)


def _mentions_stop(fn: ast.AST) -> bool:
    for n in walk(fn):
        if isinstance(n, ast.Attribute) and n.attr in _STOPS or isinstance(n, ast.Name) and n.id in _STOPS:
            return True
    return False


def _self_name(fn: ast.AST) -> Optional[str]:
    params = fn.args.posonlyargs + fn.args.args
    return params[0].arg if params else None


def _module_call(value: ast.AST, me: str, methods: dict) -> Optional[tuple]:
    """(call node, attr) of the first `me.<attr>(...)` / `me.<attr>.<m>(...)` in `value`, `attr` not a method."""
    for n in walk(value):
        if not isinstance(n, ast.Call) or not isinstance(n.func, ast.Attribute):
            continue
        f = n.func
        if isinstance(f.value, ast.Name) and f.value.id == me and f.attr not in methods:
            return n, f.attr
        if isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name) and f.value.value.id == me \
                and f.value.attr not in methods and f.attr not in _STOPS and f.attr != "parameters":
            return n, f.value.attr
    return None


def _reads_parameters(fns, attr: str) -> bool:
    """Some method reads `self.<attr>.parameters()` (hands the module's parameters to an optimizer or a list)."""
    for fn in fns:
        me = _self_name(fn)
        for n in walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "parameters" \
                    and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == attr \
                    and isinstance(n.func.value.value, ast.Name) and n.func.value.value.id == me:
                return True
    return False


def _calls_outside_no_grad(fn: ast.AST, name: str) -> bool:
    """`fn` calls `self.<name>(...)` somewhere not inside a grad-off `with` block."""
    me = _self_name(fn)
    if me is None or any(_grad_off_expr(d) for d in fn.decorator_list):
        return False
    stack = [(st, False) for st in fn.body]
    while stack:
        node, off = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)):
            off = off or any(_grad_off_expr(it.context_expr) for it in node.items)
        if not off and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == name and isinstance(node.func.value, ast.Name) and node.func.value.id == me:
            return True
        stack.extend((c, off) for c in ast.iter_child_nodes(node))
    return False


def _uses_attr(fn: ast.AST, attr: str) -> bool:
    me = _self_name(fn)
    return any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name) and n.value.id == me
               for n in walk(fn))


def _ancestors(info: ClassInfo, bases_of) -> list:
    out, todo = [], [info]
    while todo and len(out) < 10:
        cur = todo.pop(0)
        for b in bases_of(cur):
            if isinstance(b, ClassInfo) and b not in out and b is not info:
                out.append(b)
                todo.append(b)
    return out


def _fact(interp, node: ast.AST, module, name: str) -> Fact:
    if module is not None and module.path != interp.root_path:
        line, col, _, _ = module.source.span(node)
        return Fact(line, col, "expr", (("expr", name),), None, module.path)
    return interp.expr_fact(node)


def sibling_stops(interp, info: ClassInfo) -> set:
    """`SiblingStopsEvent` for each method of `info` that returns a trained module attribute's output with its graph
    where every other implementation of the method in the class family stops the gradient (module docstring).
    Returns the definitions of this file it read besides the class (for the unit's dependencies)."""
    read: set = set()
    own = [(name, f) for name, f in info.methods.items()
           if name not in _SKIP and not name.startswith("__") and not _trivial(f.node)]
    if not own or not info.bases:
        return read
    ancestors = _ancestors(info, interp.class_bases)
    if not ancestors:
        return read
    here = interp.root_path
    read.update(a.node for a in ancestors if a.module is None or a.module.path == here)
    family = _class_methods(info, interp.class_bases)
    for name, meth in own:
        fn = meth.node
        me = _self_name(fn)
        if me is None or fn.decorator_list or _mentions_stop(fn):
            continue
        declared = [a for a in ancestors if name in a.methods]
        if not declared:
            continue
        hit = None
        for ret, _ in _returns(fn):
            found = _module_call(ret.value, me, family)
            if found is not None:
                hit = (ret, found[1])
                break
        if hit is None:
            continue
        ret, attr = hit
        fns = [m.node for m in family.values()] + [m.node for a in ancestors for m in a.methods.values()]
        if not _reads_parameters(fns, attr):
            continue
        callers = [m for m in fns if m is not fn and _calls_outside_no_grad(m, name) and _has_backward(m) is not None]
        if not callers:
            continue
        # The other implementations: the declaring ancestors' own (when concrete) and the siblings' (classes of this
        # file or of an ancestor's file that derive from a declaring ancestor), the override itself excluded.
        others = [a.methods[name] for a in declared if not _trivial(a.methods[name].node)]
        modules = [info.module] + [a.module for a in declared]
        seen_cls = {id(info)} | {id(a) for a in declared}
        for module in modules:
            for k in (getattr(module, "classes", None) or {}).values():
                if module is info.module and k is not info:
                    read.add(k.node)
                if id(k) in seen_cls or name not in k.methods:
                    continue
                seen_cls.add(id(k))
                if any(a in declared for a in _ancestors(k, interp.class_bases)):
                    if not _trivial(k.methods[name].node):
                        others.append(k.methods[name])
        if not others or not all(_stops(o.node) for o in others):
            continue
        if any(_uses_attr(o.node, attr) for o in others):
            # Variants that differ only in freezing the same module (a linear probe, a fine-tuned model).
            continue
        first = others[0]
        interp.emit(SiblingStopsEvent(ret, name, attr, _fact(interp, first.node, first.module, name), len(others),
                                      callers[0].name))
    return read
