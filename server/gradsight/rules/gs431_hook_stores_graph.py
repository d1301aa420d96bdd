from __future__ import annotations

import ast

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from . import _hooks
from .base import Invalid, Rule, Valid

# Methods after which the value has no graph (or is no tensor): the copy is stored safely.
_CUTS = {"detach", "numpy", "item", "tolist", "detach_"}
# Container methods that keep what they are given.
_APPENDS = {"append", "extend", "insert", "add", "appendleft", "put"}
_GRAD_USES = {"grad", "retain_grad", "register_hook", "backward", "requires_grad_"}


def _cpu_arg(call: ast.Call) -> bool:
    """`.to("cpu")`, `.to(device="cpu")`, `.to(torch.device("cpu"))`."""
    for a in call.args[:1] + [k.value for k in call.keywords if k.arg == "device"]:
        if isinstance(a, ast.Constant) and a.value == "cpu":
            return True
        if isinstance(a, ast.Call) and a.args and isinstance(a.args[0], ast.Constant) and a.args[0].value == "cpu":
            return True
    return False


def _cpu_copy(expr: ast.AST, tensors: set) -> bool:
    """`x.cpu()` (possibly followed by `.float()`, `[0]`, ...) of one of `tensors`, never cut by `.detach()`,
    `.data`, `.numpy()` on the way: a CPU copy of the value that keeps its autograd graph (`.cpu()` is differentiable,
    and on a CPU tensor it returns the tensor itself)."""
    cpu = False
    node = expr
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr in _CUTS:
                return False
            if attr == "cpu" or (attr == "to" and _cpu_arg(node)):
                cpu = True
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            if node.attr == "data":
                return False
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            break
    return cpu and isinstance(node, ast.Name) and node.id in tensors


def _self_attr(expr: ast.AST, me: str) -> str | None:
    """`A` for `self.A`, `self.A[k]`, `self.A[k].B`."""
    attr = None
    while isinstance(expr, (ast.Subscript, ast.Attribute)):
        if isinstance(expr, ast.Attribute):
            attr = expr.attr
        expr = expr.value
    return attr if isinstance(expr, ast.Name) and expr.id == me else None


