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
(the first backward) is here.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk
from .interp_util import _class_methods
from .state import State
from .values import UNKNOWN, FuncVal


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


def run_inherited(interp, info, name: str, meth: FuncVal, entry: State) -> None:
    """Run the inherited method `meth` (`name`) on an instance of `info` built from unknown arguments (a module class:
    its `__init__` run as for its own methods), with unknown arguments; `interp.inherited` names the run for `emit`."""
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
