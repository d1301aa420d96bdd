from __future__ import annotations

import ast

from ..engine import torchdb as db
from ..engine.astwalk import walk
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


def _container_stores(top) -> list:
    """A top-level statement's `self.x = [<call>, ...]` (or a dict, a comprehension) assignments."""
    return [n for n in top.assigns if len(n.targets) == 1
            and isinstance(n.targets[0], ast.Attribute) and isinstance(n.targets[0].value, ast.Name)
            and n.targets[0].value.id == "self"
            and any(isinstance(e, ast.Call) for e in _elements(n.value))]


class ModulesInPlainContainer(Rule):
    code = "GS510"
    name = "modules-in-plain-container"
    severity = Severity.WARNING
    summary = "Submodules kept in a plain list or dict are not registered: no parameters, no training, no `.to()`."
    events = (FileEvent,)
    what_it_does = ("Flags `self.x = [nn.Linear(...), ...]` or `self.x = {\"a\": nn.Linear(...)}` (literals and "
                    "comprehensions) in an `nn.Module`, unless the container is later registered "
                    "(`nn.ModuleList(self.x)`, `nn.Sequential(*self.x)`, `add_module`) or handed to a submodule that may "
                    "register its modules (one whose `__init__` copies them into an `nn.ModuleDict`, or one imported "
                    "from another file). A container deleted later in the block that builds it (`del self.x_proj`), "
                    "whose every read is inside an `nn.Parameter(...)` stored on `self` before the `del` "
                    "(`self.x_proj_weight = nn.Parameter(torch.stack([t.weight for t in self.x_proj]))`, VMamba's "
                    "`SS2D`), leaves nothing unregistered: only the parameters built from it outlive the method.")
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
    _ss2d = ("import torch\nimport torch.nn as nn\n\n\nclass SS2D(nn.Module):\n    def __init__(self, d=8, n=4):\n"
             "        super().__init__()\n"
             "        self.x_proj = (nn.Linear(d, n, bias=False), nn.Linear(d, n, bias=False))\n"
             "        self.x_proj_weight = {}\n        del self.x_proj\n\n    def forward(self, x):\n"
             "        return torch.einsum(\"bd,kcd->bkc\", x, self.x_proj_weight)\n\n\nm = SS2D()\n")
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
        # A tuple of layers that only initialises one stacked, registered parameter and is then deleted (VMamba's
        # `SS2D.x_proj`): the parameter is what forward uses and the optimizer trains.
        Valid(_ss2d.format("nn.Parameter(torch.stack([t.weight for t in self.x_proj], dim=0))")
              + "assert not hasattr(m, \"x_proj\") and len(list(m.parameters())) == 1\n"
              "m(torch.randn(2, 8)).sum().backward()\nassert m.x_proj_weight.grad is not None\n"),
        # A plain dict handed to submodules that copy its layers into an `nn.ModuleDict` (darts' TFT prescalers):
        # registered there, and trained.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Select(nn.Module):\n"
              "    def __init__(self, names, prescalers=None):\n        super().__init__()\n"
              "        prescalers = prescalers if prescalers is not None else {}\n"
              "        self.prescalers = nn.ModuleDict()\n        for name in names:\n"
              "            if name in prescalers:\n                self.prescalers[name] = prescalers[name]\n"
              "            else:\n                self.prescalers[name] = nn.Linear(1, 4)\n\n"
              "    def forward(self, xs):\n        return sum(self.prescalers[n](xs[n]) for n in self.prescalers)\n\n\n"
              "class Model(nn.Module):\n    def __init__(self, reals):\n        super().__init__()\n"
              "        self.prescalers_linear = {name: nn.Linear(1, 4) for name in reals}\n"
              "        self.encoder = Select(reals[:2], prescalers=self.prescalers_linear)\n"
              "        self.decoder = Select(reals[2:], self.prescalers_linear)\n\n    def forward(self, xs):\n"
              "        return self.encoder(xs) + self.decoder(xs)\n\n\n"
              "m = Model(['a', 'b', 'c'])\nassert len(list(m.parameters())) == 6\n"
              "m({n: torch.randn(2, 1) for n in 'abc'}).sum().backward()\n"),
        # The list is rebound to a container of this file that `add_module`s each of its `*args`
        # (deep-image-prior's ListModule): every layer is registered under the same attribute.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass ListModule(nn.Module):\n"
              "    def __init__(self, *args):\n        super().__init__()\n        idx = 0\n"
              "        for module in args:\n            self.add_module(str(idx), module)\n            idx += 1\n\n"
              "    def __iter__(self):\n        return iter(self._modules.values())\n\n\n"
              "class UNet(nn.Module):\n    def __init__(self, more_layers=2):\n        super().__init__()\n"
              "        self.more_downs = [nn.Linear(4, 4) for i in range(more_layers)]\n"
              "        self.more_downs = ListModule(*self.more_downs)\n\n    def forward(self, x):\n"
              "        for d in self.more_downs:\n            x = d(x)\n        return x\n\n\n"
              "m = UNet()\nassert len(list(m.parameters())) == 4\nm(torch.randn(2, 4)).sum().backward()\n"),
        # The class registers each list member's parameters by hand (pytorch_RVAE's Highway): they are its own.
        Valid(_head + "        self.readers = [nn.Linear(4, 8) for _ in range(2)]\n"
              "        for i, module in enumerate(self.readers):\n"
              "            self._add_to_parameters(module.parameters(), 'reader_{}'.format(i))\n"
              "        self.fuse = nn.Linear(16, 1)\n\n"
              "    def _add_to_parameters(self, parameters, name):\n"
              "        for i, parameter in enumerate(parameters):\n"
              "            self.register_parameter(name='{}-{}'.format(name, i), param=parameter)\n\n"
              "    def forward(self, a, b):\n"
              "        return self.fuse(torch.cat([self.readers[0](a), self.readers[1](b)], 1))\n\n\n"
              "m = Multi()\nassert len(list(m.parameters())) == 6 and len(m.state_dict()) == 6\n"
              "m(torch.randn(2, 4), torch.randn(2, 4)).sum().backward()\n"
              "assert all(p.grad is not None for p in m.parameters())\n"),
        Valid(_head + "        self.readers = [nn.Linear(4, 8) for _ in range(2)]\n"
              "        for i, module in enumerate(self.readers):\n"
              "            for j, p in enumerate(module.parameters()):\n"
              "                self.register_parameter('reader_{}_{}'.format(i, j), p)\n" + _tail
              + "assert n_params == 6\n"),
        Valid(_head + "        layers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n        self.readers = nn.ModuleList(layers)\n"
              + _tail),
        Valid(_head + "        self.readers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n"
              "        self.stack = nn.ModuleList(self.readers)\n" + _tail),
        Valid(_head + "        self.readers = [torch.zeros(4), torch.ones(4)]\n        self.w = nn.Linear(4, 8)\n"
              "\n    def forward(self, a):\n        return self.w(a + self.readers[0])\n\n\nm = Multi()\n"),
        # Loss modules built without a tensor argument have no parameters and no buffers (mmf's LXMERT losses).
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Pretraining(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.head = nn.Linear(4, 5)\n        self.loss_fcts = {\n"
              "            \"l2\": nn.SmoothL1Loss(reduction=\"none\"),\n"
              "            \"ce\": nn.CrossEntropyLoss(ignore_index=-1),\n        }\n\n"
              "    def forward(self, x, labels, feats):\n        scores = self.head(x)\n"
              "        return self.loss_fcts[\"ce\"](scores, labels) + self.loss_fcts[\"l2\"](scores, feats).mean()\n\n\n"
              "m = Pretraining().double()\nx = torch.randn(2, 4, dtype=torch.float64)\n"
              "m(x, torch.tensor([0, 1]), torch.randn(2, 5, dtype=torch.float64)).backward()\n"),
    )
    invalid = (
        Invalid(_head + "        self.readers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
        # The look-alike that stacks the weights into a plain tensor before deleting the tuple: forward uses the
        # layers' weights through the stack's graph, and nothing registers them.
        Invalid(_ss2d.format("torch.stack([t.weight for t in self.x_proj], dim=0)")
                + "n_params = len(list(m.parameters()))\n", line=8, runtime="silent: n_params == 0"),
        Invalid(_head + "        self.readers = {0: nn.Linear(4, 8), 1: nn.Linear(4, 8)}\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
        Invalid(_head + "        self.readers = [nn.Linear(4, 8) for _ in range(2)]\n" + _tail, line=8,
                runtime="silent: n_params == 2"),
        # A loop over the list whose helper only initialises the parameters: it registers nothing.
        Invalid(_head + "        self.readers = [nn.Linear(4, 8) for _ in range(2)]\n"
                "        for module in self.readers:\n            self._init(module.parameters())\n"
                "        self.fuse = nn.Linear(16, 1)\n\n    def _init(self, parameters):\n"
                "        for p in parameters:\n            nn.init.normal_(p, std=0.02)\n\n"
                "    def forward(self, a, b):\n"
                "        return self.fuse(torch.cat([self.readers[0](a), self.readers[1](b)], 1))\n\n\n"
                "m = Multi()\nn_params = len(list(m.parameters()))\n", line=8, runtime="silent: n_params == 2"),
        # Handed to a submodule that keeps the list as it is: still unregistered.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Apply(nn.Module):\n"
                "    def __init__(self, layers):\n        super().__init__()\n        self.layers = layers\n\n"
                "    def forward(self, x):\n        return sum(f(x) for f in self.layers)\n\n\n"
                "class Multi(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.readers = [nn.Linear(4, 8), nn.Linear(4, 8)]\n        self.apply_all = Apply(self.readers)\n"
                "\n    def forward(self, x):\n        return self.apply_all(x)\n\n\n"
                "m = Multi()\nn_params = len(list(m.parameters()))\n", line=17, runtime="silent: n_params == 0"),
        # Rebound to a container of this file that keeps its `*args` in a plain tuple: still unregistered.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass ListModule(nn.Module):\n"
                "    def __init__(self, *args):\n        super().__init__()\n        self.items = args\n\n"
                "    def __iter__(self):\n        return iter(self.items)\n\n\n"
                "class UNet(nn.Module):\n    def __init__(self, more_layers=2):\n        super().__init__()\n"
                "        self.more_downs = [nn.Linear(4, 4) for i in range(more_layers)]\n"
                "        self.more_downs = ListModule(*self.more_downs)\n\n    def forward(self, x):\n"
                "        for d in self.more_downs:\n            x = d(x)\n        return x\n\n\n"
                "m = UNet()\nn_params = len(list(m.parameters()))\n", line=17, runtime="silent: n_params == 0"),
        # A loss handed a class-weight tensor holds it as a buffer: `.double()` / `.to()` miss it.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Multi(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.head = nn.Linear(4, 3)\n"
                "        self.losses = {\"ce\": nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 1.0]))}\n\n"
                "    def forward(self, x, y):\n        return self.losses[\"ce\"](self.head(x), y)\n\n\n"
                "m = Multi().double()\nm(torch.randn(2, 4, dtype=torch.float64), torch.tensor([0, 1]))\n",
                line=9, runtime="raises: expected scalar type Double but found Float"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        # The candidates (`self.x = [<call>, ...]`), kept per unchanged top-level statement; only their classes
        # are looked at further. This rule runs on every keystroke.
        candidates = q.surveyed("GS510.container-stores", _container_stores)
        if not candidates:
            return
        registered: dict = {}
        for node in candidates:
            cls = q.enclosing(node, (ast.ClassDef,))
            if cls is None or not q.is_module_class(cls):
                continue
            if id(cls) not in registered:
                registered[id(cls)] = self._registered(q, cls)
            target = node.targets[0]
            if target.attr in registered[id(cls)] or "*" in registered[id(cls)]:
                continue
            modules = [e for e in _elements(node.value) if q.is_module_constructor(e)]
            if modules and not all(_surely_stateless(q, e, set()) for e in modules) \
                    and not _dropped_into_parameters(q, cls, node, target.attr):
                if "register_parameter" in q.attrs:  # rare: asked last, so the keystroke path seldom walks
                    if ("loop", id(cls)) not in registered:
                        registered["loop", id(cls)] = _parameters_registered_in_loop(cls)
                    if target.attr in registered["loop", id(cls)]:
                        continue
                kind = "dict" if isinstance(node.value, (ast.Dict, ast.DictComp)) else "list"
                wrap = "nn.ModuleDict" if kind == "dict" else "nn.ModuleList"
                if all((q.call_name(e) or "").rsplit(".", 1)[-1] in db.PARAMLESS_LOSSES
                       and (q.call_name(e) or "").startswith("torch.nn.") for e in modules):
                    # Losses handed a weight tensor: nothing to train, but a buffer `.to()` and `state_dict` miss.
                    report.add(self, node, f"Losses in a plain {kind} are not registered, so `.to()` and "
                                           f"`state_dict()` miss their weight buffers; use `{wrap}`.")
                    continue
                report.add(self, node, f"Modules in a plain {kind} are not registered, so the optimizer "
                                       f"never trains them; use `{wrap}`.")

    @staticmethod
    def _registered(q, cls: ast.ClassDef) -> set:
        """Attributes handed to something that may register their modules (or a class that registers by hand)."""
        names = set()
        # Locals made from attributes (`module_list = sum(zip(self.layers, elus), ())[:-1]`, FrEIA's i-ResNet):
        # handing the local to a registering call registers the attributes' modules too.
        via: dict = {}
        # Calls whose result becomes an attribute of `self` (`self.vsn = VSN(prescalers=self.prescalers)`): found
        # here rather than by asking each call's parent, which would link the parents of the whole class on every
        # keystroke in it.
        stored: set = set()
        nodes = q.subtree(cls)  # a top-level class's walk is shared across keystrokes (this runs on each)
        for n in nodes:
            if isinstance(n, ast.Assign):
                if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    via.setdefault(n.targets[0].id, set()).update(
                        m.attr for m in walk(n.value) if isinstance(m, ast.Attribute)
                        and isinstance(m.value, ast.Name) and m.value.id == "self")
                if isinstance(n.value, ast.Call) and any(_self_attr(t) for t in n.targets):
                    stored.add(id(n.value))
        for call in nodes:
            if not isinstance(call, ast.Call):
                continue
            fname = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
            if fname in ("add_module", "register_module", "setattr"):
                return {"*"} | _all_self_attrs(cls)
            names |= _handed_to_registering_module(q, call, id(call) in stored)
            if fname not in _REGISTER:
                continue
            for a in args:
                for n in walk(a):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
                        names.add(n.attr)
                    elif isinstance(n, ast.Name) and n.id in via:
                        names |= via[n.id]
        return names


def _self_attr(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == "self" else ""


_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _block_after(fn: ast.AST, stmt: ast.stmt) -> list:
    """The statements that follow `stmt` in its own block (they run whenever it ran, barring an exception)."""
    for n in walk(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block[next(i for i, s in enumerate(block) if s is stmt) + 1:]
    return []


def _dropped_into_parameters(q, cls: ast.ClassDef, store: ast.Assign, attr: str) -> bool:
    """`self.x_proj = (nn.Linear(...), ...)`, then `self.x_proj_weight = nn.Parameter(torch.stack([t.weight for t in
    self.x_proj]))` and `del self.x_proj` later in the same block (VMamba's `SS2D.__init__`): the container is gone
    once the method returns, and what its modules held lives on only in the registered parameters built from it,
    which the optimizer trains. Every read of the attribute in the class must be inside an `nn.Parameter(...)`
    that is stored on `self`, in that method between the store and the `del`; a plain `torch.stack(...)` kept
    instead still uses the unregistered modules' weights (through its graph), and those are never trained."""
    fn = q.enclosing_function(store)
    if fn is None:
        return False
    dels = [s for s in _block_after(fn, store) if isinstance(s, ast.Delete) and any(_self_attr(t) == attr
                                                                                    for t in s.targets)]
    if not dels:
        return False
    end = dels[0].lineno
    wrapped: set = set()
    for n in walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and any(_self_attr(t) for t in n.targets) \
                and q.call_name(n.value) in _PARAMETER:
            wrapped |= {id(m) for m in walk(n.value)}
    return all(id(n) in wrapped and store.lineno < n.lineno < end for n in q.subtree(cls)
               if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _self_attr(n) == attr)


def _handed_to_registering_module(q, call: ast.Call, stored: bool) -> set:
    """Attributes handed whole (`prescalers=self.prescalers`) to a call that makes a submodule which may register
    their modules (darts' TFT hands a plain dict of layers to `_VariableSelectionNetwork`, which copies them into
    an `nn.ModuleDict`). For a module class of this file, its `__init__` tells which parameters reach a
    registering container; a class or factory imported from elsewhere cannot be seen, so the container counts as
    registered when the call's result becomes an attribute (a submodule) of `self` (`stored`)."""
    handed = [(i, None, a.value if isinstance(a, ast.Starred) else a) for i, a in enumerate(call.args)]
    handed += [(None, k.arg, k.value) for k in call.keywords]
    handed = [(i, k, _self_attr(a)) for i, k, a in handed if _self_attr(a)]
    if not handed:
        return set()
    if isinstance(call.func, ast.Name) and call.func.id in q.module_class_names():
        cls = next((n for n in q.tree.body if isinstance(n, ast.ClassDef) and n.name == call.func.id), None)
        init = next((n for n in (cls.body if cls else ()) if isinstance(n, ast.FunctionDef)
                     and n.name == "__init__"), None)
        if init is None:
            return set()
        params = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
        keep = _params_registered(init)
        if any(isinstance(a, ast.Starred) for a in call.args) or init.args.vararg or init.args.kwarg:
            return {attr for _, _, attr in handed} if keep else set()  # positions unknown: any kept parameter
        return {attr for i, k, attr in handed
                if (i is not None and i < len(params) and params[i] in keep) or (k is not None and k in keep)}
    name = q.call_name(call)
    if name is None or name.split(".", 1)[0] in ("torch", "builtins"):
        return set()
    if stored:  # the call's result is assigned to an attribute of `self`
        return {attr for _, _, attr in handed}
    return set()


def _params_registered(init: ast.FunctionDef) -> set:
    """Names of `init`'s parameters whose contents reach a registering container in it: handed to
    `nn.ModuleList(...)`/`add_module(...)`, stored into an item of an attribute made by one
    (`self.prescalers[name] = prescalers[name]`) or appended/updated into it. A loop over a parameter hands on
    its items: `def __init__(self, *args): for module in args: self.add_module(str(idx), module)` (the
    ListModule container of deep-image-prior) registers every module passed to it."""
    containers = {_self_attr(t) for n in walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                  and _call_last(n.value) in _REGISTER for t in n.targets} - {""}
    params = {a.arg for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs}
    params |= {a.arg for a in (init.args.vararg, init.args.kwarg) if a is not None}
    # Loop targets stand for the parameters their loop iterates (`for i, m in enumerate(args)`).
    items: dict = {}
    for loop in walk(init):
        if isinstance(loop, ast.For):
            over = {m.id for m in walk(loop.iter) if isinstance(m, ast.Name) and m.id in params}
            for t in walk(loop.target):
                if isinstance(t, ast.Name) and over:
                    items.setdefault(t.id, set()).update(over)
    reaching = []
    for n in walk(init):
        if isinstance(n, ast.Call):
            last = _call_last(n)
            into = isinstance(n.func, ast.Attribute) and _self_attr(n.func.value) in containers \
                and last in ("append", "extend", "update", "insert", "__setitem__")
            if last in _REGISTER or last in ("add_module", "register_module", "setattr") or into:
                reaching += n.args + [k.value for k in n.keywords]
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and _self_attr(t.value) in containers
                                               for t in n.targets):
            reaching.append(n.value)
    names = {m.id for r in reaching for m in walk(r) if isinstance(m, ast.Name)}
    return (names & params) | {p for n in names for p in items.get(n, ())}


def _parameters_registered_in_loop(cls: ast.ClassDef) -> set:
    """Attributes whose modules' parameters the class registers one by one in a loop over the attribute:
    `for i, m in enumerate(self.layers): self._add(m.parameters(), ...)` with a method of the class that calls
    `register_parameter` (pytorch_RVAE's Highway), or `for p in m.parameters(): self.register_parameter(..., p)`.
    Those parameters are the module's own: `parameters()` yields them, `state_dict` saves them, `.to()` moves them."""
    registering = {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and any(isinstance(c, ast.Call) and _call_last(c) == "register_parameter" for c in ast.walk(f))}
    found: set = set()
    for loop in ast.walk(cls):
        if not isinstance(loop, ast.For):
            continue
        attrs = {_self_attr(n) for n in ast.walk(loop.iter)} - {""}
        if not attrs:
            continue
        items = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}

        def params_of(e: ast.AST) -> bool:  # `<item>.parameters()` / `<item>.named_parameters()`
            return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) \
                and e.func.attr in ("parameters", "named_parameters") \
                and isinstance(e.func.value, ast.Name) and e.func.value.id in items
        each = {n.id for inner in ast.walk(loop) if isinstance(inner, ast.For) and inner is not loop
                and any(params_of(e) for e in ast.walk(inner.iter))
                for n in ast.walk(inner.target) if isinstance(n, ast.Name)}
        for c in ast.walk(loop):
            if not isinstance(c, ast.Call):
                continue
            args = c.args + [k.value for k in c.keywords]
            if _call_last(c) == "register_parameter":
                if any(isinstance(n, ast.Name) and n.id in each for a in args for n in ast.walk(a)):
                    found |= attrs
            elif _self_attr(c.func) in registering and any(params_of(a) for a in args):
                found |= attrs
    return found


def _call_last(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _surely_stateless(q, call: ast.Call, seen: set) -> bool:
    """The module `call` makes surely has no parameters and no buffers: a parameter-free torch.nn layer
    (`nn.AvgPool1d`), a loss built without a tensor (`nn.CrossEntropyLoss(ignore_index=-1)`), or a class of this file whose `__init__` keeps only such layers and plain values
    (Time-Series-Library's `series_decomp`). Left unregistered, such a module loses nothing."""
    name = q.call_name(call) or ""
    last = name.rsplit(".", 1)[-1]
    if name.startswith("torch.nn."):
        if last in db.PARAMLESS_LOSSES:
            # A loss holds a buffer only when handed a tensor (`weight=`, `pos_weight=`, positional or `**kw`).
            return not call.args and all(kw.arg not in (None, "weight", "pos_weight") for kw in call.keywords)
        return last in db.PARAMLESS_MODULES
    if not isinstance(call.func, ast.Name) or call.func.id in seen:
        return False
    seen.add(call.func.id)
    cls = next((n for n in q.tree.body if isinstance(n, ast.ClassDef) and n.name == call.func.id), None)
    init = next((n for n in (cls.body if cls else ()) if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        return False
    for n in walk(init):
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
    return {n.attr for n in walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self"}
