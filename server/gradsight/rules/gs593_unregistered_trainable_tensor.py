"""GS593: a module's `__init__` stores a plain tensor that requires grad as an attribute (not an `nn.Parameter`)."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.astwalk import walk
from ..engine.query import FileEvent
from ..findings import Severity
from ._calls import TORCH_OPTIMIZERS, call_word
from .base import Invalid, Rule, Valid

_FACTORIES = frozenset(f"torch.{n}" for n in ("zeros", "ones", "randn", "rand", "empty", "full", "tensor", "Tensor",
                                               "FloatTensor", "zeros_like", "ones_like", "randn_like", "eye",
                                               "normal", "linspace", "arange"))
# Methods that keep a plain tensor a plain tensor (device and dtype moves, in-place initialisation).
_PLAIN = frozenset({"to", "cuda", "float", "double", "half", "uniform_", "normal_", "fill_", "zero_", "clone",
                    "requires_grad_"})


def _classes(top) -> list:
    """(class, its `__init__`) for the statement's classes whose `__init__` asks for a gradient somewhere
    (`requires_grad=True`, `.requires_grad = True`, `.requires_grad_()`): the only ones `_check_init` can flag. By
    syntax alone, so each statement's answer is kept while typing elsewhere (this rule runs on every keystroke)."""
    lines = set()
    for c in top.calls:  # plain loops: this runs again for the statement each keystroke edits
        if type(c.func) is ast.Attribute and c.func.attr == "requires_grad_":
            lines.add(c.lineno)
            continue
        for k in c.keywords:
            if k.arg == "requires_grad":
                lines.add(c.lineno)
                break
    for a in top.assigns:
        for t in a.targets:
            if type(t) is ast.Attribute and t.attr == "requires_grad":
                lines.add(a.lineno)
                break
    if not lines:
        return []
    out = []
    for cls in top.classes:
        init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is not None and any(init.lineno <= n <= (init.end_lineno or init.lineno) for n in lines):
            out.append((cls, init))
    return out


def _self_attr(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _factory_call(q, value: ast.AST) -> Optional[ast.Call]:
    """`torch.zeros(...)`, possibly followed by `.to(dev)`, `.cuda()`, `.uniform_(...)`: the factory call."""
    while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _PLAIN
           and isinstance(value.func.value, ast.Call)):
        value = value.func.value
    if isinstance(value, ast.Call) and q.call_name(value) in _FACTORIES:
        return value
    return None


def _requires_grad_kw(call: ast.Call) -> bool:
    return any(kw.arg == "requires_grad" and isinstance(kw.value, ast.Constant) and kw.value.value is True
               for kw in call.keywords)


