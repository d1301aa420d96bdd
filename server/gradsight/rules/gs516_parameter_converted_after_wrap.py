from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import edit_for, make_fix
from ..findings import Applicability, Severity
from ._fixes import cst
from .base import Invalid, Rule, Valid

_PARAMETER = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
# Tensor methods that return a new, plain tensor (with a grad_fn) whenever they change the device or dtype.
_CONVERSIONS = {"to", "cuda", "double", "half", "float", "bfloat16", "type"}
_METHOD_DTYPE = {"double": "float64", "half": "float16", "float": "float32", "bfloat16": "bfloat16"}
_DTYPE_ALIASES = {
    "float64": "float64", "double": "float64", "float32": "float32", "float": "float32", "float16": "float16",
    "half": "float16", "bfloat16": "bfloat16", "int64": "int64", "long": "int64", "DoubleTensor": "float64",
    "FloatTensor": "float32", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16", "LongTensor": "int64",
}
# Factories that make a new tensor on the CPU unless given a `device=`, with the dtype they make without a
# `dtype=` (None: it depends on the data).
_CPU_FACTORIES = {f"torch.{n}": "float32" for n in ("randn", "rand", "zeros", "ones", "empty", "full", "Tensor",
                                                     "FloatTensor", "normal", "linspace", "eye")}
_CPU_FACTORIES.update({"torch.tensor": None, "torch.as_tensor": None, "torch.from_numpy": None,
                       "torch.arange": None, "torch.DoubleTensor": "float64", "torch.LongTensor": "int64",
                       "torch.randint": "int64", "torch.randperm": "int64"})
# Methods that keep a tensor's device and dtype (`torch.empty(3).uniform_(-1, 1)`).
_KEEPING = {"uniform_", "normal_", "fill_", "zero_", "clone", "detach", "contiguous", "view", "reshape", "t",
            "transpose", "permute", "unsqueeze", "squeeze", "flatten", "expand", "repeat", "mul", "mul_", "add",
            "add_", "div", "div_", "sub", "sub_", "abs", "log", "exp", "sqrt", "requires_grad_"}


def _dtype_of(q, node: ast.AST) -> Optional[str]:
    """`torch.float64` / `torch.double` / `torch.DoubleTensor` -> "float64"; None when not a known dtype."""
    name = q.qualname(node) or ""
    if name.startswith("torch.") and name.count(".") == 1:
        return _DTYPE_ALIASES.get(name[len("torch."):])
    return None


