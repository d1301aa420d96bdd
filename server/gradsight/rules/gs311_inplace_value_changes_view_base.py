from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..engine.torchdb import is_inplace_name, op_entry
from ..engine.views import basic_index
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Methods whose result shares the receiver's memory: views (`view`, `t`, `squeeze`, ...) and `reshape`/`flatten`,
# which return a view whenever the layout allows one (a contiguous tensor: a loss gradient, a fresh activation).
_VIEW_METHODS = frozenset({"view", "view_as", "reshape", "reshape_as", "flatten", "t", "transpose", "permute",
                           "narrow", "select", "squeeze", "unsqueeze", "diagonal", "unflatten", "movedim", "swapaxes",
                           "swapdims"})
_VIEW_ATTRS = frozenset({"T", "mT", "H", "mH"})
# In-place methods that change no element: they are not the write this rule is about.
_NO_WRITE = frozenset({"requires_grad_", "retain_grad_", "share_memory_", "detach_", "record_stream_", "resize_",
                       "resize_as_", "set_", "pin_memory_", "rename_", "refine_names_"})
# In-place tensor methods that write elements without an out-of-place twin in the op table.
_FILLS = frozenset({"fill_", "zero_", "copy_", "masked_fill_", "index_fill_", "scatter_", "clamp_min_", "clamp_max_"})


def _writes_elements(attr: str) -> bool:
    """A tensor method that rewrites elements in place: `abs_`, `clamp_`, `mul_`, ... (the out-of-place method is a
    known tensor op), or a fill. Other libraries' `_`-suffixed methods (a TensorDict's `unlock_()`) are not."""
    if attr in _FILLS:
        return True
    return is_inplace_name(attr) and attr not in _NO_WRITE and not attr.startswith("__") \
        and op_entry("torch.Tensor." + attr[:-1]) is not None


# Where the in-place call's value is only passed on (`return v.abs_()`, `w = v.abs_()`), the author may mean the
# write; nested in a larger expression (`torch.argmax(v.abs_(), dim=1)`, `v.abs_() * s`) it reads as a function.
_PLAIN_HOLDERS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.NamedExpr)


def _view_base(value: ast.AST):
    """`x` of `x.reshape(...)`, `x.view(...)`, `x.t()`, `x.T`, `x[:, 0]` (a plain name only); else None."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _VIEW_METHODS:
        base = value.func.value
    elif isinstance(value, ast.Attribute) and value.attr in _VIEW_ATTRS:
        base = value.value
    elif isinstance(value, ast.Subscript) and basic_index(value.slice):
        base = value.value
    else:
        return None
    return base if isinstance(base, ast.Name) else None


def _stores(node: ast.AST, name: str) -> bool:
    return any(type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load for n in walk(node))


def _holds(stmt: ast.AST, line: int) -> bool:
    return stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno)


def _reaching(block: list, name: str, line: int, binding):
    """The `ast.Assign` whose value `name` holds when the statement at `line` (inside `block`) runs, following only
    the branch that holds that line; None where another store may reach it (a branch or a loop that stores `name`, a
    tuple target, a `for` target, an exception handler...)."""
    for stmt in block:
        if not _holds(stmt, line):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and stmt.targets[0].id == name:
                binding = stmt
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                binding = None if stmt.name == name else binding
            elif _stores(stmt, name):
                binding = None
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            if _stores(stmt, name) or not any(_holds(s, line) for s in stmt.body):
                return None  # a store in the loop may reach the next iteration
            return _reaching(stmt.body, name, line, binding)
        if isinstance(stmt, ast.If):
            if _stores(stmt.test, name):
                return None
            for sub in (stmt.body, stmt.orelse):
                if any(_holds(s, line) for s in sub):
                    return _reaching(sub, name, line, binding)
            return binding  # the test itself
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(i.optional_vars is not None and _stores(i.optional_vars, name) for i in stmt.items):
                return None
            return _reaching(stmt.body, name, line, binding) if any(_holds(s, line) for s in stmt.body) else binding
        if isinstance(stmt, ast.Try):
            return _reaching(stmt.body, name, line, binding) if any(_holds(s, line) for s in stmt.body) else None
        return None if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
            or not isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) else binding
    return binding


def _read_later(fn: ast.AST, name: str, after: int) -> bool:
    """Whether `name`'s first use after line `after` in `fn` reads it (an assignment's value is read before its
    targets are stored: `grad = flat.reshape(grad.shape) * grad.sign()` reads `grad`)."""
    for stmt in sorted((n for n in walk(fn) if isinstance(n, ast.stmt) and n.lineno > after
                        and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
                       key=lambda s: (s.lineno, s.col_offset)):
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            value = stmt.value
            if value is not None and any(type(n) is ast.Name and n.id == name for n in walk(value)):
                return True
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
                return True
            if any(_stores(t, name) for t in targets):
                return False
            if any(type(n) is ast.Name and n.id == name for t in targets for n in walk(t)):
                return True  # `name[i] = ...`, `name.attr = ...`: reads it
            continue
        compound = isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try))
        heads = [getattr(stmt, f) for f in ("test", "iter") if getattr(stmt, f, None) is not None] if compound else [stmt]
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            heads = [i.context_expr for i in stmt.items]
        if any(type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load for h in heads for n in walk(h)):
            return True
        if not compound and _stores(stmt, name):
            return False
    return False


def _element_writes(top) -> list:
    """A top-level statement's calls `name.<method that rewrites elements in place>(...)`."""
    return [call for call in top.calls if type(call.func) is ast.Attribute and type(call.func.value) is ast.Name
            and _writes_elements(call.func.attr)]


