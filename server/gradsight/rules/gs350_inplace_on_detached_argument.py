from __future__ import annotations

import ast
from typing import Callable, Optional

from ..engine import torchdb as db
from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Methods whose result shares the receiver's memory (on a tensor already on the CPU, `.cpu()` returns it as is).
_ALIAS_METHODS = frozenset({"view", "view_as", "transpose", "permute", "squeeze", "unsqueeze", "narrow", "t",
                            "select", "unflatten", "movedim", "swapaxes", "diagonal", "cpu", "detach"})
_ALIAS_ATTRS = frozenset({"T", "mT", "data"})
_AUG_SPELLING = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
# Writes that replace every value (an output parameter filled on purpose: `out.detach().copy_(src)`, an initialiser):
# not reported; only writes that modify the caller's values are.
_OVERWRITES = frozenset({"copy_", "fill_", "zero_", "normal_", "uniform_", "random_", "bernoulli_", "exponential_",
                         "geometric_", "cauchy_", "log_normal_", "set_"})


def _params(fn) -> list:
    a = fn.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if names and names[0] in ("self", "cls") and a.args and a.args[0].arg == names[0]:
        names = names[1:]
    return names


def _basic_index(node: ast.AST) -> bool:
    """`[0]`, `[:, 1:]`, `[..., None]`: indexing that returns a view (no tensor index)."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return all(isinstance(p, (ast.Slice, ast.Constant))
               or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)) for p in parts)


def _whole(index: ast.AST) -> bool:
    """`[:]`, `[...]`: every element is replaced."""
    return (isinstance(index, ast.Slice) and index.lower is None and index.upper is None and index.step is None) \
        or (isinstance(index, ast.Constant) and index.value is Ellipsis)


def _alias_of(expr: ast.AST, params: set, aliases: dict) -> Optional[tuple]:
    """(parameter, detached) when `expr` shares the memory of the argument `parameter` through aliasing methods;
    `detached` says a `.detach()` lies on the way."""
    detached = False
    node = expr
    while True:
        if isinstance(node, ast.Name):
            if node.id in aliases:
                return aliases[node.id], True
            if node.id in params:
                return (node.id, detached)
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ALIAS_METHODS \
                and not node.keywords and (node.func.attr not in ("cpu", "detach", "t") or not node.args):
            detached = detached or node.func.attr == "detach"
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in _ALIAS_ATTRS:
            node = node.value
        elif isinstance(node, ast.Subscript) and _basic_index(node.slice):
            node = node.value
        else:
            return None


def _returns_detached_arguments(fn) -> Optional[str]:
    """How a helper hands back its arguments detached, or None: `return (x.detach().cpu() if isinstance(x, Tensor)
    else x for x in tensors)` over its `*args` ("each"), or `return a.detach(), b.detach()` (one per parameter,
    "positional")."""
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if len(rets) != 1 or rets[0].value is None:
        return None
    value = rets[0].value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("tuple", "list") \
            and len(value.args) == 1:
        value = value.args[0]
    if isinstance(value, (ast.GeneratorExp, ast.ListComp)) and len(value.generators) == 1:
        gen = value.generators[0]
        vararg = fn.args.vararg
        if vararg is None or gen.ifs or not isinstance(gen.target, ast.Name) \
                or not (isinstance(gen.iter, ast.Name) and gen.iter.id == vararg.arg):
            return None
        elt = value.elt
        if isinstance(elt, ast.IfExp):
            if not (isinstance(elt.orelse, ast.Name) and elt.orelse.id == gen.target.id):
                return None
            elt = elt.body
        found = _alias_of(elt, {gen.target.id}, {})
        return "each" if found is not None and found[1] else None
    if isinstance(value, ast.Tuple):
        params = set(_params(fn))
        names = [_alias_of(e, params, {}) for e in value.elts]
        if names and all(n is not None and n[1] for n in names) \
                and [n[0] for n in names] == _params(fn)[:len(names)]:
            return "positional"
    return None


def _statements(fn) -> list:
    """The function's own statements in source order (nested functions and classes left out)."""
    out = []
    stack = list(fn.body)
    while stack:
        st = stack.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        out.append(st)
        for field in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(getattr(st, field, None) or [])
    out.sort(key=lambda s: (s.lineno, s.col_offset))
    return out


def _inplace_writes(st: ast.stmt):
    """(target name, node, how) of the in-place writes `st` makes into a plain name: `a *= m`, `a[i] = v`,
    `a.mul_(m)`."""
    if isinstance(st, ast.AugAssign):
        t = st.target
        if isinstance(t, ast.Name):
            yield t.id, st, "aug"
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            yield t.value.id, st, "item"
    elif isinstance(st, ast.Assign):
        for t in st.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and not _whole(t.slice):
                yield t.value.id, st, "item"
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        call = st.value
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and db.is_inplace_name(call.func.attr) and not call.func.attr.startswith("__") \
                and call.func.attr not in _OVERWRITES:
            yield call.func.value.id, call, "method"


