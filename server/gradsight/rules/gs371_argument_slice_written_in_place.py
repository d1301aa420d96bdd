from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import imports_torch
from .base import Invalid, Rule, Valid
from .gs350_inplace_on_detached_argument import _inplace_writes, _params, _statements
from .gs370_argument_rewritten_after_save import (_GRAD_OFF, _bound, block_paths, dominates, enclosing_defs,
                                                  grad_off_statements, returned_names, tensor_params, writes_in_text)

_MSG = "\"a view of a leaf Variable that requires grad is being used in an in-place operation\""


def _slice_of(value: ast.AST, name: str) -> bool:
    """`x[:, :1]`, `x[..., :l]`: multi-dimensional basic indexing of `name` with a slice, a view that shares its memory
    (a list or a dict takes no tuple index: `src[1:]` of a list copies, `data["obs"]` is an item)."""
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == name
            and isinstance(value.slice, ast.Tuple)):
        return False
    parts = value.slice.elts
    return any(isinstance(p, ast.Slice) for p in parts) and all(
        isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis
                                                                       or isinstance(p.value, int)))
        or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)) for p in parts)


def _rebinds_to_slice(st: ast.stmt, name: str) -> bool:
    """`x = x[:, :1]` or `x, t = x[:, :1], x[:, 1:]`: the argument's name now holds a slice of the argument."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
        return False
    target, value = st.targets[0], st.value
    if isinstance(target, ast.Name):
        return target.id == name and _slice_of(value, name)
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return any(isinstance(t, ast.Name) and t.id == name and _slice_of(v, name)
                   for t, v in zip(target.elts, value.elts))
    return False


def find(q, fn, names=None) -> list:
    """(write node, parameter, the statement that rebound it to its own slice) for every in-place write into a slice
    of an argument that the function bound to the argument's own name."""
    if (fn.name.endswith("_") and not fn.name.endswith("__")) or _params(fn)[:1] == ["ctx"]:
        return []
    for d in fn.decorator_list:
        qual = q.qualname(d.func if isinstance(d, ast.Call) else d) or ""
        if qual.rsplit(".", 1)[-1] in _GRAD_OFF:
            return []
    out = []
    stmts = _statements(fn)
    off = grad_off_statements(q, fn)
    paths = block_paths(fn)
    returned = returned_names(fn)
    for p in tensor_params(fn):
        if p in returned or (names is not None and p not in names):
            continue
        made: Optional[ast.stmt] = None
        for st in stmts:
            if made is not None:
                # Writes into the slice as a whole (`x *= c`, `x.mul_(c)`): an item write into a sub-slice
                # (`v[..., :k] = v[..., :k] + w`) updates a buffer on purpose (S4's `power`).
                writes = [node for name, node, how in _inplace_writes(st) if name == p and how != "item"]
                if writes and id(st) not in off and dominates(paths, made, st):
                    out.append((writes[0], p, made))
                    break
            if p in _bound(st):
                if made is None and _rebinds_to_slice(st, p):
                    made = st
                    continue
                break
    return out


def _self_slices(top) -> list:
    """A top-level statement's assignments that rebind names to slices of themselves: (assignment, names)."""
    found = []
    for a in top.assigns:
        v = a.value
        if (v.__class__ is not ast.Subscript and v.__class__ is not ast.Tuple) or len(a.targets) != 1:
            continue
        t = a.targets[0]
        pairs = [(t, v)] if isinstance(t, ast.Name) else list(zip(t.elts, v.elts)) \
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts) else []
        names = {n.id for n, e in pairs if isinstance(n, ast.Name) and _slice_of(e, n.id)}
        if names:
            found.append((a, names))
    return found


