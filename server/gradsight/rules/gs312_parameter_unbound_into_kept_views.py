from __future__ import annotations

import ast

from ..engine.events import TensorIteratedEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, tree_query

_KEEP_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})
_TYPE_TESTS = frozenset({"isinstance", "is_tensor", "torch.is_tensor"})


def _on_self(node: ast.AST) -> bool:
    """`self.x`, `self.x[k]`, `self.a.b` (or a tuple of targets holding one): storage that lives as long as the
    object."""
    if type(node) in (ast.Tuple, ast.List):
        return any(_on_self(e.value if type(e) is ast.Starred else e) for e in node.elts)
    while type(node) in (ast.Attribute, ast.Subscript):
        if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
            return True
        node = node.value
    return False


def _container_top(node: ast.AST, q) -> tuple:
    """Climb from `node` through the tuple/list/dict displays holding it: (the outermost display or the node,
    its parent)."""
    child, parent = node, q.parent(node)
    while type(parent) in (ast.Tuple, ast.List, ast.Starred, ast.Dict):
        child, parent = parent, q.parent(parent)
    return child, parent


def _kept(node: ast.AST, q) -> bool:
    """Is the value of `node` kept on the object: assigned to `self.x` / `self.x[k]`, or handed (possibly inside a
    tuple or list) to `self.x.append(...)` and the like, or to `self.x += ...`?"""
    child, parent = _container_top(node, q)
    t = type(parent)
    if t is ast.Assign and child is parent.value:
        return any(_on_self(tg) for tg in parent.targets)
    if t is ast.AugAssign and child is parent.value or t is ast.AnnAssign and child is parent.value:
        return _on_self(parent.target)
    if t is ast.Call and child is not parent.func and type(parent.func) is ast.Attribute \
            and parent.func.attr in _KEEP_METHODS:
        return _on_self(parent.func.value)
    return False


def _kept_via_local(call: ast.Call, fn: ast.AST, q) -> bool:
    """`views = list(w)` then `self.reg.append((views, decay))` in the same function."""
    child, parent = _container_top(call, q)
    if type(parent) is not ast.Assign or child is not parent.value or len(parent.targets) != 1 \
            or type(parent.targets[0]) is not ast.Name:
        return False
    return any(_kept(n, q) for n in q.names_loaded(fn, parent.targets[0].id))


def _type_tested(call: ast.Call, expr: ast.AST, q) -> bool:
    """Does an enclosing `if` / conditional expression test the iterated value's type (`isinstance(w, Parameter)`,
    `torch.is_tensor(w)`)? Then the code already tells a tensor from an iterable of tensors."""
    text = ast.dump(expr)
    node = q.parent(call)
    while node is not None and type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module):
        if type(node) in (ast.If, ast.IfExp, ast.While):
            for n in ast.walk(node.test):
                if type(n) is ast.Call and n.args and ast.dump(n.args[0]) == text \
                        and (q.qualname(n.func) or "") in _TYPE_TESTS | {"torch.is_tensor"}:
                    return True
                if type(n) is ast.Call and n.args and ast.dump(n.args[0]) == text and type(n.func) is ast.Name \
                        and n.func.id in _TYPE_TESTS:
                    return True
        node = q.parent(node)
    return False


