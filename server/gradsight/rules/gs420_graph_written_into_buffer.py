from __future__ import annotations

import ast
import re

from ..engine.events import StoreGraphEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid, tree_query

_FACTORIES = frozenset({"zeros", "ones", "empty", "full", "randn", "rand", "randint", "zeros_like", "ones_like",
                        "empty_like", "full_like", "tensor", "arange", "linspace", "eye"})


def _is_self_attr(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _factory_assign(n: ast.AST, attr: str) -> bool:
    """`self.<attr> = torch.zeros(...)` (any torch factory that does not ask for grad)."""
    return isinstance(n, ast.Assign) and any(_is_self_attr(t, attr) for t in n.targets) \
        and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
        and n.value.func.attr in _FACTORIES and isinstance(n.value.func.value, ast.Name) \
        and n.value.func.value.id in ("torch", "th") \
        and not any(kw.arg == "requires_grad" for kw in n.value.keywords)


def _remade_per_sequence(q, cls: ast.ClassDef, fn: ast.AST, attr: str, line: int) -> bool:
    """The function that writes into `self.<attr>` first re-makes it with a factory, itself or through a method
    of the class, unconditionally or under a test on one of its parameters (`if t == 0: self.init_attention(x)`,
    a decoder step): each sequence the caller starts gets a fresh tensor, and the chaining within one sequence
    is the model's own recurrence, backwarded once (WaveRNN's location-sensitive attention)."""
    resetters = {m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and any(_factory_assign(n, attr) for n in ast.walk(m))}
    params = {a.arg for a in fn.args.args[1:] + fn.args.kwonlyargs}  # not `self`: `if self.x is None:` runs once
    for n in ast.walk(fn):
        if getattr(n, "lineno", line) >= line:
            continue
        resets = _factory_assign(n, attr) or (
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in resetters
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self")
        if not resets:
            continue
        guard = q.enclosing(n, (ast.If, ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef))
        if guard is fn:
            return True
        if isinstance(guard, ast.If) and any(isinstance(m, ast.Name) and m.id in params for m in ast.walk(guard.test)):
            return True
    return False


def _buffer_name(arg: ast.AST, attr: str) -> bool:
    """`register_buffer`'s name argument names `attr`: the string itself, or a name made per index (`'sv%d' % i`,
    `f'sv{i}'`, `'sv{}'.format(i)`: BigGAN's spectral norm registers `u0`, `sv0`, ... for each singular value)."""
    if isinstance(arg, ast.Constant):
        return arg.value == attr
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Mod) and isinstance(arg.left, ast.Constant) \
            and isinstance(arg.left.value, str):
        pattern = re.escape(arg.left.value).replace("%d", r"\d+").replace("%s", r"\w+").replace("%i", r"\d+")
        return re.fullmatch(pattern, attr) is not None
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "format" \
            and isinstance(arg.func.value, ast.Constant) and isinstance(arg.func.value.value, str):
        pattern = re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(arg.func.value.value))
        return re.fullmatch(pattern, attr) is not None
    if isinstance(arg, ast.JoinedStr):
        pattern = "".join(re.escape(v.value) if isinstance(v, ast.Constant) else r"\w+" for v in arg.values)
        return re.fullmatch(pattern, attr) is not None
    return False


def _buffer_list_property(cls: ast.ClassDef, attr: str) -> bool:
    """`attr` is a `@property` returning the class's buffers registered per index (BigGAN's spectral norm:
    `return [getattr(self, 'sv%d' % i) for i in range(self.num_svs)]` over `register_buffer('sv%d' % i, ...)`)."""
    names = set()
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer" \
                and n.args:
            names.add(ast.dump(n.args[0]))
    for m in cls.body:
        if not (isinstance(m, ast.FunctionDef) and m.name == attr
                and any(isinstance(d, ast.Name) and d.id == "property" for d in m.decorator_list)):
            continue
        rets = [n for n in ast.walk(m) if isinstance(n, ast.Return) and n.value is not None]
        for r in rets:
            v = r.value
            elts = [v.elt] if isinstance(v, ast.ListComp) else list(v.elts) if isinstance(v, (ast.List, ast.Tuple)) \
                else []
            if elts and all(isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "getattr"
                            and len(e.args) == 2 and isinstance(e.args[0], ast.Name) and e.args[0].id == "self"
                            and ast.dump(e.args[1]) in names for e in elts):
                return True
    return False


def _made_without_graph(cls: ast.ClassDef, attr: str) -> bool:
    """The class registers `attr` as a buffer (`self.register_buffer("queue", ...)`, also under a name made per
    index, `'sv%d' % i`) or makes it with a torch factory that does not ask for grad (`self.queue = torch.zeros(...)`)."""
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer" \
                and n.args and _buffer_name(n.args[0], attr):
            return True
        if _factory_assign(n, attr):
            return True
    return _buffer_list_property(cls, attr)


