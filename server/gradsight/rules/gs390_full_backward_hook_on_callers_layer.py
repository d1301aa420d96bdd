"""GS390: a gradient captured with `register_full_backward_hook` on a layer of a model the code was handed."""

from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from . import _hooks
from .base import Invalid, Rule, Valid

_METHOD = "register_full_backward_hook"
_ERROR = "Output 0 of BackwardHookFunction is a view and is being modified inplace"
_STORING_CALLS = ("append", "insert", "extend", "appendleft", "__setitem__")


def _method_name(q, call: ast.Call) -> bool:
    """Whether `call` registers a full backward hook: `m.register_full_backward_hook(h)`, or
    `getattr(m, name)(h)` where `name` is the string itself or a local name bound from an expression holding it
    (`bw = 'register_full_backward_hook' if new_torch else 'register_backward_hook'`)."""
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr == _METHOD
    if not (isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id == "getattr"
            and len(f.args) >= 2):
        return False
    name = f.args[1]
    if isinstance(name, ast.Constant):
        return name.value == _METHOD
    if not isinstance(name, ast.Name):
        return False
    fn = q.enclosing_function(call)
    body = _hooks.own_nodes(fn) if fn is not None else q.tree.body
    for n in body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets) \
                and any(isinstance(c, ast.Constant) and c.value == _METHOD for c in ast.walk(n.value)):
            return True
    return False


def _module_expr(call: ast.Call) -> Optional[ast.AST]:
    f = call.func
    return f.value if isinstance(f, ast.Attribute) else f.args[0]


def _root(expr: ast.AST) -> tuple:
    """(`self`, `layers`) for `self.layers[i]`, (`layer`, None) for `layer` or `layer[0]`."""
    attr = None
    while isinstance(expr, (ast.Subscript, ast.Attribute, ast.Call)):
        if isinstance(expr, ast.Attribute):
            attr = expr.attr
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return (expr.id, attr) if isinstance(expr, ast.Name) else (None, None)


def _built_here(q, expr: ast.AST, at: ast.AST) -> bool:
    """Whether the hooked module is one this file builds (`model = nn.Sequential(...)`, `self.fc = nn.Linear(...)`)
    or the object itself (`self.register_full_backward_hook(...)`): then what runs after it is this file's code,
    not a caller's model. Unknown expressions count as built here (the rule stays quiet)."""
    name, attr = _root(expr)
    if name is None:
        return True
    me = _hooks.self_of(q, q.enclosing_function(at)) if q.enclosing_function(at) is not None else None
    if name == me:
        if attr is None:
            return True
        return any(isinstance(t, ast.Attribute) and t.attr == attr and q.is_module_constructor(s.value)
                   for s in q.assigns for t in s.targets)
    if any(isinstance(t, ast.Name) and t.id == name and q.is_module_constructor(s.value)
           for s in q.assigns for t in s.targets):
        return True
    return _own_submodule_loop(q, name, me, at)


def _own_submodule_loop(q, name: str, me: Optional[str], at: ast.AST) -> bool:
    """`for m in self.modules(): m.register_full_backward_hook(...)` inside an `nn.Module` class: the model's own
    layers, whose forward is this file's code."""
    fn = q.enclosing_function(at)
    cls = q.enclosing(at, (ast.ClassDef,))
    if fn is None or me is None or cls is None or not q.is_module_class(cls):
        return False
    for n in _hooks.own_nodes(fn):
        if isinstance(n, (ast.For, ast.AsyncFor)) and any(isinstance(t, ast.Name) and t.id == name
                                                          for t in ast.walk(n.target)):
            if _root(n.iter)[0] == me:
                return True
    return False


def _stores_gradient(fn: ast.AST, grad_output: str) -> Optional[ast.AST]:
    """The statement of the hook that keeps (a value read from) `grad_output` beyond the call: an attribute or
    subscript assignment, or `.append(...)`-like call on a container. A hook that only looks at the gradient (logs a
    norm, checks it is finite) returns None."""
    names = _hooks.derived(fn, (grad_output,))
    for n in _hooks.own_nodes(fn):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in targets) and _hooks.reads(n.value, names):
                return n
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _STORING_CALLS \
                and any(_hooks.reads(a, names) for a in n.args):
            return n
    return None


