"""Inherited methods run on the analysed file's classes.

A class of the analysed file that overrides a method its base class calls on `self` changes what the base class's
code does: `train_model` of a base class in a sibling file runs `loss = self._compute_loss(...)` and then
`loss.backward()`; an override that already backwards the loss it returns makes that second backward raise. The
base class's own analysis runs its own `_compute_loss`, and the override's own analysis never sees the caller. So
each method a class of this file inherits (from a base of this file or of another workspace file), does not define,
and whose body calls on `self` a method the class does define, is run as a unit of its own on an instance of the
class (`units.analyse_definitions`).

Events in another file's code are not reported in this file (`Interpreter.emit`), except one: a backward there
through a graph a backward of this file's code already freed (`FreedElsewhereEvent`), since the statement to change
(the first backward) is here. And one question is read from the syntax: an inherited method that backwards what an
override of this file returns (`loss = self._compute_loss(...)`, then `loss.backward()`), where the override never
returns a value (`NoneBackwardedEvent`): `None.backward()` raises AttributeError. A third is an override that does
nothing of a base class's method that detaches the object's tensors (`def detach(self): pass` in a decoder state
whose base class's `detach()` detaches its hidden state: `NoopDetachEvent`), on a class that stores values on its
instances: what the trainer's truncated backpropagation through time relies on is silently skipped.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk
from .events import NoneBackwardedEvent, NoopDetachEvent
from .interp_util import _class_methods
from .state import State
from .values import UNKNOWN, Fact, FuncVal


def _calls_on_self(fn: ast.AST, names) -> bool:
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return False
    me = params[0].arg
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in names
               and isinstance(n.func.value, ast.Name) and n.func.value.id == me for n in walk(fn))


def inherited_methods(interp, info) -> tuple:
    """((name, FuncVal), ...): the methods `info` inherits and does not define whose body calls on `self` a method
    `info` defines (plain methods: no static or class methods, no dunders)."""
    own = info.methods
    if not own or not info.bases:
        return ()
    out = []
    for name, meth in _class_methods(info, interp.class_bases).items():
        if name in own or name.startswith("__") or not isinstance(meth, FuncVal):
            continue
        fn = meth.node
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod", "property")
               for d in fn.decorator_list):
            continue
        if _calls_on_self(fn, own):
            out.append((name, meth))
    return tuple(out)


def _own_nodes(fn: ast.AST):
    """The nodes of `fn`'s body, nested functions, lambdas and classes left out."""
    todo = list(fn.body)
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(c)


def returns_nothing(fn: ast.AST) -> bool:
    """A plain `def` that never hands back a value: no `return <value>`, no `yield`, and a body that does something
    (not only a docstring, `pass`, `...` or a `raise`: an abstract placeholder), with no decorator."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    if all(isinstance(st, (ast.Pass, ast.Raise)) or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)
           for st in fn.body):
        return False
    for n in _own_nodes(fn):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(n, ast.Return) and n.value is not None \
                and not (isinstance(n.value, ast.Constant) and n.value.value is None):
            return False
    return True


def _binds(st: ast.AST, name: str) -> bool:
    for n in walk(st):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            return True
    return False


def backwarded_results(fn: ast.AST, names) -> list:
    """(method name, `.backward()` call) for each `v = self.m(...)` of `fn`'s body with `m` in `names`, followed in the
    same block, before `v` is bound again, by a statement that calls `v.backward(...)` (and `self.m(...).backward()`)."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return []
    me = params[0].arg

    def own_call(v: ast.AST):
        return isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in names \
            and isinstance(v.func.value, ast.Name) and v.func.value.id == me

    out = []
    for n in (fn, *_own_nodes(fn)):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" \
                and own_call(n.func.value):
            out.append((n.func.value.func.attr, n))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list):
                continue
            for k, st in enumerate(block):
                if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                        and own_call(st.value)):
                    continue
                name = st.targets[0].id
                for later in block[k + 1:]:
                    call = next((c for c in walk(later) if isinstance(c, ast.Call)
                                 and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"
                                 and isinstance(c.func.value, ast.Name) and c.func.value.id == name), None)
                    if call is not None:
                        out.append((st.value.func.attr, call))
                        break
                    if _binds(later, name):
                        break
    return out


def none_backwarded(interp, info, name: str, meth: FuncVal) -> None:
    """`NoneBackwardedEvent` for each override of `info` that returns nothing and whose result the inherited `meth`
    backwards."""
    nothing = {m for m, f in info.methods.items() if returns_nothing(f.node)}
    if not nothing:
        return
    module = meth.module
    for mname, call in backwarded_results(meth.node, nothing):
        if module is not None and module.path != interp.root_path:
            line, col, _, _ = module.source.span(call)
            at = Fact(line, col, "expr", (("expr", ast.unparse(call)[:80]),), None, module.path)
        else:
            at = interp.expr_fact(call)
        interp.emit(NoneBackwardedEvent(info.methods[mname].node, at, name, mname))


