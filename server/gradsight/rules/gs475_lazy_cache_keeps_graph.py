from __future__ import annotations

import ast
from typing import Iterator, Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from ._syntax import first_param, own_nodes, self_attr
from .base import Invalid, Rule, Valid

# (`set_grad_enabled(x)`: not surely on)
_GRAD_OFF = ("torch.no_grad", "torch.inference_mode", "torch.set_grad_enabled")
# Methods and attributes that hand back a value without its graph (or something that is not a tensor).
_CUTS = frozenset(("detach", "detach_", "data", "item", "tolist", "numpy", "size", "shape", "dim", "ndimension",
                   "numel", "dtype", "device", "requires_grad"))
_CASTS = frozenset(("float", "int", "bool", "len", "str", "isinstance", "hasattr", "getattr"))


def _absent(test: ast.AST, me: str) -> Optional[str]:
    """`A` of a test that holds while `self.A` is not filled yet: `not hasattr(self, "A")`, `self.A is None`,
    `getattr(self, "A", None) is None`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Call):
        c = test.operand
        if isinstance(c.func, ast.Name) and c.func.id == "hasattr" and len(c.args) == 2 \
                and isinstance(c.args[0], ast.Name) and c.args[0].id == me \
                and isinstance(c.args[1], ast.Constant) and isinstance(c.args[1].value, str):
            return c.args[1].value
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        left = test.left
        if (a := self_attr(left, me)) is not None:
            return a
        if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "getattr" \
                and len(left.args) == 3 and isinstance(left.args[0], ast.Name) and left.args[0].id == me \
                and isinstance(left.args[1], ast.Constant) and isinstance(left.args[1].value, str):
            return left.args[1].value
    return None


def _grad_off(q, expr: ast.AST) -> bool:
    f = expr.func if isinstance(expr, ast.Call) else expr
    return q.qualname(f) in _GRAD_OFF


def _reads(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of an expression through which a graph can reach its value: not below `.detach()`, `.data`,
    `.item()`, `float(...)`, shapes and the like."""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Attribute) and n.attr in _CUTS:
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _CASTS:
            continue
        if isinstance(n, (ast.Lambda, ast.Compare, ast.BoolOp)) or (isinstance(n, ast.UnaryOp)
                                                                      and isinstance(n.op, ast.Not)):
            continue
        yield n
        todo.extend(ast.iter_child_nodes(n))


def _stored(cls: ast.ClassDef, attr: str, fill: ast.Assign) -> Optional[tuple]:
    """(attributes the class's methods store on the object (`self.net = ...`, `setattr(self, "net", ...)`,
    `object.__setattr__(self, "net", ...)`), those of them made `nn.Parameter(...)`); None when the class writes or deletes `self.<attr>` anywhere but in
    `fill` and an empty start (`self.<attr> = None`) in `__init__` (a cache the class resets is not filled once)."""
    out, params = set(), set()
    for fn in cls.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or (me := first_param(fn)) is None:
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _parameter(n.value.func):
                params.update(a for t in n.targets if (a := self_attr(t, me)) is not None)
            if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and self_attr(n, me) is not None:
                out.add(n.attr)
                if n.attr == attr and n is not fill.targets[0] and not (isinstance(n.ctx, ast.Store)
                                                                        and fn.name == "__init__"):
                    return None
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and n.func.attr in ("detach_", "requires_grad_") and self_attr(n.func.value, me) == attr:
                return None  # `self.A.detach_()`: the cache is cut in place
            elif isinstance(n, ast.Call) and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) \
                    and isinstance(n.args[1].value, str) and isinstance(n.args[0], ast.Name) and n.args[0].id == me:
                f = n.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name in ("setattr", "__setattr__", "delattr", "__delattr__"):
                    if n.args[1].value == attr and fn.name != "__init__":
                        return None
                    out.add(n.args[1].value)
    return out, params


def _parameter(func: ast.AST) -> bool:
    """`nn.Parameter` / `torch.nn.Parameter` / `Parameter`."""
    return isinstance(func, ast.Attribute) and func.attr == "Parameter" \
        or isinstance(func, ast.Name) and func.id == "Parameter"