class UnregisteredTrainableTensor(Rule):
    code = "GS593"
    name = "unregistered-trainable-tensor"
    severity = Severity.WARNING
    summary = ("A module's `__init__` keeps a plain tensor that requires grad as an attribute: it is not a parameter, "
               "so `parameters()`, `state_dict()` and `.to()` leave it out.")
    events = (FileEvent,)
    what_it_does = ("Flags `self.w = torch.zeros(...)` in an `nn.Module`'s `__init__` made to require grad (`self.w."
                    "requires_grad = True`, `requires_grad_()`, or `requires_grad=True` in the factory), when the "
                    "class reads it in another method (`forward`), never wraps it in `nn.Parameter`/"
                    "`register_parameter`, no other method rebinds it and no optimizer of the file names it.")
    why_bad = ("Only `nn.Parameter` attributes (and registered ones) are parameters. A plain tensor that requires "
               "grad still gets a `.grad` from backward, but `model.parameters()` omits it, so an optimizer built "
               "from `model.parameters()` never updates it: it keeps its initial value for the whole training. "
               "`state_dict()` does not save it and `model.to(device)` does not move it either.")
    example = ("class Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        self.w = torch.zeros(16)\n        self.w.requires_grad = True")
    use_instead = ("class Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.w = nn.Parameter(torch.zeros(16))")
    fix_safety = "There is no automatic fix: wrap the tensor in `nn.Parameter(...)`."
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html",)

    _TAIL = ("    def forward(self, x):\n        return self.lin(x) * (1 + self.w)\n\n\n"
             "cell = Cell()\nopt = torch.optim.SGD(cell.parameters(), lr=0.1)\n"
             "cell(torch.ones(1, 2)).sum().backward()\nopt.step()\n")
    _HEAD = ("import torch\nimport torch.nn as nn\n\n\nclass Cell(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.lin = nn.Linear(2, 2)\n")
    _NEVER = "silent: 'w' not in dict(cell.named_parameters()) and cell.w.grad is not None and cell.w.abs().sum() == 0"
    valid = (
        Valid(_HEAD + "        self.w = nn.Parameter(torch.zeros(2))\n\n" + _TAIL),
        # A constant (no grad) kept as a plain attribute.
        Valid(_HEAD + "        self.w = torch.zeros(2)\n\n" + _TAIL),
        # Trained on purpose: the optimizer names it.
        Valid(_HEAD + "        self.w = torch.zeros(2, requires_grad=True)\n\n"
              "    def forward(self, x):\n        return self.lin(x) * (1 + self.w)\n\n\n"
              "cell = Cell()\nopt = torch.optim.SGD(list(cell.parameters()) + [cell.w], lr=0.1)\n"
              "cell(torch.ones(1, 2)).sum().backward()\nopt.step()\n"),
    )
    invalid = (
        Invalid(_HEAD + "        self.w = torch.zeros(2)\n        self.w.requires_grad = True\n\n" + _TAIL,
                line=9, runtime=_NEVER),
        Invalid(_HEAD + "        self.w = torch.zeros(2, requires_grad=True)\n\n" + _TAIL, line=9, runtime=_NEVER),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "requires_grad" not in q.attrs and "requires_grad_" not in q.attrs and "requires_grad" not in \
                report.source.text:
            return  # the keyword form (`torch.zeros(2, requires_grad=True)`) is not an attribute
        for cls, init in q.surveyed("GS593.classes", _classes):
            if q.is_module_class(cls):
                self._check_init(q, report, cls, init)

    def _check_init(self, q, report, cls: ast.ClassDef, init: ast.FunctionDef) -> None:
        made, flagged = {}, set()
        for node in walk(init):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                name = _self_attr(node.targets[0])
                call = _factory_call(q, node.value) if name is not None else None
                if call is not None:
                    made[name] = node
                    if _requires_grad_kw(call) or "requires_grad_" in ast.unparse(node.value):
                        flagged.add(name)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and node.targets[0].attr == "requires_grad" and isinstance(node.value, ast.Constant) \
                    and node.value.value is True:
                name = _self_attr(node.targets[0].value)
                if name is not None:
                    flagged.add(name)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "requires_grad_" and not (node.args and isinstance(node.args[0], ast.Constant)
                                                                   and node.args[0].value is False):
                name = _self_attr(node.func.value)
                if name is not None:
                    flagged.add(name)
        candidates = [n for n in flagged if n in made]
        if not candidates:
            return
        # Attributes an optimizer of the file is handed by name (`SGD(list(m.parameters()) + [m.w])`).
        handed = {n.attr for call in q.calls() if call_word(call.func) in TORCH_OPTIMIZERS
                  for n in walk(call) if isinstance(n, ast.Attribute)}
        for name in sorted(candidates, key=lambda n: made[n].lineno):
            # Wrapped or registered somewhere, or named in an optimizer's arguments: trained on purpose.
            if any(isinstance(n, ast.Call) and (q.call_name(n) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
                                                or isinstance(n.func, ast.Attribute)
                                                and n.func.attr in ("register_parameter", "register_buffer"))
                   and any(_self_attr(a) == name for a in n.args) for n in walk(cls)):
                continue
            if name in handed:
                continue
            # Read by no other method (a class that only shows how to initialise weights): nothing trains through it.
            others = [fn for fn in cls.body if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn is not init]
            if not any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and _self_attr(n) == name
                       for fn in others for n in walk(fn)):
                continue
            # Rebound by another method (`reset_meta`: meta-weights made afresh for each step and differentiated
            # with `autograd.grad`): state the class manages itself, not a parameter it forgot to register.
            if any(isinstance(n, ast.Assign) and any(_self_attr(t) == name for t in n.targets)
                   for fn in cls.body if isinstance(fn, ast.FunctionDef) and fn is not init for n in walk(fn)):
                continue
            report.add(self, made[name],
                       "A plain tensor attribute that requires grad is not a parameter: `parameters()` and "
                       f"`state_dict()` omit it. Wrap `self.{name}` in `nn.Parameter(...)`; an optimizer over "
                       "`parameters()` never trains it.")
