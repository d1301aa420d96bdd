from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import first_param, imports_torch, own_nodes, torch_only_for_data
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


def _numpy_made(q, expr: ast.AST, scope, depth: int = 2) -> bool:
    """Whether `expr` is a NumPy value, never a tensor: a `numpy` function's result (`np.asarray(img, np.float32)`,
    `np.zeros(...)`, PIL images converted so), a method of or an index into one (`.astype(...)`, `[:, :, ::-1]`), a
    local name every binding of which in `scope` is one (not a parameter), or a call of a function of the file
    every `return` of which gives one (`depth` such calls deep)."""
    if isinstance(expr, ast.Subscript):
        return _numpy_made(q, expr.value, scope, depth)
    if isinstance(expr, ast.Call):
        if (q.call_name(expr) or "").startswith("numpy."):
            return True
        f = expr.func
        if isinstance(f, ast.Attribute) and _numpy_made(q, f.value, scope, depth):
            return True
        callee = _callee(q, expr, scope) if depth > 0 else None
        if callee is None:
            return False
        returns = [r.value for r in own_nodes(callee, with_defs=False) if isinstance(r, ast.Return)]
        return bool(returns) and all(r is not None and _numpy_made(q, r, callee, depth - 1) for r in returns)
    if isinstance(expr, ast.Name) and isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            and expr.id not in _params_of(scope):
        values = [n.value for n in own_nodes(scope, with_defs=False) if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == expr.id for t in n.targets)]
        stores = [n for n in own_nodes(scope, with_defs=False)
                  if isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)]
        return bool(values) and len(values) == len(stores) and all(
            not isinstance(v, ast.Name) and _numpy_made(q, v, scope, depth) for v in values)
    return False


def _params_of(fn) -> set:
    a = fn.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}


def _callee(q, call: ast.Call, scope):
    """The definition a call runs: a top-level function of this file by its bare name, or `self.m(...)` of the
    class that holds `scope`."""
    f = call.func
    if isinstance(f, ast.Name):
        hit = q.function_def(f.id)
        return hit[0] if hit is not None and hit[2] is None else None
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and scope is not None \
            and f.value.id == first_param(scope):
        cls = q.enclosing(scope, ast.ClassDef)
        found = [m for m in (cls.body if cls is not None else ())
                 if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == f.attr]
        return found[0] if len(found) == 1 else None
    return None