class ArgumentSliceWrittenInPlace(Rule):
    code = "GS371"
    name = "argument-slice-written-in-place"
    severity = Severity.WARNING
    summary = ("A function rebinds its argument to a slice of itself (`x, t = x[:, :1], x[:, 1:]`) and writes it in "
               "place (`x *= 2`): the write changes the caller's tensor, and raises on a leaf that requires grad.")
    events = (FileEvent,)
    what_it_does = ("Flags `x op= v` and `x.op_(v)` where `x` is an argument of the function that a statement "
                    "rebound to multi-dimensional basic indexing of itself with a slice (`x = x[:, :1]`, "
                    "`x, t = x[:, :1], x[:, 1:]`; a list or a dict takes no tuple index). Rebinding the name shows "
                    "the function treats the slice as its own value, but basic indexing returns a view that shares "
                    "the caller's memory. Item writes into a part of the slice (`v[..., :k] = ...`, a buffer updated "
                    "on purpose), writes that replace every value (`fill_`, `copy_`, `zero_`), arguments annotated as "
                    "something other than a tensor, functions that return the argument (an in-place contract), whose "
                    "name ends in `_`, that run under `torch.no_grad()`, a custom Function's `forward(ctx, ...)`, and "
                    "files that import nothing of torch are not reported.")
    why_bad = ("The slice is a view: the in-place write changes the caller's tensor, so every later use of it (the next "
               "call of a feature transform on the same network input, the PDE residual's derivatives) sees changed "
               f"values. When the caller's tensor is a leaf that requires grad (an input made to require grad for "
               f"derivatives with respect to it), torch raises {_MSG}; when an op saved it, backward raises "
               "\"modified by an inplace operation\".")
    example = ("def periodic(x):\n    x, t = x[:, :1], x[:, 1:]\n    x *= 2 * np.pi           # writes into the caller's x\n"
               "    return torch.cat([torch.cos(x), torch.sin(x), t], 1)")
    use_instead = ("def periodic(x):\n    x, t = x[:, :1], x[:, 1:]\n    x = x * 2 * np.pi\n"
                   "    return torch.cat([torch.cos(x), torch.sin(x), t], 1)")
    fix_safety = "No automatic fix: write the operation out of place (`x = x * c`) or clone the slice first."
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",
                  "https://pytorch.org/docs/stable/tensor_view.html")
    valid = (
        # Out of place: a new tensor.
        Valid("import math\nimport torch\n\n\ndef periodic(x):\n    x, t = x[:, :1], x[:, 1:]\n    x = x * 2 * math.pi\n"
              "    return torch.cat([torch.cos(x), torch.sin(x), t], 1)\n\n\n"
              "inputs = torch.rand(10, 2, requires_grad=True)\n"
              "torch.autograd.grad(periodic(inputs).sum(), inputs)\n"),
        # A copy of the slice is written.
        Valid("import math\nimport torch\n\n\ndef periodic(x):\n    x, t = x[:, :1].clone(), x[:, 1:]\n"
              "    x *= 2 * math.pi\n    return torch.cat([torch.cos(x), torch.sin(x), t], 1)\n\n\n"
              "inputs = torch.rand(10, 2, requires_grad=True)\n"
              "torch.autograd.grad(periodic(inputs).sum(), inputs)\n"),
        # The function hands the slice back: the caller asked for the in-place change.
        Valid("import torch\n\n\ndef scale_first(x):\n    x = x[:, :1]\n    x *= 2\n    return x\n\n\n"
              "print(scale_first(torch.rand(3, 2)))\n"),
        # A slice of a local tensor, not of an argument.
        Valid("import torch\n\n\ndef features(x):\n    y = x * 1.0\n    y = y[:, :1]\n    y *= 2\n    return y.sum()\n\n\n"
              "inputs = torch.rand(3, 2, requires_grad=True)\nfeatures(inputs).backward()\n"),
    )
    invalid = (
        Invalid("import math\nimport torch\n\n\ndef periodic(x):\n    x, t = x[:, :1], x[:, 1:]\n    x *= 2 * math.pi\n"
                "    return torch.cat([torch.cos(x), torch.sin(x), t], 1)\n\n\n"
                "inputs = torch.rand(10, 2, requires_grad=True)\nperiodic(inputs)\n",
                line=7, runtime="raises: a view of a leaf Variable that requires grad", also=(7,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not imports_torch(q):
            return  # not a file that uses torch (NumPy code writes its arrays the same way)
        # Only functions with an assignment that rebinds a name to basic indexing of itself: no walk over the file.
        found = q.surveyed("GS371.self-slices", _self_slices)
        cands: dict = {}  # id(function) -> (function, its arguments rebound to their own slices)
        for (a, names), fn in zip(found, enclosing_defs(q, [a for a, _ in found])) if found else ():
            if fn is not None:
                cands.setdefault(id(fn), (fn, set()))[1].update(names)
        lines = report.source.lines
        for fn, names in cands.values():
            if not writes_in_text(lines, fn, names):
                continue
            for node, param, made in find(q, fn, names):
                line, col, _, _ = report.source.span(made)
                report.add(self, node,
                           f"This in-place write changes the caller's tensor: `{param}` is a slice of the argument and "
                           f"shares its memory. Write it out of place (`{param} = {param} * ...`) or clone the slice; "
                           f"on a leaf that requires grad torch raises {_MSG}.",
                           related=[Note(line, col, f"`{param}` rebound to a slice of the argument `{param}` here")])