def find(fn, helper: Callable[[ast.Call], Optional[ast.AST]]) -> list:
    """The in-place writes of `fn` into a detached alias of one of its arguments: (write node, how, target name,
    parameter, the statement that detached it)."""
    params = set(_params(fn))
    aliases: dict = {}  # local name -> the parameter whose detached alias it holds
    made: dict = {}  # local name -> the statement that made it such an alias
    out = []
    for st in _statements(fn):
        for name, node, how in _inplace_writes(st):
            if name in aliases:
                out.append((node, how, name, aliases[name], made[name]))
        if isinstance(st, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = [st.target] if isinstance(st, (ast.For, ast.AsyncFor)) else \
                [i.optional_vars for i in st.items if i.optional_vars is not None]
        elif isinstance(st, ast.Assign):
            targets = st.targets
        elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
            targets = [st.target] if isinstance(st.target, ast.Name) and not isinstance(st, ast.AugAssign) else []
        else:
            continue
        value = getattr(st, "value", None)
        bound = {}
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and value is not None and len(targets) == 1:
            t = targets[0]
            if isinstance(t, ast.Name):
                found = _alias_of(value, params, aliases)
                if found is not None and found[1]:
                    bound[t.id] = found[0]
            elif isinstance(t, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in t.elts):
                if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(t.elts):
                    for e, v in zip(t.elts, value.elts):
                        found = _alias_of(v, params, aliases)
                        if found is not None and found[1]:
                            bound[e.id] = found[0]
                elif isinstance(value, ast.Call) and not value.keywords \
                        and len(value.args) == len(t.elts) and all(isinstance(a, ast.Name) for a in value.args):
                    hfn = helper(value)
                    if hfn is not None and _returns_detached_arguments(hfn) is not None:
                        for e, a in zip(t.elts, value.args):
                            found = _alias_of(a, params, aliases)
                            if found is not None:
                                bound[e.id] = found[0]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    aliases.pop(n.id, None)
                    made.pop(n.id, None)
                    if n.id not in bound:
                        params.discard(n.id)
        for name, p in bound.items():
            aliases[name] = p
            made[name] = st
    return out


def _helper_resolver(q, fn) -> Callable[[ast.Call], Optional[ast.AST]]:
    """The definition a call in `fn` runs: a function of this file or imported from the workspace (`f(...)`), or a
    method of the enclosing class or of one of its bases (`self.f(...)`), bases in other workspace files included."""
    cls = q.enclosing(fn, (ast.ClassDef,))

    def resolve(call: ast.Call) -> Optional[ast.AST]:
        func = call.func
        if isinstance(func, ast.Name):
            found = q.function_def(func.id)
            return found[0] if found is not None else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                and cls is not None:
            return q.method_def(cls, func.attr)
        return None
    return resolve


def _name_detaches(top) -> list:
    """A top-level statement's `.detach()` calls whose receiver chain starts at a name (`x.data.detach()`):
    (call, that name)."""
    out = []
    for c in top.calls:
        if isinstance(c.func, ast.Attribute) and c.func.attr == "detach":
            root = c.func.value
            while isinstance(root, (ast.Attribute, ast.Subscript)) or (
                    isinstance(root, ast.Call) and isinstance(root.func, ast.Attribute)):
                root = root.func.value if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name):
                out.append((c, root))
    return out


def _unwraps(top) -> list:
    """A top-level statement's `p, g = f(p, g)`: names rebound through a helper in the same order."""
    return [a for a in top.assigns if len(a.targets) == 1 and isinstance(a.targets[0], ast.Tuple)
            and isinstance(a.value, ast.Call) and a.value.args
            and [getattr(e, "id", None) for e in a.targets[0].elts] == [getattr(e, "id", None) for e in a.value.args]]


