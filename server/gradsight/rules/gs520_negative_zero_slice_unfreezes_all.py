from __future__ import annotations

import ast
import re
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _zero_defaults(fn: ast.AST) -> dict:
    """Parameters of `fn` whose default is the integer 0, with the default's node."""
    a = fn.args
    pos = a.posonlyargs + a.args
    out = {}
    for p, d in zip(pos[len(pos) - len(a.defaults):], a.defaults):
        out[p.arg] = d
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        if d is not None:
            out[p.arg] = d
    return {k: v for k, v in out.items() if isinstance(v, ast.Constant) and type(v.value) is int and v.value == 0}


_NEG_SLICE = re.compile(r"\[\s*-\s*[A-Za-z_]")


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _unfreezes(fn: ast.AST) -> bool:
    """Whether `fn` (nested functions included) turns gradients on: `x.requires_grad = True` (or a value that is not
    the constant False) or `x.requires_grad_()` / `x.requires_grad_(True)`."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                             for t in n.targets):
            if not (isinstance(n.value, ast.Constant) and n.value.value is False):
                return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_" \
                and not (n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False):
            return True
    return False


def _functions_with_zero_defaults(top) -> list:
    """A top-level statement's functions with a parameter that defaults to 0: (function, `_zero_defaults`)."""
    return [(fn, zero) for fn in top.functions for zero in (_zero_defaults(fn),) if zero]


class NegativeZeroSliceUnfreezesAll(Rule):
    code = "GS520"
    name = "negative-zero-slice-unfreezes-all"
    severity = Severity.WARNING
    summary = ("`groups[-n:]` with `n` defaulting to 0 selects every group, so the code meant to unfreeze none "
               "unfreezes all.")
    events = (FileEvent,)
    what_it_does = ("Flags a slice `xs[-n:]` in a function that turns gradients on (`p.requires_grad = True`, "
                    "`requires_grad_()`, in it or in a function nested in it) where `n` is a parameter whose default "
                    "is `0`, with no test of `n` around the slice or before it (`if n > 0:`, `if not n: return`), no "
                    "assertion on it and no new value given to it.")
    why_bad = ("`-0 == 0`, so `xs[-0:]` is `xs[0:]`: the whole list, not an empty one. A locking helper that "
               "freezes everything and then unfreezes the last `n` groups unfreezes every group when called with "
               "the default `n = 0`, and the \"locked\" tower trains (open_clip's `lock_text_transformer`).")
    example = ("def lock(model, unlocked_groups=0):\n    for p in model.parameters():\n"
               "        p.requires_grad = False\n    groups = list(model.children())\n"
               "    for g in groups[-unlocked_groups:]:\n"
               "        g.requires_grad_(True)")
    use_instead = ("    if unlocked_groups > 0:\n        for g in groups[-unlocked_groups:]:\n"
                   "            g.requires_grad_(True)")
    fix_safety = "There is no automatic fix: add a test of the count (`if n > 0:`) around the slice."
    references = ("https://docs.python.org/3/library/stdtypes.html#common-sequence-operations",)
    _head = ("import torch\nimport torch.nn as nn\n\n\n")
    _model = "\n\nmodel = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2))\nlock(model)\n"
    valid = (
        # The fix: unfreeze only when there is something to unfreeze (open_clip's fix, lerobot's `if k > 0:`).
        Valid(_head + "def lock(model, unlocked_groups=0):\n    for p in model.parameters():\n"
              "        p.requires_grad = False\n    groups = list(model.children())\n    if unlocked_groups != 0:\n"
              "        for g in groups[-unlocked_groups:]:\n            g.requires_grad_(True)\n" + _model
              + "assert not any(p.requires_grad for p in model.parameters())\n"),
        Valid(_head + "def lock(model, unlocked_groups=0):\n    for p in model.parameters():\n"
              "        p.requires_grad = False\n    if not unlocked_groups:\n        return\n"
              "    for g in list(model.children())[-unlocked_groups:]:\n        g.requires_grad_(True)\n" + _model),
        # Freezing the last `n` groups: the slice freezes, it never unfreezes.
        Valid(_head + "def freeze_top(model, n=0):\n    for g in list(model.children())[-n:]:\n"
              "        for p in g.parameters():\n            p.requires_grad = False\n"),
        # A default other than 0.
        Valid(_head + "def lock(model, unlocked_groups=1):\n    for p in model.parameters():\n"
              "        p.requires_grad = False\n    for g in list(model.children())[-unlocked_groups:]:\n"
              "        g.requires_grad_(True)\n"),
    )
    invalid = (
        Invalid(_head + "def lock(model, unlocked_groups=0):\n    for p in model.parameters():\n"
                "        p.requires_grad = False\n    groups = list(model.children())\n\n    def _unlock(x):\n"
                "        for g in x:\n            for p in g.parameters():\n                p.requires_grad = True\n\n"
                "    _unlock(groups[-unlocked_groups:])\n" + _model,
                line=15, runtime="silent: all(p.requires_grad for p in model.parameters())"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not ({"requires_grad", "requires_grad_"} & q.attrs):
            return  # the common case, checked first (this rule runs on every keystroke)
        lines = report.source.lines
        for fn, zero in q.surveyed("GS520.zero-defaults", _functions_with_zero_defaults):
            if not any(_NEG_SLICE.search(lines[i])
                       for i in range(fn.lineno - 1, min(fn.end_lineno or fn.lineno, len(lines)))):
                continue  # no `[-name` in its lines: cheaper than walking its nodes on every keystroke
            for sl in ast.walk(fn):
                if not (isinstance(sl, ast.Slice) and sl.upper is None and sl.step is None
                        and isinstance(sl.lower, ast.UnaryOp) and isinstance(sl.lower.op, ast.USub)
                        and isinstance(sl.lower.operand, ast.Name) and sl.lower.operand.id in zero):
                    continue
                name = sl.lower.operand.id
                if q.enclosing_function(sl) is not fn or not _unfreezes(fn) or self._guarded(fn, sl, name, q):
                    continue
                stmt = q.statement(sl)
                default = zero[name]
                report.add(self, stmt if stmt is not None else sl,
                           f"`[-{name}:]` is the whole list when `{name}` is 0, its default: every group is "
                           f"unfrozen. Test `{name} > 0` first.",
                           related=[Note(default.lineno, default.col_offset + 1, f"`{name}` defaults to 0 here")])

    @staticmethod
    def _guarded(fn: ast.AST, sl: ast.AST, name: str, q) -> bool:
        """Whether the code tests `name` around or before the slice, asserts on it, or gives it a new value."""
        node = q.parent(sl)
        while node is not None and node is not fn:
            if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _reads(node.test, name):
                return True
            if isinstance(node, ast.comprehension) and any(_reads(t, name) for t in node.ifs):
                return True
            node = q.parent(node)
        for n in ast.walk(fn):
            if isinstance(n, ast.Assert) and _reads(n.test, name):
                return True
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if any(isinstance(e, ast.Name) and e.id == name for t in targets for e in ast.walk(t)):
                    return True
            # `if not n: return` (or raise) before the slice.
            if isinstance(n, ast.If) and n.lineno < sl.lineno and _reads(n.test, name) \
                    and any(isinstance(s, (ast.Return, ast.Raise)) for s in n.body):
                return True
        return False