def _detached_somewhere(cls: ast.ClassDef, attr: str) -> bool:
    """`self.x.detach_()`, `self.x = self.x.detach()` (or `.data`) anywhere in the class."""
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("detach_", "zero_") \
                and _is_self_attr(n.func.value, attr):
            return True
        if isinstance(n, ast.Assign) and any(_is_self_attr(t, attr) for t in n.targets) and any(
                isinstance(m, ast.Attribute) and m.attr in ("detach", "data") for m in ast.walk(n.value)):
            return True
    return False


class GraphWrittenIntoBuffer(Rule):
    code = "GS420"
    name = "graph-written-into-buffer"
    severity = Severity.WARNING
    summary = ("Writing a tensor with a graph into a buffer in place (`self.queue[:, :n] = z`) makes the buffer "
               "keep that graph, and every later write chains the next step's graph onto it.")
    events = (StoreGraphEvent,)
    what_it_does = ("Flags an in-place write (`self.x[...] = v`, `self.x.copy_(v)`) of a value that surely "
                    "carries a graph, in grad mode, into an attribute of `self` that held no graph: a registered "
                    "buffer (also one registered per index, `register_buffer('sv%d' % i, ...)`, and written through a "
                    "property handing out the list of them: `self.sv[i][:] = sv`) or a tensor the class made with a "
                    "torch factory. Not flagged when the same function "
                    "reads the attribute again after the write (a cache the result is built from), when the class "
                    "detaches the attribute somewhere itself (`self.memory.detach_()` in a method the training loop "
                    "calls: truncated backpropagation), when the writing function first re-makes it with a factory, itself or "
                    "through a method, unconditionally or under a test on one of its parameters (`if t == 0:` at a "
                    "decoder's first step: each sequence starts fresh), or under `torch.no_grad()`.")
    why_bad = ("An in-place write records the write in autograd: the buffer gets a `grad_fn` (`CopySlices`) that "
               "points at the written value's graph. Nothing raises at first, but the buffer outlives the step, so "
               "it keeps that step's graph alive; the next step's write (a queue shifted by "
               "`self.queue[:, n:] = self.queue[:, :-n].clone()`) chains the new graph onto the old one, and memory "
               "grows every step. A backward that later reads the buffer runs into graphs earlier backwards freed, "
               "and raises.")
    example = "self.queue[:, :bs] = z"
    use_instead = "self.queue[:, :bs] = z.detach()\n# or: with torch.no_grad(): self.queue[:, :bs] = z"
    fix_safety = "This rule offers no automatic fix: whether the buffer should carry gradients is left to you."
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",
                  "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer")
    _head = ("import torch\nimport torch.nn as nn\n\n\nclass Queue(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
             "        self.register_buffer(\"queue\", torch.zeros(4, 6))\n\n    def forward(self, x):\n"
             "        z = self.proj(x)\n        self.queue[:, 2:] = self.queue[:, :-2].clone()\n")
    _tail = ("        return z.pow(2).mean()\n\n\nm = Queue()\nfor _ in range(3):\n"
             "    m(torch.randn(2, 4)).backward()\n")
    _BASE = ("import torch\nimport torch.nn as nn\n\n\nclass Base(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.aux_loss = torch.zeros(1)\n\n"
             "    def add_auxiliary_loss(self, aux_loss, alpha):\n")
    _SUB = ("\n\nclass Net(Base):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 1)\n\n"
            "    def forward(self, x):\n        out = self.fc(x)\n        self.add_auxiliary_loss(out.pow(2).mean(), 0.5)\n"
            "        return out\n\n\nm = Net()\nfor _ in range(2):\n"
            "    (m(torch.randn(2, 4)).mean() + m.aux_loss.sum()).backward()\n")
    valid = (
        # Re-made with fresh zeros at step 0 of every sequence (`if t == 0:`, a parameter the caller sets):
        # the chaining within one sequence is the model's recurrence, backwarded once (WaveRNN's attention).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass LSA(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.W = nn.Linear(4, 4)\n        self.cumulative = None\n\n"
              "    def init_attention(self, x):\n        self.cumulative = torch.zeros(x.shape[0], 4)\n\n"
              "    def forward(self, x, t):\n        if t == 0:\n            self.init_attention(x)\n"
              "        scores = torch.sigmoid(self.W(x) + self.cumulative)\n        self.cumulative += scores\n"
              "        return scores\n\n\nattn = LSA()\nopt = torch.optim.SGD(attn.parameters(), lr=0.1)\n"
              "for step in range(3):\n    x = torch.randn(2, 4)\n    out = 0\n    for t in range(4):\n"
              "        out = out + attn(x, t).sum()\n    opt.zero_grad()\n    out.backward()\n    opt.step()\n"),
        # The same base model replacing the tensor each forward (the fix): nothing is written in place.
        Valid(_BASE + "        self.aux_loss = aux_loss * alpha\n" + _SUB),
        Valid(_head + "        self.queue[:, :2] = z.detach().t()\n" + _tail + "assert m.queue.grad_fn is None\n"),
        Valid(_head + "        with torch.no_grad():\n            self.queue[:, :2] = z.t()\n" + _tail
              + "assert m.queue.grad_fn is None\n"),
        # A memory the class detaches itself between steps (PyG's TGN: `model.detach()` after each backward).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Memory(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.gru = nn.GRUCell(4, 4)\n"
              "        self.register_buffer(\"memory\", torch.zeros(3, 4))\n\n    def detach(self):\n"
              "        self.memory.detach_()\n\n    def update(self, idx, x):\n"
              "        self.memory[idx] = self.gru(x, self.memory[idx])\n\n\nm = Memory()\nfor _ in range(3):\n"
              "    m.update(torch.tensor([0, 1]), torch.randn(2, 4))\n    m.memory.sum().backward()\n    m.detach()\n"),
        # Read back in the same call: the write is part of what this call computes (a cache).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Cache(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
              "        self.register_buffer(\"buf\", torch.zeros(2, 4))\n\n    def forward(self, x):\n"
              "        self.buf[:, :] = self.proj(x)\n        return self.buf.sum()\n\n\n"
              "with torch.no_grad():\n    Cache()(torch.randn(2, 4))\n"),
        # BigGAN's fix: the copy into the logging buffers under `torch.no_grad()`.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef power_iteration(W, u_, update=True, eps=1e-12):\n    us, vs, svs = [], [], []\n    for i, u in enumerate(u_):\n        with torch.no_grad():\n            v = F.normalize(torch.matmul(u, W), eps=eps)\n            vs += [v]\n            u = F.normalize(torch.matmul(v, W.t()), eps=eps)\n            us += [u]\n            if update:\n                u_[i][:] = u\n        svs += [torch.squeeze(torch.matmul(torch.matmul(v, W.t()), u.t()))]\n    return svs, us, vs\n\n\nclass SN(object):\n    def __init__(self, num_svs, num_outputs):\n        self.num_svs = num_svs\n        for i in range(self.num_svs):\n            self.register_buffer('u%d' % i, torch.randn(1, num_outputs))\n            self.register_buffer('sv%d' % i, torch.ones(1))\n\n    @property\n    def u(self):\n        return [getattr(self, 'u%d' % i) for i in range(self.num_svs)]\n\n    @property\n    def sv(self):\n        return [getattr(self, 'sv%d' % i) for i in range(self.num_svs)]\n\n    def W_(self):\n        W_mat = self.weight.view(self.weight.size(0), -1)\n        svs, us, vs = power_iteration(W_mat, self.u, update=self.training)\n        if self.training:\n            with torch.no_grad():\n                for i, sv in enumerate(svs):\n                    self.sv[i][:] = sv\n        return self.weight / svs[0]\n\n\nclass SNLinear(nn.Linear, SN):\n    def __init__(self, in_features, out_features, num_svs=1):\n        nn.Linear.__init__(self, in_features, out_features)\n        SN.__init__(self, num_svs, out_features)\n\n    def forward(self, x):\n        return F.linear(x, self.W_(), self.bias)\n\n\nm = SNLinear(4, 3)\nfor _ in range(2):\n    m(torch.randn(2, 4)).sum().backward()\nassert m.sv0.grad_fn is None\n"),
    )
    invalid = (
        # The look-alike: re-made only when missing (`is None`), so it chains every training step's graph.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass LSA(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.W = nn.Linear(4, 4)\n        self.cumulative = None\n\n"
              "    def init_attention(self, x):\n        self.cumulative = torch.zeros(x.shape[0], 4)\n\n"
              "    def forward(self, x, t):\n        if self.cumulative is None:\n            self.init_attention(x)\n"
              "        scores = torch.sigmoid(self.W(x) + self.cumulative)\n        self.cumulative += scores\n"
              "        return scores\n\n\nattn = LSA()\nopt = torch.optim.SGD(attn.parameters(), lr=0.1)\n"
              "for step in range(3):\n    x = torch.randn(2, 4)\n    out = 0\n    for t in range(4):\n"
              "        out = out + attn(x, t).sum()\n    opt.zero_grad()\n    out.backward()\n    opt.step()\n",
                line=18, runtime="raises: Trying to backward through the graph a second time"),
        # vturrisi/solo-learn's SwAV queue.
        Invalid(_head + "        self.queue[:, :2] = z.t()\n" + _tail, line=14,
                runtime="silent: m.queue.grad_fn is not None"),
        # A buffer made with a factory in `__init__` and filled with `copy_` (BigGAN's spectral-norm singular values).
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass SN(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.weight = nn.Parameter(torch.randn(4, 4))\n"
                "        self.sv = torch.ones(1)\n\n    def forward(self, x):\n"
                "        sv = torch.linalg.matrix_norm(self.weight, 2)\n        self.sv.copy_(sv.reshape(1))\n"
                "        return x @ (self.weight / sv)\n\n\nm = SN()\nfor _ in range(2):\n"
                "    m(torch.randn(2, 4)).sum().backward()\n", line=13,
                runtime="silent: m.sv.grad_fn is not None"),
        # BigGAN's spectral norm: a mixin registers one buffer per singular value (`'sv%d' % i`), hands them out
        # through a property, and its `W_()` (run by `nn.Linear`/`nn.Conv2d` subclasses, whose `self.weight` is
        # the layer's parameter) copies each singular value, computed from the weight, into them in grad mode.
        Invalid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\ndef power_iteration(W, u_, update=True, eps=1e-12):\n    us, vs, svs = [], [], []\n    for i, u in enumerate(u_):\n        with torch.no_grad():\n            v = F.normalize(torch.matmul(u, W), eps=eps)\n            vs += [v]\n            u = F.normalize(torch.matmul(v, W.t()), eps=eps)\n            us += [u]\n            if update:\n                u_[i][:] = u\n        svs += [torch.squeeze(torch.matmul(torch.matmul(v, W.t()), u.t()))]\n    return svs, us, vs\n\n\nclass SN(object):\n    def __init__(self, num_svs, num_outputs):\n        self.num_svs = num_svs\n        for i in range(self.num_svs):\n            self.register_buffer('u%d' % i, torch.randn(1, num_outputs))\n            self.register_buffer('sv%d' % i, torch.ones(1))\n\n    @property\n    def u(self):\n        return [getattr(self, 'u%d' % i) for i in range(self.num_svs)]\n\n    @property\n    def sv(self):\n        return [getattr(self, 'sv%d' % i) for i in range(self.num_svs)]\n\n    def W_(self):\n        W_mat = self.weight.view(self.weight.size(0), -1)\n        svs, us, vs = power_iteration(W_mat, self.u, update=self.training)\n        if self.training:\n            for i, sv in enumerate(svs):\n                self.sv[i][:] = sv\n        return self.weight / svs[0]\n\n\nclass SNLinear(nn.Linear, SN):\n    def __init__(self, in_features, out_features, num_svs=1):\n        nn.Linear.__init__(self, in_features, out_features)\n        SN.__init__(self, num_svs, out_features)\n\n    def forward(self, x):\n        return F.linear(x, self.W_(), self.bias)\n\n\nm = SNLinear(4, 3)\nfor _ in range(2):\n    m(torch.randn(2, 4)).sum().backward()\n", line=40,
                runtime="silent: m.sv0.grad_fn is not None"),
        # A recommender's base model makes the tensor in `__init__` (run by the subclass's `super().__init__()`) and
        # adds every forward's auxiliary loss into it in place.
        Invalid(_BASE + "        self.aux_loss += aux_loss * alpha\n" + _SUB, line=11,
                runtime="raises: Trying to backward through the graph a second time"),
    )

    def check(self, event: StoreGraphEvent, report) -> None:
        tree = report.tree
        if tree is None:
            return
        attr = event.key.split(".", 1)[1]
        q = tree_query(self, tree)
        fn = q.enclosing(event.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        cls = q.enclosing(event.node, (ast.ClassDef,))
        if fn is None or cls is None:
            return
        if not event.known_before and not _made_without_graph(cls, attr):
            return
        if _detached_somewhere(cls, attr):
            return  # the class cuts the kept graph itself (PyG's TGN memory and its `detach()`: truncated BPTT)
        if _remade_per_sequence(q, cls, fn, attr, event.node.lineno):
            return
        end = getattr(event.node, "end_lineno", event.node.lineno)
        for n in ast.walk(fn):
            if isinstance(n, ast.Attribute) and _is_self_attr(n, attr) and isinstance(n.ctx, ast.Load) \
                    and n.lineno > end:
                parent_is_store = False
                for m in ast.walk(fn):
                    if isinstance(m, ast.Subscript) and m.value is n and isinstance(m.ctx, ast.Store):
                        parent_is_store = True
                        break
                if not parent_is_store:
                    return  # read back after the write: a cache this call's result is built from
        report.add(self, event.node,
                   f"This writes a tensor with a graph into `{event.key}`, so the buffer keeps this step's graph. "
                   f"Each later write chains the next step's graph onto it; write a detached value (`.detach()`) "
                   f"or do it under `torch.no_grad()`.")