def _model_call(n: ast.AST, me: str, stored: tuple) -> bool:
    """`self(...)`, `self.forward(...)`, `self.net(...)` (an attribute the class stores, not one of its methods)
    or `self.net.forward(...)`: the object's own network, run on the call's inputs; or a read of one of the
    object's own `nn.Parameter`s (`self.weight`)."""
    stored, params = stored
    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and n.attr in params:
        return self_attr(n, me) is not None
    if not isinstance(n, ast.Call):
        return False
    f = n.func
    if isinstance(f, ast.Name) and f.id == me:
        return True
    a = self_attr(f, me)
    if a is not None:
        return a == "forward" or a in stored
    return isinstance(f, ast.Attribute) and f.attr == "forward" and self_attr(f.value, me) is not None


def _bindings(own: list) -> dict:
    """name -> (value, line) of each assignment to it in the method (tuple targets get the whole value, a `for`
    target its iterable)."""
    out: dict = {}
    for n in own:
        if isinstance(n, ast.Assign):
            targets, value = n.targets, n.value
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets, value = [n.target], n.value
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            targets, value = [n.target], n.iter
        else:
            continue
        for t in targets:
            for x in ast.walk(t):
                if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store):
                    out.setdefault(x.id, []).append((value, n.lineno))
    return out


def _loops(own: list) -> list:
    """The line spans of the method's loops."""
    return [(n.lineno, n.end_lineno) for n in own if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]


def _reaches(line: int, read: int, loops: list) -> bool:
    """Whether an assignment at `line` can give the value read at line `read`: it comes before the read, or a loop
    holds both (the next iteration reads it). A later rebinding (`edge_index = self.encoder(x, edge_index, ...)`
    after the cache is filled from the argument `edge_index`) does not."""
    return line < read or any(a <= line <= b and a <= read <= b for a, b in loops)


def _source_call(value: ast.AST, binds: dict, me: str, stored: tuple, loops: list = ()) -> Optional[ast.AST]:
    """A model call (or parameter read) that `value` is computed from (method-local data flow through the
    assignments that can reach each read), or None."""
    seen, todo = set(), [value]
    while todo:
        expr = todo.pop()
        for n in _reads(expr):
            if _model_call(n, me, stored):
                return n
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and (n.id, n.lineno) not in seen:
                seen.add((n.id, n.lineno))
                todo.extend(v for v, line in binds.get(n.id, ()) if _reaches(line, n.lineno, loops))
    return None


def _off_ranges(q, fn: ast.AST, own: list) -> list:
    return [(w.lineno, w.end_lineno) for w in own if isinstance(w, (ast.With, ast.AsyncWith))
            and any(_grad_off(q, i.context_expr) for i in w.items)]


def _cache_names(q) -> set:
    """`A` of every `hasattr(x, "A")` / `getattr(x, "A", ...)` call of the file, and of every `x.A = None` (a cache
    started empty, tested with `self.A is None`); each top-level statement's names are kept while it is unchanged."""
    return set().union(*q.per_statement("GS475.cache-names", _statement_cache_names))


def _statement_cache_names(top) -> set:
    out = set()
    for a in top.assigns:
        v, t = a.value, a.targets[0]
        if type(v) is ast.Constant and v.value is None and type(t) is ast.Attribute:
            out.add(t.attr)
    for c in top.calls:
        f = c.func
        if type(f) is ast.Name and (f.id == "hasattr" or f.id == "getattr") and len(c.args) >= 2 \
                and type(c.args[1]) is ast.Constant and isinstance(c.args[1].value, str):
            out.add(c.args[1].value)
    return out


def _attr_stores(top) -> list:
    """A top-level statement's `x.A = <not a constant>` assignments (one target)."""
    return [a for a in top.assigns if len(a.targets) == 1 and type(a.targets[0]) is ast.Attribute
            and type(a.targets[0].value) is ast.Name and type(a.value) is not ast.Constant]


