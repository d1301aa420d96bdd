"""`super().method(...)` in a method: the base class's method, run on the same instance.

Without it a subclass's `super().__init__()` left the attributes its base sets unknown: a tensor the base model makes
in `__init__` (`self.aux_loss = torch.zeros(1)`) that a base method the subclass's `forward` calls adds into in place. The method is looked for in the bases of the class that defines the
running method (the next class in its bases' order that has it, through bases in other workspace files as
`class_bases` resolves them); `self.*` goes in and comes back as for any method call on the instance. A base that
does not resolve (`nn.Module` itself, a library class) leaves the call to the caller's usual handling (unknown).
"""

from __future__ import annotations

import ast
from typing import Optional


from .state import State
from .values import ClassInfo, ModuleVal, ObjectVal, Value


def is_super_call(func: ast.AST) -> bool:
    """`super().name` or `super(Cls, self).name` as a call's function."""
    return type(func) is ast.Attribute and type(func.value) is ast.Call and type(func.value.func) is ast.Name \
        and func.value.func.id == "super" and len(func.value.args) in (0, 2) and not func.value.keywords


def _owner(interp, fn: ast.AST) -> Optional[ClassInfo]:
    for info in interp.scope.classes.values():
        meth = info.methods.get(getattr(fn, "name", ""))
        if meth is not None and meth.node is fn:
            return info
    return None


def super_call(interp, node: ast.Call, state: State) -> Optional[Value]:
    """The value of `super().name(...)` at `node`, or None when the base method is not known (the caller then
    handles the call as before)."""
    if not interp.stack or not interp.self_names or not interp.self_names[-1] or "super" in interp.scope.functions:
        return None
    me = interp.self_names[-1]
    self_val = state.get(me)
    if not isinstance(self_val, (ModuleVal, ObjectVal)):
        return None
    info = _owner(interp, interp.stack[-1])
    if info is None:
        return None
    name = node.func.attr
    meth = None
    for base in interp.class_bases(info):
        if isinstance(base, ClassInfo):
            meth = interp.find_method(base, name)
            if meth is not None:
                break
    if meth is None or any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod")
                           for d in meth.node.decorator_list):
        return None
    args, kwargs = interp.eval_args(node, state)
    prefix = me + "."
    imports = tuple(sorted((k[len(prefix):], state.env[k]) for k in state.compound if k.startswith(prefix)))
    result = interp.run_function(meth, self_val, args, kwargs, node, state, self_import=imports)
    for rest, val in interp.last_exports:
        if state.get(prefix + rest) != val:
            state.set(prefix + rest, val)
    interp.last_exports = ()
    return result if isinstance(result, Value) else None
