from __future__ import annotations

import ast
from typing import Optional

from ..engine.query import FileEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _method(cls: ast.ClassDef, name: str) -> Optional[ast.FunctionDef]:
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == name), None)


def _input_count(cls: ast.ClassDef) -> Optional[tuple]:
    """How many inputs `apply` takes, as (fewest, most): `forward`'s parameters after `ctx` (none to skip with
    `setup_context`); parameters with defaults may be left out, and torch then expects one gradient per input
    actually passed (BasicSR's `DeformConvFunction` leaves `im2col_step` to its default and returns 8)."""
    forward = _method(cls, "forward")
    if forward is None or forward.args.vararg or forward.args.kwonlyargs or forward.args.kwarg:
        return None
    params = forward.args.posonlyargs + forward.args.args
    skip = 0 if _method(cls, "setup_context") is not None else 1
    most = max(0, len(params) - skip)
    return max(0, most - len(forward.args.defaults)), most


def _returned(value: Optional[ast.AST], grad_params: set) -> Optional[tuple]:
    """(count, non-None extras mask) of what a `return` gives, or None when it cannot be told from the text."""
    if value is None:
        return None
    if isinstance(value, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        return tuple(not (isinstance(e, ast.Constant) and e.value is None) for e in value.elts)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and (
            isinstance(value.left, ast.Tuple) or isinstance(value.right, ast.Tuple)):
        # `(None, None, None) + (grad,)`: tuple concatenation (open_clip's NeighbourExchange).
        left, right = _returned(value.left, grad_params), _returned(value.right, grad_params)
        if left is None or right is None or not isinstance(value.left, ast.Tuple) \
                or not isinstance(value.right, ast.Tuple):
            return None
        return left + right
    if isinstance(value, (ast.BinOp, ast.UnaryOp)) or (isinstance(value, ast.Name) and value.id in grad_params):
        return (True,)  # one tensor
    return None


class FunctionBackwardArity(Rule):
    code = "GS411"
    name = "function-backward-arity"
    severity = Severity.ERROR
    summary = "A custom `autograd.Function.backward` returns a different number of gradients than `forward` has inputs."
    events = (FileEvent,)
    what_it_does = ("Flags a `return` in the `backward` of a `torch.autograd.Function` subclass that returns fewer "
                    "values than `forward` takes inputs (after `ctx`), or more values where the extra ones are not "
                    "`None`.")
    why_bad = ("Autograd needs one gradient (or `None`) per input of `forward`. Otherwise the backward pass "
               "raises \"function <Name>Backward returned an incorrect number of gradients (expected N, got M)\". "
               "Non-tensor inputs (a limit, a flag) still need a `None` in their place.")
    example = ("class Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, limit):\n"
               "        return x.clamp(-limit, limit)\n\n    @staticmethod\n    def backward(ctx, grad_out):\n"
               "        return grad_out")
    use_instead = ("class Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, limit):\n"
                   "        return x.clamp(-limit, limit)\n\n    @staticmethod\n    def backward(ctx, grad_out):\n"
                   "        return grad_out, None")
    references = ("https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",)
    _head = ("import torch\n\n\nclass Clip(torch.autograd.Function):\n    @staticmethod\n"
             "    def forward(ctx, x, limit):\n        return x.clamp(-limit, limit)\n\n    @staticmethod\n"
             "    def backward(ctx, grad_out):\n")
    _tail = "\n\nv = torch.randn(5, requires_grad=True)\nClip.apply(v, 0.3).sum().backward()\n"
    valid = (
        Valid(_head + "        return grad_out, None" + _tail),
        # A tuple built by concatenation (open_clip's NeighbourExchange): three Nones and one gradient.
        Valid(_head + "        return (grad_out,) + (None,)" + _tail),
        Valid(_head + "        return grad_out, None, None" + _tail),
        Valid("import torch\n\n\nclass Sq(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n        return x * x\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        x, = ctx.saved_tensors\n        return 2 * x * grad_out\n\n\n"
              "v = torch.randn(3, requires_grad=True)\nSq.apply(v).sum().backward()\n"),
        # A parameter with a default that `apply` leaves out gets no gradient slot (BasicSR's DeformConvFunction).
        Valid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x, s=2.0, step=64):\n        ctx.s = s\n        return x * s\n\n    @staticmethod\n"
              "    def backward(ctx, grad_out):\n        return grad_out * ctx.s, None\n\n\n"
              "v = torch.randn(3, requires_grad=True)\nScale.apply(v, 3.0).sum().backward()\n"),
    )
    invalid = (
        Invalid(_head + "        return grad_out" + _tail, line=11,
                runtime="raises: returned an incorrect number of gradients (expected 2, got 1)"),
        Invalid(_head + "        return grad_out, None, grad_out" + _tail, line=11,
                runtime="raises: returned an incorrect number of gradients (expected 2, got 3)"),
    )

    def check(self, event: FileEvent, report) -> None:
        q = event.query
        for cls in q.subclasses("torch.autograd.Function"):
            counts = _input_count(cls)
            backward = _method(cls, "backward")
            if counts is None or backward is None or len(backward.args.args) < 2 or backward.args.vararg:
                continue
            fewest, expected = counts
            grad_params = {a.arg for a in backward.args.args[1:]}
            for ret in ast.walk(backward):
                if not isinstance(ret, ast.Return) or q.enclosing_function(ret) is not backward:
                    continue
                got = _returned(ret.value, grad_params)
                if got is None:
                    continue
                if len(got) < fewest or (len(got) > expected and any(got[expected:])):
                    n = fewest if len(got) < fewest else expected
                    least = "at least " if len(got) < fewest and fewest != expected else ""
                    report.add(self, ret, f"`backward` returns {len(got)} gradient{'s' * (len(got) != 1)} but "
                                          f"`forward` takes {least}{n} input{'s' * (n != 1)}; backward raises.")