class InplaceValueChangesViewBase(Rule):
    code = "GS311"
    name = "inplace-value-changes-view-base"
    severity = Severity.WARNING
    summary = ("An in-place op used as a value (`torch.argmax(flat.abs_())`) on a view `flat = x.reshape(...)` also "
               "rewrites `x`, which the code reads again.")
    events = (FileEvent,)
    what_it_does = ("Flags an in-place tensor method (`abs_()`, `clamp_()`, `mul_()`, ...) called inside a larger "
                    "expression, as if it computed a new value, on a name bound to a view of another tensor "
                    "(`flat = x.reshape(n, -1)`, `x.view(...)`, `x.t()`, `x[:, 0]`) when the code reads that other "
                    "tensor after it. `reshape` and `flatten` return a view whenever the layout allows (any "
                    "contiguous tensor).")
    why_bad = ("A view shares its base's memory: `flat.abs_()` writes the absolute values into `x` as well, so a "
               "later `x.sign()` is 1 everywhere and whatever the code computes from `x` is silently wrong. Nothing "
               "raises: autograd is not involved when the tensors carry no graph (a gradient, data).")
    example = ("flat = grad.reshape(len(grad), -1)\ni_max = torch.argmax(flat.abs_(), dim=1)\n"
               "step = grad.sign()   # all ones")
    use_instead = ("flat = grad.reshape(len(grad), -1)\ni_max = torch.argmax(flat.abs(), dim=1)\n"
                   "step = grad.sign()")
    fix_safety = "There is no automatic fix: use the out-of-place method (`flat.abs()`), or `clone()` the view first."
    references = ("https://pytorch.org/docs/stable/tensor_view.html",
                  "https://pytorch.org/docs/stable/generated/torch.reshape.html")
    valid = (
        # The out-of-place method.
        Valid("import torch\ng = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])\nflat = g.reshape(len(g), -1)\n"
              "i_max = torch.argmax(flat.abs(), dim=1)\nd = g.sign()\n"),
        # A copy, not a view.
        Valid("import torch\ng = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])\nflat = g.reshape(len(g), -1).clone()\n"
              "i_max = torch.argmax(flat.abs_(), dim=1)\nd = g.sign()\n"),
        # The base is never read again: only the view's new values are used.
        Valid("import torch\n\n\ndef top(g):\n    flat = g.reshape(len(g), -1)\n"
              "    return torch.argmax(flat.abs_(), dim=1)\n\n\ntop(torch.tensor([[-1.0, 2.0], [3.0, -4.0]]))\n"),
        # A statement: the write into the base is what the code asks for.
        Valid("import torch\nw = torch.zeros(2, 3)\nrow = w[0, :]\nrow.add_(1.0)\nprint(w.sum())\n"),
        # The base is rebound before it is read.
        Valid("import torch\ng = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])\nflat = g.view(-1)\n"
              "m = flat.abs_().max()\ng = torch.ones(2, 2)\nd = g.sign()\n"),
        # The name holds a fresh tensor on the branch that reaches the in-place op.
        Valid("import torch\n\n\ndef step(g, norm):\n    flat = g.reshape(len(g), -1)\n    if norm == 0:\n"
              "        flat = torch.ones_like(flat)\n        out = flat\n    else:\n        flat = flat.clone()\n"
              "        out = (flat.abs_() * 2) ** 2\n    return out.reshape(g.shape) * g.sign()\n\n\n"
              "step(torch.tensor([[-1.0, 2.0], [3.0, -4.0]]), 1)\n"),
    )
    invalid = (
        # ART's projected gradient descent (L1 norm): the argmax of |grad| computed in place through a view of the
        # gradient, whose sign is read afterwards.
        Invalid("import torch\ng = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])\nflat = g.reshape(len(g), -1)\n"
                "i_max = torch.argmax(flat.abs_(), dim=1)\nd = g.sign()\n",
                line=4, runtime="silent: bool((d == 1).all())"),
        # The same in a function, on one branch of several (ART's Lp branch).
        Invalid("import torch\n\n\ndef step(g, norm):\n    flat = g.reshape(len(g), -1)\n    if norm == 0:\n"
                "        flat = torch.ones_like(flat)\n    elif norm > 1:\n"
                "        flat = (flat.abs_() * 2) ** 2\n    return flat.reshape(g.shape) * g.sign()\n\n\n"
                "out = step(torch.tensor([[-1.0, 2.0], [3.0, -4.0]]), 2)\n",
                line=9, runtime="silent: bool((out >= 0).all())"),
        # A slice of a weight clamped inside a sum: the weight itself is clamped.
        Invalid("import torch\nw = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])\ncol = w[:, 1]\n"
                "total = col.clamp_(min=0).sum() + 1\nprint(w)\n",
                line=4, runtime="silent: bool((w[:, 1] >= 0).all())"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        # A cheap test of what the file mentions first: this runs on every keystroke.
        source = report.source  # the file's text (subscripts have no attribute name to prefilter by)
        if attrs.isdisjoint(_VIEW_METHODS) and attrs.isdisjoint(_VIEW_ATTRS) and "[" not in source.text:
            return
        if not any(is_inplace_name(a) and a not in _NO_WRITE for a in attrs):
            return
        for call in q.surveyed("GS311.element-writes", _element_writes):
            f = call.func
            parent = q.parent(call)
            if parent is None or isinstance(parent, (*_PLAIN_HOLDERS, ast.stmt, ast.withitem)):
                continue
            view = f.value.id
            fn = q.enclosing_function(call) or q.tree
            if isinstance(fn, ast.Lambda):
                continue
            stmt = q.statement(call)
            if stmt is None:
                continue
            binding = _reaching(fn.body, view, stmt.lineno, None)
            base = _view_base(binding.value) if binding is not None else None
            if base is None or base.id == view:
                continue
            # The base must still be the tensor the view was taken of when the in-place op runs.
            if any(type(n) is ast.Name and n.id == base.id and type(n.ctx) is not ast.Load
                   and binding.lineno < n.lineno < stmt.lineno for n in walk(fn)):
                continue
            if not _read_later(fn, base.id, stmt.end_lineno or stmt.lineno):
                continue
            report.add(self, call,
                       f"`{view}` is a view of `{base.id}`, so `{f.attr}()` here also rewrites `{base.id}`, read "
                       f"later. Use `{view}.{f.attr[:-1]}(...)` (out of place).",
                       related=())