class FullBackwardHookOnCallersLayer(Rule):
    code = "GS390"
    name = "full-backward-hook-on-callers-layer"
    severity = Severity.WARNING
    summary = ("A gradient captured with `register_full_backward_hook` on a layer of a caller's model: an in-place op "
               "after that layer raises.")
    events = (FileEvent,)
    what_it_does = ("Flags `layer.register_full_backward_hook(hook)` (also `getattr(layer, name)(hook)` with `name` "
                    "bound to that method's name) where the hook keeps the gradient it receives (`grad_output` "
                    "stored on an object, in a dict or a list) and `layer` is not a module this file builds: a layer "
                    "the code was handed (a parameter, a loop over a parameter, an attribute filled from elsewhere), not "
                    "the object itself nor, in an `nn.Module` class, a loop over its own submodules. "
                    "The finding stands on the registering call.")
    why_bad = ("A full backward hook wraps the layer's outputs in `BackwardHookFunction`, which returns them as "
               "views. When the model modifies such an output in place afterwards (the usual "
               "`ReLU(inplace=True)` after a convolution, a residual `out += identity`), the forward raises "
               f"\"{_ERROR}\" (pytorch#61519). Code that hooks whatever layer its caller names (Grad-CAM and other "
               "attribution tools, gradient monitors) cannot know what follows that layer, so it fails on common "
               "architectures such as VGG or ResNet blocks. A tensor hook on the layer's output, registered from a "
               "forward hook, receives the same gradient and leaves the output as it is.")
    example = ("def save_gradient(module, grad_input, grad_output):\n    grads.append(grad_output[0])\n\n"
               "target_layer.register_full_backward_hook(save_gradient)   # raises when an inplace ReLU follows")
    use_instead = ("def save_gradient(module, input, output):\n    if output.requires_grad:\n"
                   "        output.register_hook(grads.append)\n\ntarget_layer.register_forward_hook(save_gradient)")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook",
                  "https://github.com/pytorch/pytorch/issues/61519")
    valid = (
        # The fix: a tensor hook on the output, registered from a guarded forward hook.
        Valid("import torch\n\n\nclass Cam:\n    def __init__(self, model, target_layer):\n        self.model = model\n"
              "        self.gradients = []\n        target_layer.register_forward_hook(self.save_gradient)\n\n"
              "    def save_gradient(self, module, input, output):\n        if output.requires_grad:\n"
              "            output.register_hook(lambda g: self.gradients.append(g.detach()))\n\n"
              "    def __call__(self, x):\n        return self.model(x)\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(inplace=True), torch.nn.Flatten(),\n"
              "                            torch.nn.Linear(144, 2))\ncam = Cam(model, model[0])\n"
              "cam(torch.randn(1, 3, 8, 8)).sum().backward()\nassert cam.gradients[0].shape == (1, 4, 6, 6)\n"),
        # A layer this file builds: what follows it is visible here (no in-place op follows).
        Valid("import torch\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))\n"
              "grads = []\nmodel[0].register_full_backward_hook(lambda m, gin, gout: grads.append(gout[0]))\n"
              "model(torch.randn(3, 4)).sum().backward()\nassert grads[0].shape == (3, 8)\n"),
        # The hook only looks at the gradient (a finiteness check), it keeps nothing.
        Valid("import torch\n\n\ndef watch(layer):\n    def check(module, grad_input, grad_output):\n"
              "        if not torch.isfinite(grad_output[0]).all():\n            print('non-finite gradient')\n\n"
              "    layer.register_full_backward_hook(check)\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))\n"
              "watch(model[0])\nmodel(torch.randn(3, 4)).sum().backward()\n"),
        # A model hooking its own layers: what follows them is this file's forward.
        Valid("import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.body = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))\n"
              "        self.grads = {}\n        for name, m in self.body.named_children():\n"
              "            m.register_full_backward_hook(lambda mod, gin, gout, name=name: self.grads.update({name: gout[0]}))\n"
              "            m.register_full_backward_hook(lambda mod, gin, gout, name=name: self.grads.__setitem__(name, gout[0]))\n\n"
              "    def forward(self, x):\n        return self.body(x)\n\n\nnet = Net()\n"
              "net(torch.randn(3, 4)).sum().backward()\nassert len(net.grads) == 3\n"),
        # A module hooking itself: its own forward is this file's code.
        Valid("import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
              "        self.fc = torch.nn.Linear(4, 2)\n        self.grads = []\n"
              "        self.register_full_backward_hook(self.keep)\n\n"
              "    def keep(self, module, grad_input, grad_output):\n        self.grads.append(grad_output[0])\n\n"
              "    def forward(self, x):\n        return self.fc(x)\n\n\nnet = Net()\n"
              "net(torch.randn(3, 4)).sum().backward()\nassert len(net.grads) == 1\n"),
    )
    invalid = (
        # A Grad-CAM helper hooking the layer its caller names (pytorch-grad-cam before a9511f6).
        Invalid("import torch\n\n\nclass Cam:\n    def __init__(self, model, target_layer):\n        self.model = model\n"
                "        self.gradients = []\n        target_layer.register_full_backward_hook(self.save_gradient)\n\n"
                "    def save_gradient(self, module, grad_input, grad_output):\n        grad = grad_output[0]\n"
                "        self.gradients = [grad.cpu().detach()] + self.gradients\n\n"
                "    def __call__(self, x):\n        return self.model(x)\n\n\n"
                "model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(inplace=True), torch.nn.Flatten(),\n"
                "                            torch.nn.Linear(144, 2))\ncam = Cam(model, model[0])\n"
                "cam(torch.randn(1, 3, 8, 8)).sum().backward()\n",
                line=8, runtime=f"raises: {_ERROR}"),
        # The method named through `getattr` by a version switch, on a layer looked up by name (torch-cam before
        # 8a39f07).
        Invalid("import torch\n\n\nclass GradCAM:\n    def __init__(self, model, layer_name):\n        self.model = model\n"
                "        self.layers = dict(model.named_modules())\n        self.hook_g = None\n"
                "        bw = 'register_full_backward_hook' if hasattr(torch.nn.Module, 'register_full_backward_hook') "
                "else 'register_backward_hook'\n"
                "        getattr(self.layers[layer_name], bw)(self._hook_g)\n\n"
                "    def _hook_g(self, module, input, output):\n        self.hook_g = output[0].data\n\n\n"
                "model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(inplace=True), torch.nn.Flatten(),\n"
                "                            torch.nn.Linear(144, 2))\ncam = GradCAM(model, '0')\n"
                "model(torch.randn(1, 3, 8, 8))\n",
                line=10, runtime=f"raises: {_ERROR}"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if _METHOD not in q.attrs and (_METHOD not in report.source.text or "getattr" not in report.source.text):
            return  # the common case (this rule runs on every keystroke)
        for call in q.calls():
            if not call.args or not _method_name(q, call):
                continue
            layer = _module_expr(call)
            if _built_here(q, layer, call):
                continue
            for fn, bound in _hooks.resolve(q, call.args[0], call):
                if fn is None:
                    continue
                params = _hooks._positional(fn)[bound:]
                if len(params) < 3:
                    continue
                kept = _stores_gradient(fn, params[2])
                if kept is None:
                    continue
                shown = report.source.segment(layer)
                shown = shown if shown and len(shown) <= 30 and "\n" not in shown else "the layer"
                line, col, _, _ = report.source.span(kept)
                report.add(self, call,
                           f"A full backward hook on `{shown}` makes its output a view: an in-place op after it raises.",
                           related=[Note(line, col, "the hook keeps the gradient: register `output.register_hook` "
                                                    "from a forward hook instead")])
                break
