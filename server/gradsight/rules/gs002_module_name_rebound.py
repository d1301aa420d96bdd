from __future__ import annotations

import ast

from ..engine.report import Note
from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid

# Submodules that `from torch import <name>` binds as modules (the rest of `from torch import ...` are functions).
_TORCH_SUBMODULES = {"nn", "optim", "autograd", "linalg", "fft", "special", "distributed", "cuda", "utils",
                     "functional", "init", "data", "func", "amp", "jit", "onnx", "sparse", "distributions"}


def _module_aliases(tree: ast.Module) -> dict:
    """Names that module-level imports bind to modules: `import torch`, `import torch.nn.functional as F`,
    `from torch import nn`. A `from x import f` of anything else may be a function and is left out."""
    names = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                local = alias.asname or alias.name.split(".")[0]
                names[local] = alias.name if alias.asname else local
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.module.split(".")[0] == "torch":
            for alias in stmt.names:
                if alias.name in _TORCH_SUBMODULES:
                    names[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return names


def _stores(scope: ast.AST, name: str) -> list:
    return [n for n in _own_nodes(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]


def _bindings(scope: ast.AST, name: str) -> list:
    """Every node of one scope that binds `name` locally: assignments, and also `import`, `def`, `class` and
    `except ... as` (a function-level `import matplotlib.pyplot as plt` binds the local `plt` like `plt = ...`)."""
    found = []
    for n in _own_nodes(scope):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store):
            found.append(n)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == name for a in n.names):
                found.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)) \
                and getattr(n, "name", None) == name:
            found.append(n)
    return found


