from __future__ import annotations

import ast
from typing import Optional

from ..engine.report import text as msg
from ..engine.events import ReassignEvent
from ..engine.values import ModuleVal, Tri
from ..findings import Severity
from ._syntax import own_nodes
from .base import Invalid, Rule, Valid, dotted_name, tree_query

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _imports(tree: ast.Module) -> dict:
    """Local name -> qualified name of the module-level imports (`from torch.optim import lr_scheduler`)."""
    out = {}
    for n in tree.body:
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            for a in n.names:
                out[a.asname or a.name] = n.module + "." + a.name
    return out


def _scheduler(call: ast.Call, imports: dict) -> bool:
    """`torch.optim.lr_scheduler.X(opt, ...)`: a scheduler keeps the optimizer to change its learning rate, and its
    `step()` never steps the optimizer."""
    name = dotted_name(call.func) or ""
    root, _, rest = name.partition(".")
    qual = imports.get(root, root) + ("." + rest if rest else "")
    return qual.startswith("torch.optim.lr_scheduler.")


# `nn.Module` methods that change the module in place and return it (`Module.to` moves the parameters' data, the
# `Parameter` objects an optimizer holds stay the same).
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "train", "eval",
                           "requires_grad_", "apply", "share_memory", "xpu", "ipu", "mtia"})


def _same_module(stmt: ast.AST, key: str) -> bool:
    """`key = key.cuda()` (also `.to(dev)`, `.cpu()`, `.train()`, chained): the module rebinds itself."""
    value = getattr(stmt, "value", None) if isinstance(stmt, ast.Assign) else None
    seen = False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _RETURNS_SELF:
        value, seen = value.func.value, True
    return seen and dotted_name(value) == key


def _steps_only_before(tree: ast.Module, stmt: ast.stmt, built_line: int, rule) -> bool:
    """Whether no `step()` of the optimizer built at `built_line` can run after the replacement `stmt`: the optimizer
    is a plain local name bound in the same function (or module-level code) as the replacement, the code only calls
    its methods (`opt.step()`, `opt.zero_grad()`) or hands it to a learning-rate scheduler (or a `scaler.step(opt)`),
    never to anything that could keep it, and it has steps, each before the replacement and outside any loop that
    also holds the replacement (a best checkpoint reloaded after the training loop, then only evaluated)."""
    q = tree_query(rule, tree)
    scope = q.enclosing_function(stmt) or tree
    if isinstance(scope, (ast.Lambda, ast.ClassDef)):
        return False
    nodes = own_nodes(scope)
    built = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call)
             and n.value.lineno == built_line and isinstance(n.targets[0], ast.Name)]
    if len(built) != 1:
        return False
    name = built[0].targets[0].id
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in nodes):
        return False
    # A function or lambda defined here that reads the name could step the optimizer whenever it is called (at
    # module level, any function of the file can read it as a global).
    inner = [n for n in (ast.walk(tree) if scope is tree else ast.walk(scope)) if isinstance(n, _SCOPES[:3])
             and n is not scope]
    if any(isinstance(m, ast.Name) and m.id == name for f in inner for m in ast.walk(f)):
        return False
    imports = _imports(tree)
    steps = []
    for n in nodes:
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        parent = q.parent(n)
        if isinstance(parent, ast.Attribute) and parent.value is n:
            call = q.parent(parent)
            if parent.attr == "step" and isinstance(call, ast.Call) and call.func is parent:
                steps.append(call)
            continue  # `opt.zero_grad()`, `opt.param_groups`: reads that step nothing
        if isinstance(parent, ast.Call) and n in parent.args:
            if _scheduler(parent, imports):
                continue
            if isinstance(parent.func, ast.Attribute) and parent.func.attr == "step":
                steps.append(parent)  # `scaler.step(opt)`
                continue
        return False  # handed on, stored, returned or aliased: something else may step it later
    loops = {id(a) for a in q.ancestors(stmt) if isinstance(a, _LOOPS)}
    # No step at all: code still being written, or an optimizer stepped where this scope cannot see; keep the finding.
    return bool(steps) and all(s.lineno < stmt.lineno and not any(id(a) in loops for a in q.ancestors(s))
                               for s in steps)