def _method_of(q, line: int) -> Optional[tuple]:
    """(the innermost function holding `line`, the class it is a method of) by line ranges (no parent links: this
    runs on every keystroke), or None when that function is not a method."""
    best = None
    for fn in q.functions:
        if fn.lineno <= line <= fn.end_lineno and (best is None or fn.lineno > best.lineno):
            best = fn
    if best is None:
        return None
    for cls in q.class_defs:
        if cls.lineno < best.lineno <= cls.end_lineno:
            for m in cls.body:
                if m is best:
                    return best, cls
    return None


def _fill_test(fn: ast.AST, store: ast.Assign, attr: str, me: str) -> Optional[ast.If]:
    """The `if` whose body fills `self.A` (`store`) while it is absent (a walk of the method's statements only)."""
    line, todo = store.lineno, list(fn.body)
    while todo:
        n = todo.pop()
        if not n.lineno <= line <= n.end_lineno:
            continue
        t = type(n)
        if t is ast.If:
            if _absent(n.test, me) == attr and n.body[0].lineno <= line <= n.body[-1].end_lineno:
                return n
            todo.extend(n.body)
            todo.extend(n.orelse)
        elif t is ast.For or t is ast.While or t is ast.AsyncFor:
            todo.extend(n.body)
            todo.extend(n.orelse)
        elif t is ast.With or t is ast.AsyncWith:
            todo.extend(n.body)
        elif t is ast.Try:
            todo.extend(n.body)
            todo.extend(n.orelse)
            todo.extend(n.finalbody)
            for h in n.handlers:
                todo.extend(h.body)
    return None


def _sites(q) -> Iterator[tuple]:
    """(the store `self.A = v`, `A`, the model call `v` comes from) for a cache filled once, with grad on, from
    the object's network and read again after the fill."""
    names = _cache_names(q)
    if not names:
        return
    for store in q.surveyed("GS475.attr-stores", _attr_stores):
        t = store.targets[0]
        if t.attr not in names:
            continue
        attr = t.attr
        hit = _method_of(q, store.lineno)
        if hit is None:
            continue
        fn, cls = hit
        me = first_param(fn)
        if me is None or t.value.id != me or fn.name == "__init__" or any(
                _grad_off(q, d) or isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                for d in fn.decorator_list):
            continue
        if_ = _fill_test(fn, store, attr, me)
        if if_ is None:
            continue
        own = own_nodes(fn, with_defs=False)
        # Read again after the fill, in the same method: the cached value is what later calls use.
        if not any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and n.lineno > if_.end_lineno
                   and self_attr(n, me) == attr for n in own):
            continue
        # Nothing else in the file writes `x.A` (a caller resetting the cache between runs).
        if any(a is not store and type(a.targets[0]) is ast.Attribute and a.targets[0].attr == attr
               and (m := _method_of(q, a.lineno)) is not None and m[0].name != "__init__" for a in q.assigns):
            continue
        stored = _stored(cls, attr, store)
        if stored is None:
            continue
        call = _source_call(store.value, _bindings(own), me, (stored[0] - {attr}, stored[1] - {attr}), _loops(own))
        if call is None or any(a <= store.lineno <= b or a <= call.lineno <= b for a, b in _off_ranges(q, fn, own)):
            continue
        yield store, attr, call


