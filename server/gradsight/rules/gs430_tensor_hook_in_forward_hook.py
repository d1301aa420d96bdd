from __future__ import annotations

import ast

from ..engine.query import FileEvent
from ..engine.report import Note
from ..findings import Severity
from . import _hooks
from .base import Invalid, Rule, Valid

_ERROR = "cannot register a hook on a tensor that doesn't require gradient"
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


def _guarded(q, fn: ast.AST) -> bool:
    """Whether the hook decides when it registers: it reads some `.requires_grad` or asks `torch.is_grad_enabled()`
    (the usual guard, `if not output.requires_grad: return`), or it tests anything at all (torch-cam's
    `if self._hooks_enabled:`, a switch its no-grad passes turn off): the author controls when the hook acts."""
    for n in _hooks.own_nodes(fn):
        if isinstance(n, (ast.If, ast.IfExp)):
            return True
        if isinstance(n, ast.Attribute) and n.attr == "requires_grad":
            return True
        if isinstance(n, ast.Call) and (q.call_name(n) or "").endswith("is_grad_enabled"):
            return True
    return False


def _in_try(q, node: ast.AST, fn: ast.AST) -> bool:
    """Whether `node` stands in the body of a `try` (inside `fn`) that handles an exception."""
    child, parent = node, q.parent(node)
    while parent is not None and parent is not fn:
        if isinstance(parent, _TRY) and child in parent.body and parent.handlers:
            return True
        child, parent = parent, q.parent(parent)
    return False