def _given_numpy(q, fn, param: str) -> bool:
    """Whether the file calls `fn` (by its bare name, or as `self.fn(...)` in its class) and every call hands `param`
    a NumPy value: the argument is an array, not a tensor (a dataset's `preprocess(image)` fed `np.asarray(img)`)."""
    names = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    method = q.enclosing(fn, ast.ClassDef) is not None and names[:1] == [first_param(fn)]
    index = names.index(param) - (1 if method else 0) if param in names else None
    found = 0
    for call in q.calls():
        f = call.func
        if not (isinstance(f, ast.Name) and f.id == fn.name and not method
                or isinstance(f, ast.Attribute) and f.attr == fn.name and method):
            continue
        scope = q.enclosing_function(call)
        if method and _callee(q, call, scope) is not fn:
            return False  # a call on another object: what it hands is not known
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        given = next((k.value for k in call.keywords if k.arg == param), None)
        if given is None and index is not None and index < len(call.args):
            given = call.args[index]
        if given is None or not _numpy_made(q, given, scope):
            return False
        found += 1
    return found > 0


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
                    "name ends in `_`, that run under `torch.no_grad()`, a custom Function's `forward(ctx, ...)`, "
                    "arguments every call in the file hands a NumPy array (`np.asarray(...)`, also through a helper "
                    "that returns one), and files that import nothing of torch or only `torch.utils.data` (data "
                    "loading, whose images are NumPy arrays) are not reported.")
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
        # Data-loading code that imports only `torch.utils.data`: its images are NumPy arrays (valeoai/ADVENT
        # base_dataset.py; bench/fresh26-false/01).
        Valid("import numpy as np\nfrom torch.utils import data\n\n\nclass BaseDataset(data.Dataset):\n"
              "    def __init__(self, images, mean):\n        self.images, self.mean = images, mean\n\n"
              "    def __len__(self):\n        return len(self.images)\n\n    def preprocess(self, image):\n"
              "        image = image[:, :, ::-1]\n        image -= self.mean\n"
              "        return image.transpose((2, 0, 1))\n\n    def get_image(self, index):\n"
              "        return _load_img(self.images[index])\n\n\nclass GTA5DataSet(BaseDataset):\n"
              "    def __getitem__(self, index):\n        image = self.get_image(index)\n"
              "        image = self.preprocess(image)\n        return image.copy()\n\n\n"
              "def _load_img(img):\n    return np.asarray(img, np.float32)\n\n\n"
              "decoded = np.random.RandomState(0).randint(0, 255, (6, 8, 3), dtype=np.uint8)\n"
              "mean = np.array((104.0, 116.0, 122.0), dtype=np.float32)\n"
              "batch = next(iter(data.DataLoader(GTA5DataSet([decoded], mean), batch_size=1)))\n"
              "expected = (decoded.astype(np.float32)[:, :, ::-1] - mean).transpose(2, 0, 1)\n"
              "assert np.allclose(batch[0].numpy(), expected)\n"),
        # Every call of the function in the file hands it a NumPy array (`np.asarray` through a helper).
        Valid("import numpy as np\nimport torch\n\n\ndef load(img):\n    return np.asarray(img, np.float32)\n\n\n"
              "def preprocess(image, mean):\n    image = image[:, :, :3]\n    image -= mean\n"
              "    return torch.from_numpy(image.transpose((2, 0, 1)).copy())\n\n\n"
              "imgs = [np.random.RandomState(i).randint(0, 255, (6, 8, 4), dtype=np.uint8) for i in range(2)]\n"
              "batch = torch.stack([preprocess(load(img), 100.0) for img in imgs])\n"),
    )
    invalid = (
        # The look-alike: the same preprocessing also applied to a tensor that requires grad (an input to attack).
        Invalid("import numpy as np\nimport torch\nfrom torch.utils import data\n\n\ndef load(img):\n"
                "    return np.asarray(img, np.float32)\n\n\ndef preprocess(image, mean):\n"
                "    image = image[:, :, :3]\n    image -= mean\n    return image.mean(2)\n\n\n"
                "img = np.random.RandomState(0).randint(0, 255, (6, 8, 4), dtype=np.uint8)\n"
                "clean = preprocess(load(img), 100.0)\n"
                "x_adv = torch.rand(6, 8, 4, requires_grad=True)\nattacked = preprocess(x_adv, 100.0)\n",
                line=12, runtime="raises: a view of a leaf Variable that requires grad", also=(12,)),
        Invalid("import math\nimport torch\n\n\ndef periodic(x):\n    x, t = x[:, :1], x[:, 1:]\n    x *= 2 * math.pi\n"
                "    return torch.cat([torch.cos(x), torch.sin(x), t], 1)\n\n\n"
                "inputs = torch.rand(10, 2, requires_grad=True)\nperiodic(inputs)\n",
                line=7, runtime="raises: a view of a leaf Variable that requires grad", also=(7,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not imports_torch(q) or torch_only_for_data(q):
            # Not a file that uses torch (NumPy code writes its arrays the same way), or data-loading code that
            # imports only `torch.utils.data` (a `Dataset` whose images are NumPy arrays).
            return
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
                if _given_numpy(q, fn, param):
                    continue
                line, col, _, _ = report.source.span(made)
                report.add(self, node,
                           f"This in-place write changes the caller's tensor: `{param}` is a slice of the argument and "
                           f"shares its memory. Write it out of place (`{param} = {param} * ...`) or clone the slice; "
                           f"on a leaf that requires grad torch raises {_MSG}.",
                           related=[Note(line, col, f"`{param}` rebound to a slice of the argument `{param}` here")])