def _stores(stmt: ast.AST, me: str) -> tuple:
    """(the attribute of `self` a statement stores into, the expression stored) or (None, None)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr in _APPENDS and call.args:
            attr = _self_attr(f.value, me)
            if attr is not None:
                return attr, call.args[-1]
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for t in targets:
            attr = _self_attr(t, me) if not isinstance(t, ast.Name) else None
            if attr is not None:
                return attr, stmt.value
    return None, None


def _used_for_gradient(q, cls: ast.ClassDef | None, attr: str) -> bool:
    """Whether the class reads the stored attribute for its gradient (`self.acts[-1].grad`, `retain_grad()`,
    `torch.autograd.grad(score, self.acts)`, a backward through it): then the graph is stored on purpose."""
    if cls is None:
        return False
    for n in walk(cls):
        if isinstance(n, ast.Attribute) and n.attr in _GRAD_USES:
            if any(isinstance(m, ast.Attribute) and m.attr == attr for m in walk(n.value)):
                return True
        if isinstance(n, ast.Call) and (q.call_name(n) or "").endswith("autograd.grad"):
            if any(isinstance(m, ast.Attribute) and m.attr == attr for a in n.args for m in walk(a)):
                return True
    return False


def _under_no_grad(q, node: ast.AST, fn: ast.AST) -> bool:
    for d in getattr(fn, "decorator_list", ()):
        if (q.qualname(d.func if isinstance(d, ast.Call) else d) or "") in ("torch.no_grad", "torch.inference_mode"):
            return True
    parent = q.parent(node)
    while parent is not None and parent is not fn:
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(
                (q.call_name(i.context_expr) or "") in ("torch.no_grad", "torch.inference_mode")
                for i in parent.items):
            return True
        parent = q.parent(parent)
    return False


class HookStoresGraph(Rule):
    code = "GS431"
    name = "hook-stores-graph"
    severity = Severity.WARNING
    summary = ("A forward hook (or a callback handed to a model) stores `t.cpu()` of what it receives on an object: "
               "the copy keeps the forward's whole autograd graph alive.")
    events = (FileEvent,)
    what_it_does = ("Flags a statement in a function registered with `register_forward_hook` / "
                    "`register_forward_pre_hook`, or in a bound method stored on another object as a callback "
                    "(`layer.callback = self.record`), that stores a `.cpu()` (or `.to(\"cpu\")`) copy of a tensor the "
                    "function receives into an attribute of `self` (assigned, appended, or put in a dict or list that "
                    "is) without `.detach()`. A class that reads the stored attribute for its gradient (`.grad`, "
                    "`retain_grad()`, `register_hook`, `torch.autograd.grad`, a backward) keeps the graph on purpose "
                    "and is left alone, and so is a store under `torch.no_grad()`.")
    why_bad = ("A hook receives the module's output (or input) as the forward made it: in grad mode it carries the "
               "forward's graph, with every activation the forward saved for backward. `.cpu()` is differentiable "
               "(on a CPU tensor it returns the tensor itself), so the copy keeps that graph; stored on a long-lived "
               "object (a Grad-CAM helper's `activations`, an attention recorder's `recordings`), it keeps every "
               "recorded forward's graph alive until the object drops it, and memory grows with each call. The "
               "`.cpu()` says the value is kept for reading, not for a backward: store `t.detach().cpu()`.")
    example = ("def save_activation(self, module, input, output):\n    self.activations.append(output.cpu())")
    use_instead = ("def save_activation(self, module, input, output):\n"
                   "    self.activations.append(output.detach().cpu())")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook",
                  "https://pytorch.org/docs/stable/notes/faq.html#my-model-reports-cuda-runtime-error-2-out-of-memory")
    valid = (
        Valid("import torch\n\n\nclass Grabber:\n    def __init__(self, model, layer):\n        self.model = model\n"
              "        self.activations = []\n        layer.register_forward_hook(self.save_activation)\n\n"
              "    def save_activation(self, module, input, output):\n"
              "        self.activations.append(output.cpu().detach())\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))\n"
              "grabber = Grabber(model, model[1])\nmodel(torch.randn(2, 4)).sum().backward()\n"
              "assert grabber.activations[-1].grad_fn is None\n"),
        # The activation is kept to take its gradient (Grad-CAM through `torch.autograd.grad`).
        Valid("import torch\n\n\nclass Grabber:\n    def __init__(self, model, layer):\n        self.model = model\n"
              "        self.activations = []\n        layer.register_forward_hook(self.save_activation)\n\n"
              "    def save_activation(self, module, input, output):\n        self.activations.append(output.cpu())\n\n"
              "    def cam(self, x):\n        self.activations = []\n        score = self.model(x)[:, 0].sum()\n"
              "        grads = torch.autograd.grad(score, self.activations)\n"
              "        return (grads[0] * self.activations[0]).sum(1).detach()\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))\n"
              "heat = Grabber(model, model[1]).cam(torch.randn(2, 4))\n"),
        # The hooked model runs under `no_grad` inside the hook's store.
        Valid("import torch\n\nfeats = {}\n\n\nclass Probe:\n    def __init__(self, layer):\n        self.feats = []\n"
              "        layer.register_forward_hook(self.keep)\n\n    def keep(self, module, input, output):\n"
              "        with torch.no_grad():\n            self.feats.append(output.cpu())\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())\nprobe = Probe(model[0])\n"
              "model(torch.randn(2, 4))\n"),
        # A feature kept on the object for a loss (no copy to the CPU): the graph is used by the loss's backward.
        Valid("import torch\n\n\nclass Features:\n    def __init__(self, layer):\n        self.out = None\n"
              "        layer.register_forward_hook(self.hook)\n\n    def hook(self, module, input, output):\n"
              "        self.out = output\n\n\nnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())\n"
              "f = Features(net[0])\nnet(torch.randn(2, 4))\nf.out.pow(2).mean().backward()\n"),
    )
    invalid = (
        Invalid("import torch\n\n\nclass Grabber:\n    def __init__(self, model, layer):\n        self.model = model\n"
                "        self.activations = []\n        layer.register_forward_hook(self.save_activation)\n\n"
                "    def save_activation(self, module, input, output):\n"
                "        self.activations.append(output.cpu())\n\n\n"
                "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))\n"
                "grabber = Grabber(model, model[1])\nmodel(torch.randn(2, 4)).sum().backward(retain_graph=True)\n",
                line=11, runtime="silent: grabber.activations[-1].grad_fn is not None"),
        # A recorder whose method a layer calls back with its attention map (reformer-pytorch's `Recorder`).
        Invalid("import torch\nfrom collections import defaultdict\n\n\nclass Attention(torch.nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.proj = torch.nn.Linear(4, 4)\n"
                "        self.callback = None\n\n    def forward(self, x):\n        attn = self.proj(x).softmax(-1)\n"
                "        if self.callback is not None:\n            self.callback(attn)\n        return attn * x\n\n\n"
                "class Recorder(torch.nn.Module):\n    def __init__(self, net):\n        super().__init__()\n"
                "        self.net = net\n        self.recordings = defaultdict(list)\n        net.callback = self.record\n\n"
                "    def record(self, attn):\n        data = {'attn': attn.cpu()}\n        self.recordings[0].append(data)\n\n"
                "    def forward(self, x):\n        return self.net(x)\n\n\n"
                "rec = Recorder(Attention())\nrec(torch.randn(2, 4))\n",
                line=26, runtime="silent: rec.recordings[0][0]['attn'].grad_fn is not None"),
        # A hook made by a factory, writing into a dict kept on the object.
        Invalid("import torch\n\n\nclass Probe:\n    def __init__(self, model):\n        self.feats = {}\n"
                "        for name, m in model.named_children():\n"
                "            m.register_forward_hook(self.make_hook(name))\n\n    def make_hook(self, name):\n"
                "        def hook(module, input, output):\n            self.feats[name] = output.to('cpu')\n"
                "        return hook\n\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())\n"
                "probe = Probe(model)\nmodel(torch.randn(2, 4))\n",
                line=12, runtime="silent: probe.feats['1'].grad_fn is not None"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        attrs = q.attrs
        if "cpu" not in attrs and "to" not in attrs:
            return  # the common case, checked in one pass (this rule runs on every keystroke)
        seen = set()
        for hook in _hooks.hooks(q, callbacks=True):
            if id(hook.fn) in seen or not hook.params or isinstance(hook.fn, ast.Lambda):
                continue
            seen.add(id(hook.fn))
            me = _hooks.self_of(q, hook.fn)
            if me is None:
                continue
            self._check_hook(q, hook, me, report)

    def _check_hook(self, q, hook, me: str, report) -> None:
        fn = hook.fn
        tensors = _hooks.derived(fn, hook.params, keep=lambda e, _names: not _detached(e))
        own = _hooks.own_nodes(fn)
        copies = {}  # local name -> the statement that bound it to a container holding a CPU copy
        cls = q.enclosing(fn, (ast.ClassDef,))
        for stmt in own:
            if not isinstance(stmt, ast.stmt):
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and _holds_copy(stmt.value, tensors):
                copies[stmt.targets[0].id] = stmt
                continue
            attr, value = _stores(stmt, me)
            if attr is None:
                continue
            where = stmt if _holds_copy(value, tensors) else None
            if where is None:
                names = {n.id for n in walk(value) if isinstance(n, ast.Name)}
                where = next((copies[n] for n in names if n in copies), None)
            if where is None or _under_no_grad(q, where, fn) or _used_for_gradient(q, cls, attr):
                continue
            report.add(self, where, f"A `.cpu()` copy kept on `{me}.{attr}` keeps the forward's autograd graph alive; "
                                    "store `t.detach().cpu()` instead.")
            return


def _holds_copy(expr: ast.AST, tensors: set) -> bool:
    """`expr` is a CPU copy, or a list/tuple/dict/`[...] + rest` holding one."""
    todo = [expr]
    while todo:
        e = todo.pop()
        if _cpu_copy(e, tensors):
            return True
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            todo.extend(e.elts)
        elif isinstance(e, ast.Dict):
            todo.extend(v for v in e.values if v is not None)
        elif isinstance(e, ast.BinOp):
            todo.extend((e.left, e.right))
    return False


def _detached(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _CUTS