class ParametersReplacedAfterOptimizer(Rule):
    code = "GS504"
    name = "module-replaced-after-optimizer"
    severity = Severity.WARNING
    summary = "A submodule replaced after the optimizer took `model.parameters()` is never optimized."
    events = (ReassignEvent,)
    what_it_does = ("Flags `model.head = nn.Linear(...)` (a new submodule with parameters) after "
                    "`torch.optim.X(model.parameters())` was built, unless every path after the replacement binds "
                    "the optimizer's name to a new `torch.optim` optimizer before anything reads it (a loop that swaps "
                    "the classifier, then builds that step's optimizer), or unless the optimizer is a local name of "
                    "the same function whose every `step()` stands before the replacement and outside any loop that "
                    "holds it, and which is handed to nothing but a learning-rate scheduler (the best weights "
                    "reloaded after training, then only evaluated).")
    why_bad = ("The optimizer holds the old parameter tensors. The new layer gets gradients, but `step()` never "
               "updates it, silently.")
    example = "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.fc = nn.Linear(512, 10)"
    use_instead = "model.fc = nn.Linear(512, 10)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)"
    references = ("https://pytorch.org/docs/stable/optim.html",)
    # Tip-Adapter's fine-tuning (gaopengcuhk/Tip-Adapter main.py): train, keep the best weight, reload it.
    _ADAPTER = ("import io\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
                "def run_adapter(keys, feats, labels, epochs):\n"
                "    adapter = nn.Linear(keys.shape[0], keys.shape[1], bias=False)\n"
                "    adapter.weight = nn.Parameter(keys.t())\n"
                "    optimizer = torch.optim.AdamW(adapter.parameters(), lr=1e-3, eps=1e-4)\n"
                "    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)\n"
                "    best_acc, best = -1.0, io.BytesIO()\n    for epoch in range(epochs):\n"
                "        loss = F.cross_entropy(adapter(feats), labels)\n        optimizer.zero_grad()\n"
                "        loss.backward()\n        optimizer.step()\n        scheduler.step()\n"
                "        acc = (adapter(feats).argmax(1) == labels).float().mean().item()\n"
                "        if acc > best_acc:\n            best_acc, best = acc, io.BytesIO()\n"
                "            torch.save(adapter.weight, best)\n")
    _RELOAD = "    best.seek(0)\n    adapter.weight = torch.load(best, weights_only=False)\n"
    _CALL = ("    return adapter, optimizer\n\n\ntorch.manual_seed(0)\n"
             "adapter, optimizer = run_adapter(torch.randn(4, 3), torch.randn(8, 4), torch.randint(0, 3, (8,)), 3)\n")
    valid = (Valid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2))\nmodel.head = nn.Linear(2, 1)\n"
                   "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"),
             # Class-incremental learning: each step swaps the classifier, then builds that step's optimizer over
             # the new parameters before training; the previous step's optimizer is never stepped again.
             Valid("import torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer):\n    optimizer.zero_grad()\n"
                   "    model(torch.randn(8, 4)).pow(2).sum().backward()\n    optimizer.step()\n\n\n"
                   "model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\nmodel.fc = nn.Linear(4, 2)\n"
                   "for task in range(3):\n"
                   "    if task > 0:\n        model.fc = nn.Linear(4, 2 + task)\n"
                   "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    train(model, optimizer)\n"),
             # The best weight reloaded after the training loop, then only evaluated: no `step()` can run after the
             # replacement (gaopengcuhk/Tip-Adapter main.py; bench/fresh27-repro/03 part E).
             Valid(_ADAPTER + _RELOAD + "    return adapter(feats).argmax(1)\n\n\ntorch.manual_seed(0)\n"
                   "preds = run_adapter(torch.randn(4, 3), torch.randn(8, 4), torch.randint(0, 3, (8,)), 3)\n"),
             # `Module.to` / `.cuda()` / `.float()` / `.train()` move the module's own parameters and hand the same
             # module back: the optimizer still holds every parameter (HLTCHKUST/PAML's `self.x = self.x.cuda()`;
             # bench/fresh33-false/01).
             Valid('import torch\nimport torch.nn as nn\n\n\nclass Transformer(nn.Module):\n    def __init__(self, dev):\n        super().__init__()\n        self.encoder = nn.Linear(4, 4)\n        self.decoder = nn.Linear(4, 2)\n        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)\n        self.encoder = self.encoder.to(dev)\n        self.decoder = self.decoder.float().train()\n\n\nm = Transformer("cpu")\n'
                   "assert not all(p is not m.encoder.weight for g in m.optimizer.param_groups for p in g['params'])\n"),)
    invalid = (
               # The look-alike: a new module moved to the device replaces the one the optimizer holds.
               Invalid('import torch\nimport torch.nn as nn\n\n\nclass Transformer(nn.Module):\n    def __init__(self, dev):\n        super().__init__()\n        self.encoder = nn.Linear(4, 4)\n        self.decoder = nn.Linear(4, 2)\n        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)\n        self.encoder = nn.Linear(4, 4).to(dev)\n        self.decoder = self.decoder.float().train()\n\n\nm = Transformer("cpu")\n', line=11,
                       runtime="silent: all(p is not m.encoder.weight for g in m.optimizer.param_groups for p in g['params'])"),
               Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2))\n"
                       "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.head = nn.Linear(2, 1)\n", line=5,
                       runtime="silent: all(p is not model.head.weight for g in opt.param_groups for p in g['params'])"),
               # The look-alike: the step's optimizer is built before the swap, then trains without the new layer.
               Invalid("import torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer):\n    optimizer.zero_grad()\n"
                       "    model(torch.randn(8, 4)).pow(2).sum().backward()\n    optimizer.step()\n\n\n"
                       "model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\nmodel.fc = nn.Linear(4, 2)\n"
                       "for task in range(3):\n"
                       "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                       "    if task > 0:\n        model.fc = nn.Linear(4, 2 + task)\n    train(model, optimizer)\n",
                       line=16, runtime="silent: all(p is not model.fc.weight for g in optimizer.param_groups "
                       "for p in g['params'])"),
               # The look-alike: the best weight reloaded after the first stage, then trained further with the same
               # optimizer, which still steps the old weight.
               Invalid(_ADAPTER + _RELOAD + "    for epoch in range(2):\n"
                       "        loss = F.cross_entropy(adapter(feats), labels)\n        optimizer.zero_grad()\n"
                       "        loss.backward()\n        optimizer.step()\n" + _CALL,
                       line=25, runtime="silent: all(p is not adapter.weight for g in optimizer.param_groups "
                       "for p in g['params'])"),
               # Reloaded inside the loop: the next epoch's `step()` updates the old weight only.
               Invalid(_ADAPTER + "        if epoch == 1:\n"
                       + _RELOAD.replace("    ", "            ") + _CALL,
                       line=26, runtime="silent: all(p is not adapter.weight for g in optimizer.param_groups "
                       "for p in g['params'])"),)

    def check(self, event: ReassignEvent, report) -> None:
        if event.optimizer_at is None or not isinstance(event.new, ModuleVal) or event.new.has_params is not Tri.YES:
            return
        if _same_module(event.node, event.key):
            return  # `self.enc = self.enc.cuda()`: the module moved its own parameters and handed itself back
        # The tree is read only here, for a replacement after an optimizer was built (rare).
        tree = report.tree
        if event.optimizer_at.path is None and tree is not None and isinstance(event.node, ast.stmt) \
                and _steps_only_before(tree, event.node, event.optimizer_at.line, self):
            return
        report.add(self, event.node,
                   msg("The optimizer built at line ", event.optimizer_at.line, " holds the old parameters: `step()` "
                       f"never updates the new `{event.key}`; build the optimizer after replacing layers."),
                   related=[event.optimizer_at])