class ParameterUnboundIntoKeptViews(Rule):
    code = "GS312"
    name = "parameter-unbound-into-kept-views"
    severity = Severity.WARNING
    summary = ("`list(param)` / `tuple(param)` / `param.chunk(...)` of a parameter kept on the object: the pieces are "
               "views that raise once the optimizer updates the parameter in place.")
    events = (TensorIteratedEvent,)
    what_it_does = ("Flags `list(w)`, `tuple(w)` and `w.unbind()` / `w.chunk(...)` / `w.split(...)` / "
                    "`w.tensor_split(...)` where `w` is a leaf tensor that requires grad (an `nn.Parameter`, "
                    "a module's `weight`) and the result is kept on the object: assigned to `self.x`, or appended "
                    "(possibly inside a tuple) to a list held by `self`. Typical: a helper written for iterables of "
                    "parameters (`model.parameters()`, a `filter(...)` of `named_parameters()`) that also receives "
                    "a single `weight`, from a subclass in another file; the finding then names that call.")
    why_bad = ("Iterating a tensor unbinds it along its first dimension: each row is a view of the parameter made "
               "by one `UnbindBackward0` that returns several views at once. `optimizer.step()` updates the "
               "parameter in place, and the next use of a kept row raises `RuntimeError: Output 0 of "
               "Unbind is a view and its base or another view of its base has been modified inplace. "
               "This view is the output of a function that returns multiple views...`. Keep the parameter "
               "itself (wrap it in a list) and iterate it where it is used.")
    example = ("def add_regularization_weight(self, weight_list, weight_decay):\n"
               "    self.regularization_weight.append((list(weight_list), weight_decay))\n\n"
               "# a subclass, in another file\n"
               "self.add_regularization_weight(self.dnn_linear.weight, l2_reg)")
    use_instead = ("def add_regularization_weight(self, weight_list, weight_decay):\n"
                   "    if isinstance(weight_list, torch.nn.Parameter):\n"
                   "        weight_list = [weight_list]\n"
                   "    else:\n"
                   "        weight_list = list(weight_list)\n"
                   "    self.regularization_weight.append((weight_list, weight_decay))")
    references = ("https://pytorch.org/docs/stable/generated/torch.unbind.html",
                  "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd")

    _MODEL = ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(4, 1, bias=False)\n        self.reg = []\n"
              "        self.add_reg(self.fc.weight, 1e-3)\n        self.add_reg(self.fc.parameters(), 1e-3)\n\n"
              "    def add_reg(self, weights, decay):\n{body}\n"
              "    def reg_loss(self):\n        total = 0.0\n        for weights, decay in self.reg:\n"
              "            for w in weights:\n                total = total + decay * w.norm()\n        return total\n\n\n"
              "model = Model()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nx = torch.randn(8, 4)\n"
              "for _ in range(2):\n    opt.zero_grad()\n    loss = model.fc(x).pow(2).mean() + model.reg_loss()\n"
              "    loss.backward()\n    opt.step()\n")
    _ROWS = ("import torch\nimport torch.nn as nn\n\n\nclass Rows(nn.Module):\n    def __init__(self):\n"
             "        super().__init__()\n        self.weight = nn.Parameter(torch.randn(3, 4))\n{body}\n"
             "    def forward(self, i):\n{use}\n\n\n"
             "m = Rows()\nopt = torch.optim.SGD(m.parameters(), lr=0.1)\nfor _ in range(2):\n    opt.zero_grad()\n"
             "    m(1).sum().backward()\n    opt.step()\n")

    valid = (
        # The fix: a single Parameter is wrapped in a list, anything else listed.
        Valid(_MODEL.format(body="        if isinstance(weights, nn.Parameter):\n            weights = [weights]\n"
                                 "        else:\n            weights = list(weights)\n"
                                 "        self.reg.append((weights, decay))\n")),
        # Rows taken where they are used: made again from the updated parameter on every call.
        Valid(_ROWS.format(body="", use="        rows = list(self.weight)\n        return rows[i] * 2")),
        # Rows of a tensor that requires no grad (a buffer-like constant) kept on the object.
        Valid(_ROWS.format(body="        self.rows = list(torch.randn(3, 4))\n",
                           use="        return self.weight[i] * self.rows[i]")),
        # Pieces split where they are used, on every call.
        Valid(_ROWS.format(body="", use="        head, tail = self.weight.chunk(2, dim=1)\n        return head[i] * 2")),
        # Rows of a detached copy kept: plain tensors, no view history.
        Valid(_ROWS.format(body="        self.rows = tuple(self.weight.detach().clone())\n",
                           use="        return self.weight[i] * self.rows[i]")),
    )
    invalid = (
        Invalid(_MODEL.format(body="        self.reg.append((list(weights), decay))\n"), line=14,
                runtime="raises: is a view and its base"),
        Invalid(_ROWS.format(body="        self.rows = tuple(self.weight)\n", use="        return self.rows[i] * 2"),
                line=9, runtime="raises: is a view and its base"),
        # Split by a tensor method into pieces kept on the module.
        Invalid(_ROWS.format(body="        self.head, self.tail = self.weight.chunk(2, dim=1)\n",
                             use="        return self.head[i] * 2"),
                line=9, runtime="raises: is a view and its base"),
        # Listed into a local first, then kept.
        Invalid(_MODEL.format(body="        weights = list(weights)\n        self.reg.append((weights, decay))\n"),
                line=14, runtime="raises: is a view and its base"),
    )

    def check(self, event: TensorIteratedEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.YES or t.leaf is not Tri.YES or event.grad_mode is not Tri.YES or t.is_data:
            return
        tree = report.tree
        call = event.node
        if tree is None or type(call) is not ast.Call:
            return
        method = type(call.func) is ast.Attribute and event.fn == call.func.attr
        if not method and not call.args:
            return
        q = tree_query(self, tree)
        if q.parent(call) is None:
            return  # not this file's node (a caller's code in another file)
        fn = q.enclosing_function(call)
        if fn is None or not (_kept(call, q) or _kept_via_local(call, fn, q)) \
                or _type_tested(call, call.func.value if method else call.args[0], q):
            return
        what = "parameter" if t.param else "leaf tensor that requires grad"
        if method:
            said = (f"`{event.expr}.{event.fn}(...)` splits a {what} into views kept on the object; after the "
                    f"optimizer updates it in place, using them raises \"... is a view and its base ... has been "
                    f"modified inplace\". Keep the tensor itself and split it where the pieces are used.")
        else:
            said = (f"`{event.fn}({event.expr})` unbinds a {what} into row views kept on the object; after the "
                    f"optimizer updates it in place, using them raises \"... is a view and its base ... has been "
                    f"modified inplace\". Keep the tensor itself (`[{event.expr}]`) and iterate it where it is used.")
        report.add(self, call, said)
