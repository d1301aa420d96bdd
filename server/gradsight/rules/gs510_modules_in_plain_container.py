from __future__ import annotations

import ast

from ..engine import torchdb as db
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

_REGISTER = {"add_module", "register_module", "register_parameter", "ModuleList", "ModuleDict", "Sequential",
             "ParameterList", "ParameterDict"}


def _elements(value: ast.AST) -> list:
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return list(value.elts)
    if isinstance(value, ast.Dict):
        return list(value.values)
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return [value.elt]
    if isinstance(value, ast.DictComp):
        return [value.value]
    return []


class ModulesInPlainContainer(Rule):
    code = "GS510"
    name = "modules-in-plain-container"
    severity = Severity.WARNING
    summary = "Submodules kept in a plain list or dict are not registered: no parameters, no training, no `.to()`."
    events = (FileEvent,)
    what_it_does = ("Flags `self.x = [nn.Linear(...), ...]` or `self.x = {\"a\": nn.Linear(...)}` (literals and "
                    "comprehensions) in an `nn.Module`, unless the container is later registered "
                    "(`nn.ModuleList(self.x)`, `nn.Sequential(*self.x)`, `add_module`).")
    why_bad = ("`nn.Module` registers submodules only when they are assigned as attributes directly or through "
               "`nn.ModuleList` / `nn.ModuleDict`. Modules in a plain list or dict are invisible to "
               "`model.parameters()`: the optimizer never updates them (their weights stay at their random "
               "initialisation), `model.to(device)` does not move them and `state_dict()` does not save them. "
               "Nothing raises.")
    example = "self.readers = {\"temp\": nn.Linear(4, 8), \"humid\": nn.Linear(4, 8)}"
    use_instead = "self.readers = nn.ModuleDict({\"temp\": nn.Linear(4, 8), \"humid\": nn.Linear(4, 8)})"
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.ModuleDict.html",)
    _head = "import torch\nimport torch.nn as nn\n\n\nclass Multi(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    _tail = ("        self.fuse = nn.Linear(16, 1)\n\n    def forward(self, a, b):\n"
             "        return self.fuse(torch.cat([self.readers[0](a), self.readers[1](b)], 1))\n\n\n"
             "m = Multi()\nn_params = len(list(m.parameters()))\n")
    valid = (
        # The list's layers reach an `nn.Sequential` through a local (FrEIA's i-ResNet block): they are registered.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Block(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.layers = [nn.Linear(4, 4), nn.Linear(4, 4)]\n"
              "        acts = [nn.ELU() for _ in self.layers]\n"
              "        module_list = sum(zip(self.layers, acts), ())[:-1]\n"
              "        self.residual = nn.Sequential(*module_list)\n\n    def forward(self, x):\n"
              "        return x + self.residual(x)\n\n\nb = Block()\n"
              "assert len(list(b.parameters())) == 4\nb(torch.randn(2, 4)).sum().backward()\n"),
        # Modules without parameters or buffers lose nothing unregistered (Time-Series-Library's moving averages).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass MovingAvg(nn.Module):\n    def __init__(self, k):\n"
              "        super().__init__()\n        self.k = k\n"
              "        self.avg = nn.AvgPool1d(kernel_size=k, stride=1, padding=k // 2)\n\n    def forward(self, x):\n"
              "        return self.avg(x)\n\n\nclass Multi(nn.Module):\n    def __init__(self, ks):\n"
              "        super().__init__()\n        self.avgs = [MovingAvg(k) for k in ks]\n\n"
              "    def forward(self, x):\n        return sum(f(x) for f in self.avgs)\n\n\n"
              "print(Multi([1, 3])(torch.randn(2, 4, 6)).shape)\n"),
        Valid(_head + "        self.readers = nn.ModuleList([nn.Linear(4, 8), nn.Linear(4, 8)])\n" + _tail),
        Valid(_head + "        layers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n        self.readers = nn.ModuleList(layers)\n"
              + _tail),
        Valid(_head + "        self.readers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n"
              "        self.stack = nn.ModuleList(self.readers)\n" + _tail),
        Valid(_head + "        self.readers = [torch.zeros(4), torch.ones(4)]\n        self.w = nn.Linear(4, 8)\n"
              "\n    def forward(self, a):\n        return self.w(a + self.readers[0])\n\n\nm = Multi()\n"),
    )
    invalid = (
        Invalid(_head + "        self.readers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
        Invalid(_head + "        self.readers = {0: nn.Linear(4, 8), 1: nn.Linear(4, 8)}\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
        Invalid(_head + "        self.readers = [nn.Linear(4, 8) for _ in range(2)]\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # One pass over the shared node list finds the candidates (`self.x = [<call>, ...]`); only their classes
        # are looked at further. This rule runs on every keystroke.
        candidates = [n for n in q.assigns if len(n.targets) == 1
                      and isinstance(n.targets[0], ast.Attribute) and isinstance(n.targets[0].value, ast.Name)
                      and n.targets[0].value.id == "self"
                      and any(isinstance(e, ast.Call) for e in _elements(n.value))]
        if not candidates:
            return
        registered: dict = {}
        for node in candidates:
            cls = q.enclosing(node, (ast.ClassDef,))
            if cls is None or not q.is_module_class(cls):
                continue
            if id(cls) not in registered:
                registered[id(cls)] = self._registered(cls)
            target = node.targets[0]
            if target.attr in registered[id(cls)] or "*" in registered[id(cls)]:
                continue
            modules = [e for e in _elements(node.value) if q.is_module_constructor(e)]
            if modules and not all(_surely_stateless(q, e, set()) for e in modules):
                kind = "dict" if isinstance(node.value, (ast.Dict, ast.DictComp)) else "list"
                wrap = "nn.ModuleDict" if kind == "dict" else "nn.ModuleList"
                report.add(self, node, f"Modules in a plain {kind} are not registered, so the optimizer "
                                       f"never trains them; use `{wrap}`.")

    @staticmethod
    def _registered(cls: ast.ClassDef) -> set:
        """Attributes handed to something that may register their modules (or a class that registers by hand)."""
        names = set()
        # Locals made from attributes (`module_list = sum(zip(self.layers, elus), ())[:-1]`, FrEIA's i-ResNet):
        # handing the local to a registering call registers the attributes' modules too.
        via: dict = {}
        for n in ast.walk(cls):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                via.setdefault(n.targets[0].id, set()).update(
                    m.attr for m in ast.walk(n.value) if isinstance(m, ast.Attribute) and isinstance(m.value, ast.Name)
                    and m.value.id == "self")
        for call in ast.walk(cls):
            if not isinstance(call, ast.Call):
                continue
            fname = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
            if fname in ("add_module", "register_module", "setattr"):
                return {"*"} | _all_self_attrs(cls)
            if fname not in _REGISTER:
                continue
            for a in args:
                for n in ast.walk(a):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                        names.add(n.attr)
                    elif isinstance(n, ast.Name) and n.id in via:
                        names |= via[n.id]
        return names


def _surely_stateless(q, call: ast.Call, seen: set) -> bool:
    """The module `call` makes surely has no parameters and no buffers: a parameter-free torch.nn layer
    (`nn.AvgPool1d`), or a class of this file whose `__init__` keeps only such layers and plain values
    (Time-Series-Library's `series_decomp`). Left unregistered, such a module loses nothing."""
    name = q.call_name(call) or ""
    last = name.rsplit(".", 1)[-1]
    if name.startswith("torch.nn."):
        return last in db.PARAMLESS_MODULES
    if not isinstance(call.func, ast.Name) or call.func.id in seen:
        return False
    seen.add(call.func.id)
    cls = next((n for n in q.tree.body if isinstance(n, ast.ClassDef) and n.name == call.func.id), None)
    init = next((n for n in (cls.body if cls else ()) if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return False
    for n in ast.walk(init):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                "register_buffer", "register_parameter", "add_module", "register_module"):
            return False
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                             and t.value.id == "self" for t in n.targets):
            value = n.value
            if isinstance(value, ast.Call):
                if q.call_name(value) in ("builtins.super",) or not (q.is_module_constructor(value)
                                                                     and _surely_stateless(q, value, seen)):
                    return False
            elif not isinstance(value, (ast.Constant, ast.Name, ast.Tuple, ast.List, ast.BinOp, ast.Attribute)):
                return False
    return True


def _all_self_attrs(cls: ast.ClassDef) -> set:
    return {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self"}
