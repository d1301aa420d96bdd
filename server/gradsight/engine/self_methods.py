"""`self.name(...)` on an instance gradsight cannot model: the class's own method, run with `self` unknown.

A method of a class whose bases do not all resolve (`class CW(Attack)` with `Attack` from a library or a file
outside the workspace, `class Model(pl.LightningModule)`) runs with `self` unknown, so without this a call of a
helper method the class itself defines (`adv = self.tanh_space(w)`) gave an unknown value, and what the helper
does to its arguments (a tensor that requires grad going through `torch.tanh`) was lost. The method is the one the
class (or a base of this workspace) defines; `self` stays unknown inside it, so what it reads from `self` is
unknown as before. The same where `self` is an instance whose attributes all became unknown (a base's method ran code
gradsight cannot see, "*" in `ObjectVal.changed`): a method the class defines is still that method. Not done where
the class (or a base of the workspace) stores an attribute of that name on `self` (an instance
attribute shadows the method), for properties, static and class methods, nor in nested functions (whose
`self` is a closure's).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk
from .interp_super import _owner
from .values import UNKNOWN, BoundMethod, ClassInfo, ObjectVal, Value


def _stored_attrs(cls: ast.ClassDef) -> frozenset:
    """The attribute names the class body stores on any object (`x.name = ...`, `setattr` aside)."""
    out = set()
    for node in walk(cls):
        if type(node) is ast.Attribute and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.attr)
    return frozenset(out)


def own_method(interp, func: ast.Attribute, recv: Value) -> Optional[BoundMethod]:
    """The class's own method for `self.name` as a call's function, where `self` (the running method's instance
    parameter) is unknown, or an instance whose attributes are all unknown ("*" changed: a method of a base ran
    code gradsight cannot see); else None."""
    if not (recv is UNKNOWN or isinstance(recv, ObjectVal) and "*" in recv.changed) \
            or type(func.value) is not ast.Name or not interp.stack or not interp.self_names:
        return None
    me = interp.self_names[-1]
    if not me or func.value.id != me:
        return None
    fn = interp.stack[-1]
    if any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod") for d in getattr(fn, "decorator_list", ())):
        return None
    info = _owner(interp, fn)
    if info is None or isinstance(recv, ObjectVal) and recv.cls is not info:
        return None
    memo = interp.__dict__.setdefault("_own_method_stores", {})
    todo, seen = [info], 0
    while todo and seen < 10:
        cur = todo.pop()
        seen += 1
        hit = memo.get(id(cur.node))
        if hit is None or hit[0] is not cur.node:
            hit = memo[id(cur.node)] = (cur.node, _stored_attrs(cur.node))
        if func.attr in hit[1]:
            return None
        todo.extend(b for b in interp.class_bases(cur) if isinstance(b, ClassInfo))
    meth = interp.find_method(info, func.attr)
    if meth is None or any(type(d) is ast.Name and d.id in ("staticmethod", "classmethod", "property")
                           or type(d) is ast.Attribute for d in meth.node.decorator_list):
        return None
    return BoundMethod(meth, recv)