class InplaceOnDetachedArgument(Rule):
    code = "GS350"
    name = "inplace-on-detached-argument"
    severity = Severity.WARNING
    summary = ("An in-place write into `x.detach()` (or a view of it) where `x` is the caller's tensor changes the "
               "caller's tensor: `detach()` shares its memory and version counter.")
    events = (FileEvent,)
    what_it_does = ("Flags `a op= v`, `a[i] = v` and `a.op_(...)` where `a` was made from an argument of the "
                    "function by `.detach()` and view-making methods (`x.detach().view(-1)`, `x.detach().cpu()`), "
                    "also through a helper that hands its arguments back detached "
                    "(`p, g = self.unwrap_to_tensors(p, g)` whose body returns `(x.detach() for x in tensors)`). "
                    "The detach is the evidence: the function expects the caller's tensor to carry a graph. Writes "
                    "that replace every value (`copy_`, `fill_`, `zero_`, random initialisers, `a[:] = v`) fill an "
                    "output argument on purpose and are not reported.")
    why_bad = ("`detach()` returns a tensor that shares the storage and the version counter of the original. Writing "
               "into it changes the caller's tensor, which the caller's forward may have saved for backward: its "
               "backward then raises \"one of the variables needed for gradient computation has been modified by an "
               "inplace operation\"; where nothing saved it, the caller's values change silently under it.")
    example = ("def update(self, predictions, mask):\n    predictions = predictions.detach()\n"
               "    predictions *= mask            # writes into the caller's tensor\n"
               "    self.total += predictions.sum()")
    use_instead = ("def update(self, predictions, mask):\n    predictions = predictions.detach()\n"
                   "    predictions = predictions * mask\n    self.total += predictions.sum()")
    fix_safety = ("No automatic fix: write the operation out of place (`a = a * m`, `a = a.masked_fill(...)`) or "
                  "detach a copy (`x.detach().clone()`).")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",)
    valid = (
        # Out of place: the metric's own tensor.
        Valid("import torch\n\n\nclass Mean:\n    def __init__(self):\n        self.total = 0.0\n\n"
              "    def __call__(self, predictions, mask):\n        predictions = predictions.detach().view(-1)\n"
              "        predictions = predictions * mask.view(-1)\n        self.total += predictions.sum().item()\n\n\n"
              "w = torch.randn(6, requires_grad=True)\np = torch.sigmoid(w)\nMean()(p, torch.ones(6))\n"
              "p.sum().backward()\n"),
        # A detached copy may be written.
        Valid("import torch\n\n\ndef normalized(x):\n    y = x.detach().clone()\n    y /= y.norm()\n    return y\n\n"
              "w = torch.randn(4, requires_grad=True)\np = torch.sigmoid(w)\nnormalized(p)\np.sum().backward()\n"),
        # The function's own tensor, detached and written: not the caller's.
        Valid("import torch\n\n\ndef scores(x):\n    s = torch.sigmoid(x).detach()\n    s[s < 0.5] = 0\n"
              "    return s\n\nscores(torch.randn(4, requires_grad=True))\n"),
    )
    invalid = (
        Invalid("import torch\n\n\nclass Mean:\n    def __init__(self):\n        self.total = 0.0\n\n"
                "    def __call__(self, predictions, mask):\n        predictions = predictions.detach().view(-1)\n"
                "        predictions *= mask.view(-1)\n        self.total += predictions.sum().item()\n\n\n"
                "w = torch.randn(6, requires_grad=True)\np = torch.sigmoid(w)\nMean()(p, torch.zeros(6))\n"
                "p.sum().backward()\n",
                line=10, runtime="raises: modified by an inplace operation"),
        # The detach in a base class's helper that hands its arguments back detached (allennlp's metrics).
        Invalid("import torch\n\n\nclass Metric:\n    @staticmethod\n    def unwrap(*tensors):\n"
                "        return (x.detach() if isinstance(x, torch.Tensor) else x for x in tensors)\n\n\n"
                "class Covariance(Metric):\n    def __init__(self):\n        self.total = 0.0\n\n"
                "    def __call__(self, predictions, labels, mask):\n"
                "        predictions, labels, mask = self.unwrap(predictions, labels, mask)\n"
                "        predictions = predictions.view(-1)\n        predictions *= mask.view(-1)\n"
                "        self.total += (predictions * labels.view(-1)).sum().item()\n\n\n"
                "w = torch.randn(6, requires_grad=True)\np = torch.sigmoid(w)\n"
                "Covariance()(p, torch.randn(6), torch.zeros(6))\np.sum().backward()\n",
                line=17, runtime="raises: modified by an inplace operation"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # Only functions that detach something, or that rebind their arguments through a helper
        # (`p, g = self.unwrap(p, g)`): no walk over the file.
        cands = []
        if "detach" in q.attrs:
            for c, root in q.surveyed("GS350.name-detaches", _name_detaches):
                fn = q.enclosing_function(c)
                # Only a detach of one of the function's own arguments starts an alias.
                if fn is not None and root.id in _params(fn):
                    cands.append(fn)
        for a in q.surveyed("GS350.unwraps", _unwraps):
            cands.append(q.enclosing_function(a))
        done = set()
        for fn in cands:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or id(fn) in done \
                    or (fn.name.endswith("_") and not fn.name.endswith("__")) or not _params(fn):
                continue
            done.add(id(fn))
            for node, how, name, param, made in find(fn, _helper_resolver(q, fn)):
                line, col, _, _ = report.source.span(made)
                if how == "aug":
                    op = _AUG_SPELLING.get(type(node.op))
                    change = f"`{name} = {name} {op} ...`" if op else "the out-of-place form"
                elif how == "item":
                    change = f"a copy (`{name} = {name}.clone()` first) or an out-of-place op"
                else:
                    change = f"the out-of-place `{name}.{node.func.attr[:-1]}(...)`"
                report.add(self, node,
                           f"This in-place write changes the caller's tensor `{param}`: `detach()` shares its memory. "
                           f"Use {change}; a backward that saved `{param}` raises otherwise (the detached alias "
                           f"`{name}` shares its version counter too).",
                           related=[Note(line, col, f"`{name}` detached from the argument `{param}` here")])