def _loads(scope: ast.AST, name: str) -> list:
    return [n for n in _own_nodes(scope) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_nodes(scope: ast.AST):
    """The nodes of one scope, without those of nested functions, lambdas, classes and comprehensions (their names
    are theirs: `[(js, os) for js, os in pairs]` binds its own `os`). A comprehension's first iterable is evaluated
    in the enclosing scope, and a `:=` inside it binds there too."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, _COMPREHENSIONS):
            todo.append(node.generators[0].iter)
            todo.extend(n.target for n in ast.walk(node) if isinstance(n, ast.NamedExpr))
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _constructed(value) -> bool:
    """Whether `value` is a call of a class by its capitalised name (`torch.optim.Adam(...)`, `nn.Linear(...)`)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return last[:1].isupper()


def _pos(node: ast.AST) -> tuple:
    return node.lineno, node.col_offset


class ModuleNameRebound(Rule):
    code = "GS002"
    name = "module-name-rebound"
    severity = Severity.ERROR
    summary = "An assignment rebinds an imported module's name (`torch = ...`, `F = ...`), so later uses of it fail."
    events = (FileEvent,)
    what_it_does = ("Flags an assignment to a name that a module-level import binds to a module (`torch`, `nn`, "
                    "`F`, `np`...): inside a function when the function also reads that name before the "
                    "assignment, and at module level when a torch module (`torch`, `nn`, `F`) is used "
                    "again afterwards as a module (`F.relu(...)`).")
    why_bad = ("Inside a function, any assignment makes the name local to the whole function, so every earlier "
               "`torch.xxx` in it raises `UnboundLocalError: cannot access local variable 'torch' where it is not "
               "associated with a value`. At module level the name now holds the assigned value (usually a "
               "tensor): the next `F.relu(x)` calls `Tensor.relu` instead and raises, or silently computes "
               "something else. This is what an in-place rewrite like `torch = torch.relu(t)` (for "
               "`torch.relu_(t)`) leaves behind.")
    example = "def act(t):\n    torch = torch.relu(t)\n    return torch"
    use_instead = "def act(t):\n    t = torch.relu(t)\n    return t"
    references = ("https://docs.python.org/3/faq/programming.html#why-am-i-getting-an-unboundlocalerror-when-the-"
                  "variable-has-a-value",)
    _fn = ("import torch\nimport torch.nn.functional as F\n\n\ndef step(w):\n    t = torch.sigmoid(w) - 0.5\n"
           "    {line}\n    return t * 2\n\n\nw = torch.randn(4, requires_grad=True)\nstep(w).sum().backward()\n")
    _top = ("import torch\nimport torch.nn.functional as F\n\nw = torch.randn(4, requires_grad=True)\n"
            "t = torch.sigmoid(w) - 0.5\n{line}\ny = F.relu(t * 2)\n")
    valid = (
        # A comprehension's target is the comprehension's own name (ParlAI's `(js, os) for js, os in pairs`).
        Valid("import os\n\n\ndef pairs(items):\n    here = os.getcwd()\n"
              "    return [(js, os) for js, os in items if js != here]\n\n\nprint(pairs([('a', 'b')]))\n"),
        Valid(_fn.format(line="t = torch.relu(t)")),
        Valid(_top.format(line="t = F.relu(t)")),
        # A global declaration means the function rebinds the module-level name on purpose; no local is made.
        Valid("import numpy as np\n\n\ndef use_torch():\n    global np\n    import torch as np\n    return np.zeros(2)\n"
              "\n\nz = use_torch()\n"),
        # Rebinding after the last use of the module is legal Python, if odd.
        Valid("import torch\n\nw = torch.randn(3, requires_grad=True)\nloss = (w * 2).sum()\nloss.backward()\n"
              "torch = None\n"),
        # The name now holds an optimizer made from the module's class; `optim.step()` is its method.
        Valid("import torch\nimport torch.optim as optim\n\nw = torch.randn(3, requires_grad=True)\n"
              "optim = torch.optim.SGD([w], lr=0.1)\n(w * 2).sum().backward()\noptim.step()\noptim.zero_grad()\n"),
        # A local import binds the name before it is read; later assignments rebind that local (DI-engine's
        # `import matplotlib.pyplot as plt` then `plt.figure(...)` and `_, plt = tester(plt)`).
        Valid("import json as plt\n\n\ndef tester(p):\n    return 1, p\n\n\ndef show(flag):\n"
              "    import os.path as plt\n    if flag:\n        plt.join('a', 'b')\n        r, plt = tester(plt)\n"
              "    return plt\n\n\nshow(True)\n"),
        # A parameter called like a module (e.g. `F` as an argument) is the function's own name.
        Valid("import torch\nimport torch.nn.functional as F\n\n\ndef act(x, F=F):\n    return F.relu(x)\n\n\n"
              "y = act(torch.randn(3))\n"),
        # Each arm of an `if` rebinds the module alias as its own loop's batch and reads it there
        # (omegafragger/DDU's `for data, _ in pool_loader:`; bench/fresh35-false/06).
        Valid('import torch\nimport torch.utils.data as data\n\nds = data.TensorDataset(torch.randn(8, 2), torch.zeros(8))\nloader = data.DataLoader(ds, batch_size=4)\nmodel = torch.nn.Linear(2, 3)\nfor flag in ["ensemble", "other"]:\n    if flag == "ensemble":\n        with torch.no_grad():\n            for data, _ in loader:\n                data = data.to("cpu")\n                model(data)\n    else:\n        logits = []\n        with torch.no_grad():\n            for data, _ in loader:\n                data = data.to("cpu")\n                logits.append(model(data))\n'),
    )
    invalid = (
        # The look-alike: the module is used again after the loops, where `data` is the last batch.
        Invalid('import torch\nimport torch.utils.data as data\n\nds = data.TensorDataset(torch.randn(8, 2), torch.zeros(8))\nloader = data.DataLoader(ds, batch_size=4)\nmodel = torch.nn.Linear(2, 3)\nfor flag in ["ensemble", "other"]:\n    if flag == "ensemble":\n        with torch.no_grad():\n            for data, _ in loader:\n                data = data.to("cpu")\n                model(data)\n    else:\n        logits = []\n        with torch.no_grad():\n            for data, _ in loader:\n                data = data.to("cpu")\n                logits.append(model(data))\nloader = data.DataLoader(ds, batch_size=2)\n', line=10,
                runtime="raises: has no attribute 'DataLoader'"),
        Invalid(_fn.format(line="torch = torch.relu(t)"), line=7,
                runtime="raises: cannot access local variable 'torch'"),
        Invalid(_fn.format(line="F = F.relu(t)"), line=7, runtime="raises: cannot access local variable 'F'"),
        Invalid(_top.format(line="F = F.relu(t)"), line=6, runtime="raises: takes no arguments"),
        Invalid("import torch\nimport torch.optim as optim\n\nw = torch.randn(3, requires_grad=True)\n"
                "optim = optim.SGD([w], lr=0.1)\nsecond = optim.SGD([w], lr=0.2)\n", line=5,
                runtime="raises: has no attribute 'SGD'"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        aliases = _module_aliases(q.tree)
        if not aliases:
            return
        # The file's stored names (the shared index, kept per unchanged statement) tell whether an alias is rebound
        # at all; most files rebind none, and then nothing else is walked (this rule runs on every keystroke).
        if not (q.name_stores & set(aliases)):
            return
        rebound = [n for n in q.nodes() if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id in aliases]
        if not rebound:
            return
        scopes = []
        for n in rebound:
            scope = q.enclosing(n, (ast.FunctionDef, ast.AsyncFunctionDef)) or q.tree
            if all(scope is not s for s in scopes):
                scopes.append(scope)
        for scope in scopes:
            declared = {name for n in _own_nodes(scope) if isinstance(n, (ast.Global, ast.Nonlocal))
                        for name in n.names}
            params = set()
            if scope is not q.tree:
                a = scope.args
                params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p}
            for name in aliases:
                if name in declared or name in params:
                    continue
                stores = [s for s in _stores(scope, name) if not self._is_import(q, s)]
                if not stores:
                    continue
                first = min(stores, key=_pos)
                stmt = q.statement(first)
                if scope is q.tree:
                    # A project module rebound at top level (`import model` then `model = model.Net()`) is a
                    # common deliberate idiom; torch's modules are never meant to be replaced by a value.
                    if aliases[name].split(".")[0] == "torch":
                        self._module_level(report, name, stmt, scope)
                else:
                    self._in_function(report, name, stmt, scope)

    def _in_function(self, report, name: str, stmt: ast.stmt, scope) -> None:
        # The assigned value is evaluated before the name is bound, so a read inside the same statement
        # (`torch = torch.relu(t)`) comes first too. A read after an earlier binding of another kind (a local
        # `import matplotlib.pyplot as plt` before `plt.figure(...)` and `_, plt = f(plt)`) reads that binding.
        bound = [b for b in _bindings(scope, name) if _pos(b) < _pos(stmt)]
        limit = min([_pos(stmt)] + [_pos(b) for b in bound])
        early = [n for n in _loads(scope, name)
                 if _pos(n) < limit or (not bound and self._inside(n, getattr(stmt, "value", None)))]
        if not early:
            return
        read = min(early, key=_pos)
        report.add(self, stmt, f"Assigning `{name}` makes it local to the whole function, so `{name}` at line "
                               f"{read.lineno} raises UnboundLocalError.",
                   related=[Note(read.lineno, read.col_offset, "raises UnboundLocalError here")])

    def _module_level(self, report, name: str, stmt: ast.stmt, scope) -> None:
        later = [a for a in self._attribute_reads(scope, name) if _pos(a) > (stmt.end_lineno, stmt.end_col_offset)]
        # A read inside a `for` whose own target binds the name reads that loop's value (DDU's `for data, _ in
        # pool_loader:` in each arm of an `if`; bench/fresh35-false/06).
        loops = [n for n in ast.walk(scope) if isinstance(n, (ast.For, ast.AsyncFor))
                 and any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(n.target))]
        later = [a for a in later if not any(_pos(loop) < _pos(a) and (a.lineno, a.col_offset) <= (
            loop.end_lineno, loop.end_col_offset) for loop in loops)]
        if _constructed(getattr(stmt, "value", None)):
            # `optim = torch.optim.Adam(...)` then `optim.step()`: the name now holds an object made from one of
            # the module's classes, and lower-case attributes are that object's methods, used on purpose. Only
            # a class read afterwards (`optim.SGD(...)`) still means the module.
            later = [a for a in later if a.attr[:1].isupper()]
        if not later:
            return
        use = min(later, key=_pos).value
        report.add(self, stmt, f"`{name}` no longer names the module, so `{name}.` at line {use.lineno} uses the "
                               "assigned value instead.",
                   severity=Severity.WARNING,
                   related=[Note(use.lineno, use.col_offset, f"`{name}` used as the module here")])

    @staticmethod
    def _attribute_reads(scope, name: str) -> list:
        """`name.attr` reads in this scope and in the functions it defines (which see the rebound global)."""
        return [n for n in ast.walk(scope) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == name]

    @staticmethod
    def _inside(node: ast.AST, tree) -> bool:
        return tree is not None and any(n is node for n in ast.walk(tree))

    @staticmethod
    def _is_import(q, store: ast.Name) -> bool:
        return isinstance(q.statement(store), (ast.Import, ast.ImportFrom))
