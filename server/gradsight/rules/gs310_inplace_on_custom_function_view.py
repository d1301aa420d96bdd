from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ViewInplaceEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at

_SAYS = ("\"... is a view and is being modified inplace. This view was created inside a custom Function (or because "
         "an input was returned as-is)\"")


class InplaceOnCustomFunctionView(Rule):
    code = "GS310"
    name = "inplace-on-custom-function-view"
    severity = Severity.ERROR
    summary = ("The output of a custom `autograd.Function` that returns its input as-is is a view: modifying it in place "
               "raises.")
    events = (ViewInplaceEvent,)
    what_it_does = ("Flags in-place ops (`out += m`, `out.masked_fill_(...)`, `out[i] = v`), with grad mode on, on the "
                    "output of `Fn.apply(x, ...)` where `Fn` is a custom `torch.autograd.Function` of the analysed code "
                    "whose static `forward` returns one of its inputs as-is (`return x`: a gradient-only trick that "
                    "adds an auxiliary loss or a penalty in `backward`) or as `x.view_as(x)` / `x.view(...)` (a "
                    "gradient reversal), and on any view of that output (`out.view(b, n, t)`), when it requires grad. "
                    "An error where the output surely requires grad on every path; a warning where only some paths "
                    "make it such a view (`if training and random.random() < 0.1: x = Fn.apply(x, aux)`).")
    why_bad = ("Autograd cannot rebase the history of a view created inside a custom Function, so PyTorch raises "
               f"`RuntimeError: Output 0 of ... {_SAYS[5:]}` at the in-place op, in training only when the Function "
               "is applied on some steps only. Use the out-of-place op (`out = out.masked_fill(mask, v)`, "
               "`out = out + m`) or `.clone()` the output first.")
    example = ("scores = WithLoss.apply(scores, aux)   # forward returns `scores` as-is\n"
               "scores = scores.view(b * h, t, t)\nscores.masked_fill_(mask, float(\"-inf\"))")
    use_instead = ("scores = WithLoss.apply(scores, aux)\nscores = scores.view(b * h, t, t)\n"
                   "scores = scores.masked_fill(mask, float(\"-inf\"))")
    fix_safety = "There is no automatic fix: write the op out of place (or clone the output first)."
    references = ("https://pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",
                  "https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd")
    valid = (
        # Out of place after the Function; in place under `no_grad`, where nothing requires grad.
        Valid("import torch\n\n\nclass WithLoss(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x, aux):\n        ctx.shape = aux.shape\n        return x\n\n    @staticmethod\n"
              "    def backward(ctx, grad):\n        return grad, torch.ones(ctx.shape)\n\n\n"
              "w = torch.randn(2, 6, requires_grad=True)\nscores = WithLoss.apply(w * 2, w.abs())\n"
              "scores = scores.view(3, 4).masked_fill(scores.view(3, 4) > 1.0, 0.0)\nwith torch.no_grad():\n"
              "    plain = WithLoss.apply(w * 2, w.abs())\n    plain += 1\n"),
        # A `forward` that computes a new tensor: its output is no view.
        Valid("import torch\n\n\nclass Scale(torch.autograd.Function):\n    @staticmethod\n"
              "    def forward(ctx, x, s):\n        ctx.s = s\n        return x * s\n\n    @staticmethod\n"
              "    def backward(ctx, grad):\n        return grad * ctx.s, None\n\n\n"
              "w = torch.randn(4, requires_grad=True)\nh = Scale.apply(w * 2, 3.0)\nh += 1\nh.sum().backward()\n"),
    )
    invalid = (
        # icefall's attention scores with an auxiliary loss attached: a view of the Function's output.
        Invalid("import torch\n\n\nclass WithLoss(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, aux):\n        ctx.shape = aux.shape\n        return x\n\n    @staticmethod\n"
                "    def backward(ctx, grad):\n        return grad, torch.ones(ctx.shape)\n\n\n"
                "w = torch.randn(2, 6, requires_grad=True)\nscores = WithLoss.apply(w * 2, w.abs())\n"
                "scores = scores.view(3, 4)\nscores.masked_fill_(scores > 1.0, 0.0)\n", line=18,
                runtime="raises: This view was created inside a custom Function"),
        # A gradient reversal layer's `x.view_as(x)`.
        Invalid("import torch\n\n\nclass GradReverse(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x):\n        return x.view_as(x)\n\n    @staticmethod\n"
                "    def backward(ctx, grad):\n        return -grad\n\n\nw = torch.randn(4, requires_grad=True)\n"
                "h = GradReverse.apply(w * 2)\nh += 1\n", line=16,
                runtime="raises: This view was created inside a custom Function"),
        # Applied on some training steps only: a warning, raised on the steps that apply it.
        Invalid("import random\n\nimport torch\n\n\nclass WithLoss(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, aux):\n        ctx.shape = aux.shape\n        return x\n\n    @staticmethod\n"
                "    def backward(ctx, grad):\n        return grad, torch.ones(ctx.shape)\n\n\n"
                "def attention(q, k, mask, training=True):\n    scores = torch.matmul(q, k.transpose(-1, -2))\n"
                "    if training and random.random() < 0.5:\n        scores = WithLoss.apply(scores, scores.abs())\n"
                '    scores = scores.view(-1, scores.shape[-1])\n    scores.masked_fill_(mask, float("-inf"))\n'
                "    return scores.softmax(dim=-1)\n\n\nw = torch.randn(3, 4, requires_grad=True)\nrandom.seed(0)\n"
                "for _ in range(8):\n    attention(w * 1, w * 1, torch.eye(3, dtype=torch.bool)).sum().backward()\n", line=22,
                runtime="raises: This view was created inside a custom Function"),
    )

    def check(self, event: ViewInplaceEvent, report) -> None:
        t = event.target
        if t.fnview is None or t.rg is Tri.NO or event.grad_mode is Tri.NO or event.op in ("detach_", "resize_"):
            return
        sure = t.fnview_sure and t.rg is Tri.YES and event.grad_mode is Tri.YES and not t.evidence
        when = "" if t.fnview_sure else " on the paths that apply it"
        what = f"`{event.expr}`" if len(event.expr) <= 40 else "This tensor"
        report.add(self, event.node,
                   msg(f"{what} is a view a custom Function returned, so this in-place op raises{when}. `",
                       t.fnview.arg("expr"), "` (", at(t.fnview), f") returns its input `{t.fnview.arg('name')}` "
                       f"as-is; PyTorch says {_SAYS}."),
                   related=[t.fnview], severity=None if sure else Severity.WARNING)
