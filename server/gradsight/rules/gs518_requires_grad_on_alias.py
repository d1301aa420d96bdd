from __future__ import annotations

import ast
import re

from ..engine.events import FactoryEvent, GradReadEvent
from ..engine.report import Note
from ..engine.report import text as msg
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


def _made_to_require(event: FactoryEvent):
    """The expression made to require grad by `t.requires_grad = True` / `t.requires_grad_()`, or None."""
    if event.flag is not Tri.YES:
        return None
    node = event.node
    if event.api == "attr:requires_grad" and isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.targets[0], ast.Attribute):
        return node.targets[0].value
    if event.api == "requires_grad_" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.value
    return None


def _derived_by(t) -> str:
    """The expression `t` was made by as a view or a detach (`x.reshape(-1, dim)`, `x.detach()`), or ''."""
    for fact in (t.view, t.nograd):
        if fact is not None and fact.kind in ("view", "detached-by"):
            return fact.arg("expr") or ""
    return ""


def _names(expr: str, name: str) -> bool:
    """Whether `expr` reads `name` (a name or dotted attribute) as a whole, not as part of a longer name."""
    return re.search(r"(?<![\w.])" + re.escape(name) + r"(?![\w])", expr) is not None


class RequiresGradOnAlias(Rule):
    code = "GS518"
    name = "requires-grad-on-alias"
    severity = Severity.WARNING
    summary = ("`requires_grad` is set on a reshaped or detached alias of `x`, then `x.grad` is read: backward fills "
               "the alias's `.grad`, `x.grad` stays None.")
    events = (FactoryEvent, GradReadEvent)
    what_it_does = ("Flags `X.requires_grad = True` (or `X.requires_grad_()`) where `X` is a view or a detached "
                    "alias of another tensor `x` (`X = x.reshape(...)`, `X = x.detach()`) that itself does not "
                    "require grad, when the code then reads `x.grad`. The finding stands on the statement that sets "
                    "the flag; the read is in `related`.")
    why_bad = ("Only the tensor whose flag was set becomes a leaf that backward fills: `x.grad` stays None, silently "
               "(no warning: `x` is a leaf that does not require grad). A custom `autograd.Function.backward` that "
               "returns it drops that gradient; code that uses it later fails with a TypeError far away.")
    example = ("x = x.detach()\nX = x.reshape(-1, dim)\nX.requires_grad = True\npenalty(X).backward()\n"
               "return x.grad")
    use_instead = ("x = x.detach()\nx.requires_grad = True\nX = x.reshape(-1, dim)\npenalty(X).backward()\n"
                   "return x.grad")
    fix_safety = "There is no automatic fix: set the flag on the tensor whose `.grad` you read, before deriving from it."
    references = ("https://pytorch.org/docs/stable/notes/autograd.html#setting-requires-grad",)
    valid = (
        # The flag is set on the base before the reshape: backward reaches `x`.
        Valid("import torch\nx = torch.randn(4, 3).detach()\nx.requires_grad = True\nX = x.reshape(-1, 3)\n"
              "(X ** 2).sum().backward()\ng = x.grad\nassert g is not None\n"),
        # The alias's own `.grad` is read.
        Valid("import torch\nx = torch.randn(4, 3)\nX = x.reshape(-1, 3)\nX.requires_grad = True\n"
              "(X ** 2).sum().backward()\ng = X.grad\nassert g is not None\n"),
        # `x` is made to require grad too.
        Valid("import torch\nx = torch.randn(4, 3)\nX = x.view(-1)\nX.requires_grad_(True)\nx.requires_grad_(True)\n"
              "(x ** 2).sum().backward()\ng = x.grad\nassert g is not None\n"),
        # One tensor under two names: the flag set through one name is the other's.
        Valid("import torch\n\n\nclass Probe:\n    def __init__(self, t):\n        self.t = t.detach()\n\n"
              "    def run(self):\n        t = self.t\n        t.requires_grad = True\n        (t * 3).sum().backward()\n"
              "        return self.t.grad\n\n\nassert Probe(torch.randn(2)).run() is not None\n"),
        # gpytorch's chunked derivative: each detached chunk is made to require grad through the loop variable, and
        # the chunks' own `.grad` are read.
        Valid("import torch\n\n\ndef chunked(x1):\n    x1 = x1.detach().requires_grad_(True)\n"
              "    subs = [s.detach() for s in torch.split(x1, 2, dim=0)]\n    for s in subs:\n"
              "        s.requires_grad_(True)\n        (s ** 2).sum().backward()\n"
              "    return torch.cat([s.grad for s in subs], dim=0)\n\n\nassert chunked(torch.randn(4, 3)).shape == (4, 3)\n"),
    )
    invalid = (
        # icefall's CorrelationLimiterFunction.backward: the flag set on the reshape of the detached input.
        Invalid("import torch\n\n\nclass Limiter(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x\n\n    @staticmethod\n"
                "    def backward(ctx, ans_grad):\n        (x,) = ctx.saved_tensors\n        with torch.enable_grad():\n"
                "            x = x.to(torch.float).detach()\n            X = x.reshape(-1, x.shape[-1])\n"
                "            X.requires_grad = True\n            loss = (X.t() @ X).pow(2).mean()\n"
                "            loss.backward()\n        return x.grad\n\n\n"
                "w = torch.randn(4, 3, requires_grad=True)\nLimiter.apply(w).sum().backward()\ng = w.grad\n",
                line=16, runtime="silent: g is None"),
        Invalid("import torch\nx = torch.randn(4, 3)\nX = x.view(-1)\nX.requires_grad_()\n(X ** 2).sum().backward()\n"
                "g = x.grad\n", line=4, runtime="silent: g is None"),
        Invalid("import torch\n\n\ndef input_grad(model, x):\n    x_in = x.detach()\n    x_in.requires_grad_(True)\n"
                "    model(x_in).sum().backward()\n    return x.grad\n\n\n"
                "g = input_grad(torch.nn.Linear(3, 1), torch.randn(2, 3))\n", line=6, runtime="silent: g is None"),
    )

    def __init__(self) -> None:
        # storage site -> (the FactoryEvent, the expression made to require grad), for one analysis.
        self._flagged: dict = {}

    def check(self, event, report) -> None:
        if isinstance(event, FactoryEvent):
            expr = _made_to_require(event)
            t = event.target
            # What the alias itself is before the flag need not be known (a reshape of an unknown shape): the read
            # below requires its storage's owner not to require grad, so the alias did not either.
            if expr is None or t.storage is None or t.rg is Tri.YES or t.leaf is Tri.NO:
                return
            self._flagged.setdefault(t.storage, (event, expr))
            return
        t = event.target
        if t.storage is None or t.rg is not Tri.NO or t.leaf is not Tri.YES:
            return
        hit = self._flagged.get(t.storage)
        if hit is None:
            return
        flagged, expr = hit
        # Only a tensor the flagged one was visibly made from (`X = x.reshape(...)`, `x_in = x.detach()`): storage
        # alone also joins list elements with the loop variable that iterates them (gpytorch's `sub_x1s`).
        if not _names(_derived_by(flagged.target), event.expr):
            return
        if flagged.target == t:
            # The very value read here was made to require grad under another name (`X = x`, `t = self.t`): one
            # tensor with two names, and `x.grad` is filled. gradsight has no object identity beyond the storage,
            # but a derived tensor (a reshape, a detach) is a different value.
            return
        alias = report.source.segment(expr)
        if alias == event.expr:
            return
        line, col, _, _ = report.source.span(event.node)
        report.add(self, flagged.node,
                   msg(f"`{alias}` is a new tensor derived from `{event.expr}`: backward fills `{alias}.grad`, and "
                       f"`{event.expr}.grad` (line ", line, ") stays None. Set `requires_grad` on "
                       f"`{event.expr}` before deriving `{alias}`."),
                   related=[Note(line, col, "reads None here")])