def _is_cpu(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and node.value == "cpu":
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "device" \
        and len(node.args) == 1 and not node.keywords and _is_cpu(node.args[0])


def _origin(q, node: ast.AST) -> tuple:
    """(known to be on the CPU, dtype or None) of the tensor an expression makes, as far as its shape says:
    `torch.randn(3)` is a float32 CPU tensor, `torch.randn(3, device=dev)` and a name handed in are unknown."""
    if isinstance(node, ast.UnaryOp):
        return _origin(q, node.operand)
    if isinstance(node, ast.BinOp):
        sides = [_origin(q, n) for n in (node.left, node.right) if not isinstance(n, ast.Constant)]
        if not sides:
            return False, None
        return all(cpu for cpu, _ in sides), sides[0][1] if all(d == sides[0][1] for _, d in sides) else None
    if not isinstance(node, ast.Call):
        return False, None
    if isinstance(node.func, ast.Attribute) and node.func.attr in _CONVERSIONS:
        cpu, dtype = _origin(q, node.func.value)
        return _converted(q, node, cpu, dtype)
    if isinstance(node.func, ast.Attribute) and node.func.attr in _KEEPING:
        return _origin(q, node.func.value)
    name = q.call_name(node)
    if name not in _CPU_FACTORIES:
        return False, None
    device = next((kw.value for kw in node.keywords if kw.arg == "device"), None)
    dtype = next((kw.value for kw in node.keywords if kw.arg == "dtype"), None)
    return device is None or _is_cpu(device), _dtype_of(q, dtype) if dtype is not None else _CPU_FACTORIES[name]


def _converted(q, step: ast.Call, cpu: bool, dtype: Optional[str]) -> tuple:
    """(on the CPU, dtype) after one conversion call, from (on the CPU, dtype) before it."""
    method = step.func.attr
    if method in _METHOD_DTYPE:
        return cpu, _METHOD_DTYPE[method]
    if method == "cuda":
        return False, dtype
    args = list(step.args) + [kw.value for kw in step.keywords if kw.arg in ("device", "dtype", "other", None)]
    for arg in args:
        target = _dtype_of(q, arg)
        if target is not None:
            dtype = target
        elif not _is_cpu(arg):
            cpu, dtype = False, None  # a device, a tensor or `**kwargs`: where it goes is unknown
    return cpu, dtype


def _changes(q, step: ast.Call, cpu: bool, dtype: Optional[str]) -> bool:
    """Does this conversion certainly or, for a device held in a variable, by its intent return a new tensor?

    Only for a tensor the code shows to be on the CPU (a fresh `torch.randn(...)`): a `.to(device)` of a tensor
    of unknown origin may well return the Parameter itself. `.type()` without arguments returns a string and
    `.to()` without arguments the tensor itself: neither is this rule's concern."""
    method = step.func.attr
    if method in _METHOD_DTYPE:
        return dtype is not None and _METHOD_DTYPE[method] != dtype
    if method == "cuda":
        return cpu
    args = list(step.args) + [kw.value for kw in step.keywords if kw.arg in ("device", "dtype", "other", None)]
    for arg in args:
        target = _dtype_of(q, arg)
        if target is not None:
            if dtype is not None and target != dtype:
                return True
        elif not _is_cpu(arg) and cpu:
            return True
    return False


def _converted_parameter(q, value: ast.AST):
    """`nn.Parameter(x).to(dev)` (also chained: `.to(dev).double()`) that really converts -> (the Parameter call,
    the conversion calls from the innermost), or None."""
    steps = []
    node = value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CONVERSIONS:
        steps.append(node)
        node = node.func.value
    if not steps or not isinstance(node, ast.Call) or q.call_name(node) not in _PARAMETER:
        return None
    steps.reverse()
    if any(s.func.attr == "type" and not s.args and not s.keywords for s in steps):
        return None
    data = node.args[0] if node.args else next((kw.value for kw in node.keywords if kw.arg == "data"), None)
    if data is None:
        return None
    cpu, dtype = _origin(q, data)
    for step in steps:
        if _changes(q, step, cpu, dtype):
            return node, steps
        cpu, dtype = _converted(q, step, cpu, dtype)
    return None


def _moved_inside(source, value: ast.AST) -> Optional[str]:
    """`nn.Parameter(torch.randn(3)).to(dev)` -> `nn.Parameter(torch.randn(3).to(dev))`."""
    try:
        outer = cst.parse_expression(source.segment(value))
    except Exception:  # libcst raises ParserSyntaxError on a segment it cannot read alone
        return None
    steps = []
    node = outer
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in _CONVERSIONS:
        steps.append(node)
        node = node.func.value
    if not steps or not isinstance(node, cst.Call):
        return None
    args = list(node.args)
    slot = next((i for i, a in enumerate(args) if a.keyword is None and not a.star), None)
    if slot is None:
        slot = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "data"), None)
    if slot is None:
        return None
    data = args[slot].value
    if not isinstance(data, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not data.lpar:
        data = data.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for step in reversed(steps):
        data = step.with_changes(func=step.func.with_changes(value=data))
    args[slot] = args[slot].with_changes(value=data)
    return cst.Module([]).code_for_node(node.with_changes(args=args))


def _conversion_assigns(top) -> list:
    """A top-level statement's assignments whose value ends in a conversion call (`... .to(dev)`)."""
    return [node for node in top.assigns if isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _CONVERSIONS]


class ParameterConvertedAfterWrap(Rule):
    code = "GS516"
    name = "parameter-converted-after-wrap"
    severity = Severity.WARNING
    summary = ("`self.w = nn.Parameter(x).to(device)` stores a plain tensor: the module never registers, trains "
               "or saves it.")
    events = (FileEvent,)
    what_it_does = ("Flags an attribute of `self` in a method of an `nn.Module` subclass assigned "
                    "`nn.Parameter(...)` followed by `.to(...)`, `.cuda()`, `.double()`, `.half()`, `.float()`, "
                    "`.bfloat16()` or `.type(...)` (also through a local variable stored on `self`), when the "
                    "wrapped tensor is one the code shows to be made on the CPU (`torch.randn(...)`, "
                    "`torch.zeros(...)`, `torch.tensor(...)`) and the call moves it to a device held in a variable "
                    "or converts it to another dtype. A conversion that changes nothing (`.float()` of "
                    "`torch.randn(...)`, `.to('cpu')`) and a tensor of unknown origin (`nn.Parameter(init).to(device)` "
                    "with `init` handed in, which may already be there) are not flagged.")
    why_bad = ("When the call really changes the device or the dtype it returns a new tensor computed from the "
               "Parameter, a plain `Tensor` with a `grad_fn`, not a `Parameter`. `nn.Module.__setattr__` stores it "
               "as an ordinary attribute: it is missing from `parameters()`, so the optimizer never updates it, "
               "from `state_dict()`, so checkpoints lose it, and `model.to(...)` does not move it. Nothing raises; "
               "with `.to(device)` the code even works on a CPU (where `.to('cpu')` returns the Parameter itself) "
               "and stops training the weight only on the GPU.")
    example = "self.weight = nn.Parameter(torch.randn(4, 4)).to(device)"
    use_instead = ("self.weight = nn.Parameter(torch.randn(4, 4).to(device))\n"
                   "# or: self.weight = nn.Parameter(torch.randn(4, 4)), then model.to(device)")
    fix_safety = ("Unsafe: moving the conversion inside (`nn.Parameter(x.to(device))`) keeps the initial values "
                  "and makes the tensor a registered parameter, which is the intent, but the program then behaves "
                  "differently: the optimizer trains the weight, `state_dict()` holds a new key (loading an older "
                  "checkpoint with `strict=True` fails) and `model.to(...)` moves it.")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.parameter.Parameter.html",
                  "https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to",
                  "https://github.com/pytorch/pytorch/issues/17484",
                  "https://github.com/shenweichen/DeepCTR-Torch/issues/87",
                  "https://github.com/davidmrau/mixture-of-experts/issues/12")

    _train = ("opt = torch.optim.SGD(m.parameters(), lr=0.1)\nbefore = m.weight.detach().clone()\n"
              "m(torch.randn(2, 3, dtype=torch.float64)).sum().backward()\nopt.step()\n")
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.weight = nn.Parameter(torch.randn(3)).double()\n"
                "        self.bias = nn.Parameter(torch.zeros(3, dtype=torch.float64))\n\n"
                "    def forward(self, x):\n        return x * self.weight + self.bias\n\n\nm = Scale()\n" + _train,
                line=8, runtime="silent: torch.equal(before, m.weight) and 'weight' not in m.state_dict()",
                fixed="import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.weight = nn.Parameter(torch.randn(3).double())\n"
                      "        self.bias = nn.Parameter(torch.zeros(3, dtype=torch.float64))\n\n"
                      "    def forward(self, x):\n        return x * self.weight + self.bias\n\n\nm = Scale()\n" + _train),
        # DeepCTR-Torch's shape, with a dtype so that the conversion is real on a CPU too.
        Invalid("import torch\nfrom torch import nn\n\n\nclass FM(nn.Module):\n"
                "    def __init__(self, dim, device='cpu', dtype=torch.float64):\n        super().__init__()\n"
                "        self.weight = nn.Parameter(torch.zeros(dim, 1), requires_grad=True).to(device, dtype)\n"
                "        self.lin = nn.Linear(dim, 1).to(device, dtype)\n\n"
                "    def forward(self, x):\n        return self.lin(x) + x @ self.weight\n\n\nm = FM(3)\n" + _train,
                line=8, runtime="silent: torch.equal(before, m.weight)",
                fixed="import torch\nfrom torch import nn\n\n\nclass FM(nn.Module):\n"
                      "    def __init__(self, dim, device='cpu', dtype=torch.float64):\n        super().__init__()\n"
                      "        self.weight = nn.Parameter(torch.zeros(dim, 1).to(device, dtype), requires_grad=True)\n"
                      "        self.lin = nn.Linear(dim, 1).to(device, dtype)\n\n"
                      "    def forward(self, x):\n        return self.lin(x) + x @ self.weight\n\n\nm = FM(3)\n"
                      + _train),
        # `from torch.nn import Parameter`, a subclass of a module class of the file, a method other than
        # `__init__`, and the value passing through a local variable first.
        Invalid("import torch\nfrom torch.nn import Module, Parameter\n\n\nclass Base(Module):\n    pass\n\n\n"
                "class Head(Base):\n    def __init__(self):\n        super().__init__()\n        self.bias = Parameter(torch.zeros(3))\n        self.build()\n\n"
                "    def build(self):\n        w = Parameter(torch.ones(3)).to(torch.float64)\n        self.weight = w\n\n"
                "    def forward(self, x):\n        return x * self.weight + self.bias\n\n\nm = Head()\n" + _train,
                line=16, runtime="silent: 'weight' not in dict(m.named_parameters()) and torch.equal(before, m.weight)",
                fixed="import torch\nfrom torch.nn import Module, Parameter\n\n\nclass Base(Module):\n    pass\n\n\n"
                      "class Head(Base):\n    def __init__(self):\n        super().__init__()\n        self.bias = Parameter(torch.zeros(3))\n        self.build()\n\n"
                      "    def build(self):\n        w = Parameter(torch.ones(3).to(torch.float64))\n"
                      "        self.weight = w\n\n"
                      "    def forward(self, x):\n        return x * self.weight + self.bias\n\n\nm = Head()\n" + _train),
        Invalid("import torch\n\n\nclass Gate(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                "        self.bias = torch.nn.parameter.Parameter(torch.rand(2) * 0.1).half()\n\n\n"
                "n = len(list(Gate().parameters()))\n", line=7, runtime="silent: n == 0",
                fixed="import torch\n\n\nclass Gate(torch.nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n"
                      "        self.bias = torch.nn.parameter.Parameter((torch.rand(2) * 0.1).half())\n\n\n"
                      "n = len(list(Gate().parameters()))\n"),
        # A frozen statistic (marlbenchmark/on-policy's ValueNorm had this shape with `.to(**self.tpdv)`): nothing is
        # to be trained, but the checkpoint loses it.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Norm(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.mean = nn.Parameter(torch.zeros(3), requires_grad=False).to(torch.float64)\n\n\n"
                "keys = list(Norm().state_dict())\n", line=8, runtime="silent: keys == []",
                fixed="import torch\nimport torch.nn as nn\n\n\nclass Norm(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n"
                      "        self.mean = nn.Parameter(torch.zeros(3).to(torch.float64), requires_grad=False)\n\n\n"
                      "keys = list(Norm().state_dict())\n"),
    )
    _scale = "import torch\nimport torch.nn as nn\n\n\nclass Scale(nn.Module):\n    def __init__(self):\n" \
             "        super().__init__()\n"
    valid = (
        Valid(_scale + "        self.weight = nn.Parameter(torch.randn(3).double())\n\n"
              "    def forward(self, x):\n        return x * self.weight\n\n\nm = Scale()\n"
              "assert 'weight' in dict(m.named_parameters())\n"),
        Valid(_scale + "        self.weight = nn.Parameter(torch.randn(3))\n\n"
              "    def forward(self, x):\n        return x * self.weight\n\n\nm = Scale()\nm.to(torch.float64)\n"
              "m.double()\nassert 'weight' in dict(m.named_parameters())\n"),
        Valid(_scale + "        self.weight = nn.Parameter(torch.randn(3))\n        self.to(torch.float64)\n\n\n"
              "assert 'weight' in dict(Scale().named_parameters())\n"),
        # A Parameter converted into a local used only for computation: correct and common.
        Valid(_scale + "        self.weight = nn.Parameter(torch.randn(3))\n\n    def forward(self, x):\n"
              "        w = self.weight.to(x.dtype)\n        self.last = x.double()\n        return x * w\n\n\n"
              "out = Scale()(torch.randn(3, dtype=torch.float64))\n"),
        Valid(_scale + "        self.register_buffer('scale', torch.ones(3).double())\n"
              "        self.weight = nn.Parameter(torch.randn(3))\n"
              "        self.weight.data = self.weight.data.to(torch.float64)\n\n\n"
              "assert Scale().weight.dtype == torch.float64\n"),
        # Not a module: nothing registers attributes there anyway.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Holder:\n    def __init__(self):\n"
              "        self.weight = nn.Parameter(torch.randn(3)).double()\n\n\nh = Holder()\n"),
        # Already on the device: the outer `.to(device)` returns the Parameter itself (Graph-WaveNet's shape). A
        # tensor handed in may be there already too.
        Valid(_scale.replace("(self):", "(self, init=None, device='cpu'):") +
              "        self.weight = nn.Parameter(torch.randn(3).to(device), requires_grad=True).to(device)\n"
              "        if init is not None:\n            self.bias = nn.Parameter(init).to(device)\n\n\n"
              "assert len(list(Scale(torch.zeros(3)).parameters())) == 2\n"),
        # Conversions the code shows to change nothing return the Parameter itself.
        Valid(_scale + "        self.weight = nn.Parameter(torch.randn(3)).float()\n"
              "        self.bias = nn.Parameter(torch.zeros(3)).to('cpu')\n"
              "        self.gain = nn.Parameter(torch.ones(3, dtype=torch.float64)).double()\n\n\n"
              "assert len(list(Scale().parameters())) == 3\n"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if not (_CONVERSIONS & q.attrs) or not q.module_class_names():
            return  # no conversion method or no module class in the file (this rule runs on every keystroke)
        for node in q.surveyed("GS516.conversions", _conversion_assigns):
            found = _converted_parameter(q, node.value)
            if found is None:
                continue
            attr = self._stored_on_self(q, node)
            if attr is None:
                continue
            self._report(report, node, found, attr)

    def _report(self, report, node: ast.Assign, found, attr: str) -> None:
        param, steps = found
        method = steps[-1].func.attr
        callee = report.source.segment(param.func) or "nn.Parameter"
        callee = callee if len(callee) <= 24 else "nn.Parameter"
        moves = "moves (e.g. to a GPU) or converts" if any(s.func.attr in ("to", "cuda") for s in steps) \
            else "converts"
        frozen = any(kw.arg == "requires_grad" and isinstance(kw.value, ast.Constant) and kw.value.value is False
                     for kw in param.keywords)
        if frozen:
            # `requires_grad=False`: nothing was to be trained, but checkpoints and `model.to()` still miss it.
            msg = (f"`.{method}()` after `{callee}(...)` returns a plain tensor, so the module never registers or "
                   f"saves it. `{attr}` is missing from `state_dict()` and `model.to()` does not move it whenever "
                   f"the call {moves} the tensor; convert the tensor inside `{callee}(...)` instead.")
        else:
            msg = (f"`.{method}()` after `{callee}(...)` returns a plain tensor, so the module never registers or "
                   f"trains it. `{attr}` is missing from `parameters()` and `state_dict()` whenever the call {moves} "
                   f"the tensor; convert the tensor inside `{callee}(...)` instead.")
        fix = None
        new = _moved_inside(report.source, node.value)
        if new is not None:
            fix = make_fix("Convert the tensor inside the Parameter", Applicability.UNSAFE,
                           edit_for(report.source, node.value, new))
        report.add(self, node, msg, fix=fix)

    @staticmethod
    def _stored_on_self(q, node: ast.Assign) -> Optional[str]:
        """`self.weight` when the assignment stores on `self` in a module's method, or binds a local that a
        later statement of the same method stores on `self`; else None."""
        fn = q.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if fn is None or not fn.args.args:
            return None
        cls = q.parent(fn)
        if not (isinstance(cls, ast.ClassDef) and q.is_module_class(cls)):
            return None
        me = fn.args.args[0].arg
        for target in node.targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                return f"{me}.{target.attr}"
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return None
        local = node.targets[0].id
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == local and isinstance(n.ctx, ast.Store)]
        if len(stores) != 1:
            return None  # rebound somewhere: which value reaches `self` is not clear from the shape alone
        for other in ast.walk(fn):
            if isinstance(other, ast.Assign) and isinstance(other.value, ast.Name) and other.value.id == local \
                    and other.lineno > node.lineno:
                for target in other.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id == me:
                        return f"{me}.{target.attr}"
        return None