def _same_tensor(expr: ast.AST, names: set) -> bool:
    """`output`, `output[0]`, `output.last_hidden_state`, `output.view(...)`: an expression that is the received tensor
    or a view of it (a call of some other function on it may return anything: an autograd `Node`, None)."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Attribute):
            if expr.attr == "grad_fn":
                return False
            expr = expr.value
        else:
            return isinstance(expr, ast.Name) and expr.id in names


class TensorHookInForwardHook(Rule):
    code = "GS430"
    name = "tensor-hook-without-grad-check"
    severity = Severity.WARNING
    summary = ("A forward hook calls `output.register_hook(...)` without checking `output.requires_grad`: it raises "
               "whenever the model runs under `torch.no_grad()`.")
    events = (FileEvent,)
    what_it_does = ("Flags a function registered with `register_forward_hook` that registers a tensor hook "
                    "(`register_hook`) on the output (or input) it receives, with no `if` in the hook (a test of "
                    "`requires_grad`, `torch.is_grad_enabled()` or a switch of the object's own) and no `try` around "
                    "the call. The finding stands on the "
                    "hook's `def`, where the guard goes; the related note points at the `register_hook` call.")
    why_bad = ("A forward hook runs in the grad mode of whoever calls the model. The usual Grad-CAM trick, "
               "capturing the target layer's gradient with `output.register_hook(...)` from a forward hook, works "
               "while the model runs with grad mode on; as soon as some code runs the same hooked model under "
               "`torch.no_grad()` (an evaluation pass, a CAM method that only scores masked inputs) or the layer's "
               f"output needs no gradient (a frozen backbone), `register_hook` raises \"{_ERROR}\" inside the "
               "model's forward.")
    example = ("def save_gradient(module, input, output):\n    output.register_hook(grads.append)\n\n"
               "layer.register_forward_hook(save_gradient)\nwith torch.no_grad():\n    model(x)   # raises")
    use_instead = ("def save_gradient(module, input, output):\n    if not output.requires_grad:\n        return\n"
                   "    output.register_hook(grads.append)")
    references = ("https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook",
                  "https://pytorch.org/docs/stable/generated/torch.Tensor.register_hook.html")
    valid = (
        Valid("import torch\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))\n"
              "grads = []\n\n\ndef save_gradient(module, input, output):\n    if not output.requires_grad:\n"
              "        return\n    output.register_hook(grads.append)\n\n\n"
              "model[0].register_forward_hook(save_gradient)\nwith torch.no_grad():\n    model(torch.randn(2, 4))\n"
              "model(torch.randn(2, 4)).sum().backward()\n"),
        Valid("import torch\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))\n"
              "grads = []\n\n\ndef save_gradient(module, input, output):\n    if torch.is_grad_enabled():\n"
              "        output.register_hook(grads.append)\n\n\n"
              "model[0].register_forward_hook(save_gradient)\nwith torch.no_grad():\n    model(torch.randn(2, 4))\n"),
        # A switch of the object's own, turned off for the no-grad passes (torch-cam's `_hooks_enabled`).
        Valid("import torch\n\n\nclass Cam:\n    def __init__(self, layer):\n        self.enabled = True\n"
              "        self.grads = []\n        layer.register_forward_hook(self.hook)\n\n"
              "    def hook(self, module, input, output):\n        if self.enabled:\n"
              "            output.register_hook(self.grads.append)\n\n\n"
              "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())\ncam = Cam(model[0])\n"
              "cam.enabled = False\nwith torch.no_grad():\n    model(torch.randn(2, 4))\n"),
        # A tensor hook registered outside any forward hook, on a tensor that requires grad.
        Valid("import torch\n\nw = torch.randn(3, requires_grad=True)\ngrads = []\nw.register_hook(grads.append)\n"
              "(w * 2).sum().backward()\n"),
        # The forward hook only stores the output.
        Valid("import torch\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU())\nacts = []\n"
              "model[0].register_forward_hook(lambda m, i, o: acts.append(o.detach()))\nwith torch.no_grad():\n"
              "    model(torch.randn(2, 4))\n"),
    )
    invalid = (
        Invalid("import torch\n\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))\n"
                "grads = []\n\n\ndef save_gradient(module, input, output):\n    output.register_hook(grads.append)\n\n\n"
                "model[0].register_forward_hook(save_gradient)\nmodel(torch.randn(2, 4)).sum().backward()\n"
                "with torch.no_grad():\n    model(torch.randn(2, 4))\n",
                line=7, runtime=f"raises: {_ERROR}"),
        # A method of a Grad-CAM helper registered through `self`, with a nested gradient store (pytorch-grad-cam).
        Invalid("import torch\n\n\nclass ActivationsAndGradients:\n    def __init__(self, model, target_layer):\n"
                "        self.model = model\n        self.gradients = []\n"
                "        self.handle = target_layer.register_forward_hook(self.save_gradient)\n\n"
                "    def save_gradient(self, module, input, output):\n        def _store_grad(grad):\n"
                "            self.gradients = [grad.cpu().detach()] + self.gradients\n\n"
                "        output.register_hook(_store_grad)\n\n    def __call__(self, x):\n"
                "        self.gradients = []\n        return self.model(x)\n\n\n"
                "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))\n"
                "cam = ActivationsAndGradients(model, model[0])\nwith torch.no_grad():\n"
                "    scores = cam(torch.randn(2, 4))\n",
                line=10, runtime=f"raises: {_ERROR}"),
        # A frozen layer: its output needs no gradient even in grad mode.
        Invalid("import torch\n\nbackbone = torch.nn.Linear(4, 8).requires_grad_(False)\ngrads = []\n"
                "backbone.register_forward_hook(lambda m, i, o: o.register_hook(grads.append))\n"
                "out = backbone(torch.randn(2, 4))\n",
                line=5, runtime=f"raises: {_ERROR}"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        if "register_hook" not in q.attrs or "register_forward_hook" not in q.attrs:
            return  # the common case, checked in one pass (this rule runs on every keystroke)
        seen = set()
        for hook in _hooks.hooks(q, kinds=("register_forward_hook",)):
            if id(hook.fn) in seen or not hook.params:
                continue
            seen.add(id(hook.fn))
            if _guarded(q, hook.fn):
                continue
            tensors = _hooks.derived(hook.fn, hook.params, keep=_same_tensor)
            for n in _hooks.own_nodes(hook.fn):
                if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_hook"):
                    continue
                recv = n.func.value
                if _hooks.root_name(recv) not in tensors or not _same_tensor(recv, tensors) or _in_try(q, n, hook.fn):
                    continue
                shown = report.source.segment(n.func.value)
                shown = shown if shown and len(shown) <= 30 and "\n" not in shown else "output"
                line, col, _, _ = report.source.span(n)
                span = report.source.line_span(hook.fn.lineno) if not isinstance(hook.fn, ast.Lambda) else None
                report.add(self, hook.fn,
                           f"This forward hook's `{shown}.register_hook(...)` raises when the model runs under no_grad; "
                           f"return early when `not {shown}.requires_grad`.",
                           related=[Note(line, col, "raises here when the output needs no gradient")],
                           span=span)
                break