class LazyCacheKeepsGraph(Rule):
    code = "GS475"
    name = "lazy-cache-keeps-graph"
    severity = Severity.WARNING
    summary = ("A cache filled once (`if not hasattr(self, \"_c\"): self._c = ...`) from the object's own network "
               "with grad on keeps that call's graph, and every later call reuses it.")
    what_it_does = ("Flags `self.A = v` inside `if not hasattr(self, \"A\"):` (or `if getattr(self, \"A\", None) is "
                    "None:`) in a method "
                    "that reads `self.A` after the fill, when `v` is computed (method-local data flow, no "
                    "`.detach()`, `.data`, `.item()` on the way) from a call of the object's own network "
                    "(`self(...)`, `self.net(...)`, `self.net.forward(...)`; a local name counts through the "
                    "assignments that can reach the read: earlier ones, or any in a loop holding both) or from one "
                    "of its own "
                    "`nn.Parameter`s with grad on (no `torch.no_grad()` "
                    "block or decorator around the fill or the call). Where the engine also sees the second "
                    "backward through the cached value, GS402 stands on the same store: the same bug, one "
                    "naming the freed graph, this one the cache.")
    why_bad = ("The cache outlives the call that filled it, and so does the graph its value carries: it holds the "
               "activations of the first call for as long as the object lives. Every later call builds on the "
               "cached value, so a backward through a later result runs into the first call's graph, whose "
               "buffers the first backward freed (\"Trying to backward through the graph a second time\"); "
               "without a backward the graph is simply leaked.")
    example = ("class Predictor(nn.Module):\n    def predict(self, x):\n        if not hasattr(self, \"_w\"):\n"
               "            self._w = self.net(self.anchors)\n        return x @ self._w")
    use_instead = ("class Predictor(nn.Module):\n    def predict(self, x):\n        if not hasattr(self, \"_w\"):\n"
                   "            self._w = self.net(self.anchors).detach()\n        return x @ self._w")
    fix_safety = ("There is no automatic fix: cache `v.detach()` (or fill the cache under `torch.no_grad()`); if "
                  "gradients must flow through the cached value, compute it anew in each call instead.")
    references = ("https://pytorch.org/docs/stable/notes/autograd.html",)
    events = (FileEvent,)
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Predictor(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.net = nn.Linear(3, 3)\n"
             "        self.anchors = torch.randn(4, 3)\n\n    def predict(self, x):\n")
    _tail = ("\n\nmodel = Predictor()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n")
    _started = ("import torch\nimport torch.nn as nn\n\n\nclass Predictor(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.net = nn.Linear(3, 3)\n"
                "        self.anchors = torch.randn(4, 3)\n        self._w = None\n\n    def predict(self, x):\n"
                "        if self._w is None:\n            self._w = self.net(self.anchors)\n"
                "        return x @ self._w.T\n")
    # tunedGNN's graph model: an edge merger module and a linear layer; `{body}` is the start of `forward`.
    _edges = ("import torch\nimport torch.nn as nn\n\n\ndef ring_edges(edge_index):\n"
              "    n = int(edge_index.max()) + 1\n    senders = list(range(n))\n"
              "    receivers = [(i + 1) % n for i in senders]\n"
              "    return torch.tensor([senders, receivers], dtype=torch.long)\n\n\n"
              "class EdgeMerger(nn.Module):\n    def forward(self, edge_index, extra):\n"
              "        return torch.cat([edge_index, extra], dim=1)\n\n\n"
              "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.encoder = EdgeMerger()\n        self.lin = nn.Linear(3, 3)\n        self.{cache} = None\n\n"
              "    def forward(self, x, edge_index):\n{body}\n\n\n"
              "model = Net()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor _ in range(2):\n"
              "    opt.zero_grad()\n"
              "    model(torch.randn(4, 3), torch.tensor([[0, 1, 2], [1, 2, 3]])).pow(2).sum().backward()\n"
              "    opt.step()\n")
    valid = (
        # tunedGNN's expander edges: an integer tensor made from Python lists out of the `forward` argument
        # `edge_index`, cached and handed to a submodule whose result is bound to `edge_index` only afterwards (a
        # later rebinding never reaches the fill).
        Valid(_edges.format(cache="extra", body=(
            "        if self.extra is None:\n            self.extra = ring_edges(edge_index)\n"
            "        edge_index = self.encoder(edge_index, self.extra)\n        src, dst = edge_index\n"
            "        x = self.lin(x)\n        return x + torch.zeros_like(x).index_add(0, dst, x[src])"))
              + "assert model.extra.grad_fn is None\n"),
        # An `is None` cache that the class empties again (`reset()` before each step): a per-step cache.
        Valid(_started + "\n    def reset(self):\n        self._w = None\n" + _tail
              + "for _ in range(2):\n    model.reset()\n    opt.zero_grad()\n"
                "    model.predict(torch.randn(2, 3)).pow(2).sum().backward()\n    opt.step()\n"),
        # The fix: the cached value detached.
        Valid(_head + "        if not hasattr(self, \"_w\"):\n            self._w = self.net(self.anchors).detach()\n"
              "        return x @ self._w.T\n" + _tail
              + "for _ in range(2):\n    loss = model.predict(torch.randn(2, 3)).pow(2).sum()\n"
                "    assert model._w.grad_fn is None\n"),
        # Filled under `torch.no_grad()`.
        Valid(_head + "        if not hasattr(self, \"_w\"):\n            with torch.no_grad():\n"
              "                self._w = self.net(self.anchors)\n        return x @ self._w.T\n" + _tail
              + "for _ in range(2):\n    model.predict(torch.randn(2, 3)).pow(2).sum()\n"
                "assert model._w.grad_fn is None\n"),
        # A cache of plain data (no network call): nothing to keep.
        Valid(_head + "        if getattr(self, \"_grid\", None) is None:\n"
              "            self._grid = torch.linspace(0, 1, 3)\n        return self.net(x * self._grid)\n" + _tail
              + "for _ in range(2):\n    opt.zero_grad()\n    model.predict(torch.randn(2, 3)).pow(2).sum().backward()\n"
                "    opt.step()\n"),
        # Computed anew in each call (no cache).
        Valid(_head + "        w = self.net(self.anchors)\n        return x @ w.T\n" + _tail
              + "for _ in range(2):\n    opt.zero_grad()\n    model.predict(torch.randn(2, 3)).pow(2).sum().backward()\n"
                "    opt.step()\n"),
    )
    invalid = (
        # The look-alike whose name is rebound by the network before the fill: the cached gate holds the first
        # call's graph.
        Invalid(_edges.format(cache="gate", body=(
            "        x = self.lin(x)\n        if self.gate is None:\n"
            "            self.gate = torch.sigmoid(x).mean(1, keepdim=True)\n        src, dst = edge_index\n"
            "        return (x + torch.zeros_like(x).index_add(0, dst, x[src])) * self.gate")),
                line=27, runtime="raises: backward through the graph a second time", also=(27,)),
        Invalid(_head + "        if not hasattr(self, \"_w\"):\n            self._w = self.net(self.anchors)\n"
                "        return x @ self._w.T\n" + _tail
                + "for _ in range(2):\n    opt.zero_grad()\n    model.predict(torch.randn(2, 3)).pow(2).sum().backward()\n"
                  "    opt.step()\n",
                line=13, runtime="raises: backward through the graph a second time", also=(13,)),
        # `getattr(self, "_w", None) is None`, the value computed through locals from `self.net.forward(...)`.
        Invalid(_head + "        if getattr(self, \"_w\", None) is None:\n            h = self.net.forward(self.anchors)\n"
                "            self._w = h.mul(2.0)\n        return x @ self._w.T\n" + _tail
                + "outs = [model.predict(torch.randn(2, 3)) for _ in range(3)]\n",
                line=14, runtime="silent: model._w.grad_fn is not None"),
        # `if self._w is None:` after `self._w = None` in `__init__`, never emptied again.
        Invalid(_started + _tail + "for _ in range(2):\n    opt.zero_grad()\n"
                "    model.predict(torch.randn(2, 3)).pow(2).sum().backward()\n    opt.step()\n",
                line=14, runtime="raises: backward through the graph a second time", also=(14,)),
        # A cache computed from the object's own `nn.Parameter`.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Whitener(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.log_scale = nn.Parameter(torch.zeros(3))\n\n"
                "    def forward(self, x):\n        if not hasattr(self, \"_inv\"):\n"
                "            self._inv = torch.exp(-self.log_scale)\n        return x * self._inv\n\n\n"
                "model = Whitener()\nfor _ in range(2):\n    model(torch.randn(2, 3)).sum().backward()\n",
                line=12, runtime="raises: backward through the graph a second time", also=(12,)),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        for store, attr, call in _sites(q):
            report.add(self, store,
                       f"`self.{attr}` caches a value with one call's graph, and every later call reuses it. "
                       f"The value is computed from the network's parameters with grad on and filled only once: "
                       f"cache `.detach()` of it, or fill it under `torch.no_grad()`.",
                       related=[Note(call.lineno, call.col_offset + 1, "where the kept graph starts")])