def same_file(interp, meth: FuncVal) -> bool:
    """Whether `meth` is defined in the analysed file (a base class of this very file)."""
    return meth.module is None or meth.module is interp.scope or getattr(meth.module, "path", None) == interp.scope.path


def syntax_only(interp, info, name: str, meth: FuncVal) -> None:
    """For a base class of this very file, only what the syntax says (`none_backwarded`): running the inherited
    method would make the unit depend on text that changes with every keystroke here (timm's model files: +90 ms a
    keystroke), and the base class's own units already run its methods."""
    none_backwarded(interp, info, name, meth)
    if interp.track is not None:
        interp.track.add(meth.node)


def run_inherited(interp, info, name: str, meth: FuncVal, entry: State) -> None:
    """Run the inherited method `meth` (`name`) on an instance of `info` built from unknown arguments (a module class:
    its `__init__` run as for its own methods), with unknown arguments; `interp.inherited` names the run for `emit`.
    First, what the syntax says (`none_backwarded`)."""
    none_backwarded(interp, info, name, meth)
    if interp.track is not None and (meth.module is None or meth.module.path == interp.root_path):
        interp.track.add(meth.node)  # read above even where it does not run below
    if interp.is_module_class(info):
        self_val = interp.instantiate(info, [], {}, info.node, State(grad=entry.grad))
    else:
        init = interp.find_method(info, "__init__")
        n_args = len(init.node.args.args) - 1 if init is not None else 0
        self_val = interp.new_object(info, [(info.node, UNKNOWN)] * max(n_args, 0), {}, info.node,
                                     State(grad=entry.grad), fresh=False)
    if self_val is UNKNOWN:
        return
    saved: Optional[tuple] = interp.inherited
    interp.inherited = (info.node, name)
    try:
        interp.run_function(meth, self_val, [], {}, info.node, entry)
    finally:
        interp.inherited = saved


def _noop(fn: ast.AST) -> bool:
    """A plain `def` whose body does nothing: a docstring, `pass`, `...`, a bare `return` / `return None`."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    for st in fn.body:
        if isinstance(st, ast.Pass) or isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue
        if isinstance(st, ast.Return) and (st.value is None or isinstance(st.value, ast.Constant)
                                           and st.value.value is None):
            continue
        return False
    return True


def _detaches_own(fn: ast.AST) -> bool:
    """`fn`'s body calls `.detach()` / `.detach_()` on something it reads from its first parameter (`self.h.detach()`,
    `[h.detach() for h in self.hidden]`)."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return False
    me = params[0].arg
    reads_self = any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me
                     for n in walk(fn))
    return reads_self and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                              and n.func.attr in ("detach", "detach_") for n in walk(fn))


def _stores_values(info) -> bool:
    """A method of the class stores a computed value (not a constant) as an attribute: `self.src = src`,
    `state.previous_input = new_input`."""
    for meth in info.methods.values():
        for n in walk(meth.node):
            if isinstance(n, ast.Assign) and not isinstance(n.value, ast.Constant) \
                    and any(isinstance(t, ast.Attribute) for t in n.targets):
                return True
    return False


def noop_detach(interp, info) -> set:
    """`NoopDetachEvent` for each method of `info` that does nothing and overrides a base class's method of the same
    name that detaches the object's tensors, when the class stores computed values on its instances. Returns the
    definitions of this file it read besides the class (for the unit's dependencies)."""
    read: set = set()
    own = [(name, f) for name, f in info.methods.items() if not name.startswith("__") and _noop(f.node)]
    if not own or not info.bases or not _stores_values(info):
        return read
    bases = [b for b in interp.class_bases(info) if not isinstance(b, str)]
    for name, meth in own:
        for b in bases:
            found = _class_methods(b, interp.class_bases).get(name)
            if found is None:
                continue
            if found.module is None or found.module.path == interp.root_path:
                read.add(found.node)
            if _detaches_own(found.node):
                module = found.module
                if module is not None and module.path != interp.root_path:
                    line, col, _, _ = module.source.span(found.node)
                    base = Fact(line, col, "expr", (("expr", name),), None, module.path)
                else:
                    base = interp.expr_fact(found.node)
                interp.emit(NoopDetachEvent(meth.node, base, name))
            break
    return read
