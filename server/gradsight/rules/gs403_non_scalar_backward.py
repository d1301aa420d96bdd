from __future__ import annotations

from ..engine.report import text as msg
from ..engine.report import Note
from ..engine.events import BackwardEvent
from ..engine.report import make_fix
from ..engine.values import Tri
from ..findings import Applicability, Edit, Severity
from .base import Invalid, Rule, Valid

_ERROR = "grad can be implicitly created only for scalar outputs"


class NonScalarBackward(Rule):
    code = "GS403"
    name = "non-scalar-backward"
    severity = Severity.ERROR
    summary = "backward() without a gradient argument needs a one-element tensor."
    events = (BackwardEvent,)
    what_it_does = ("Flags `t.backward()` and `torch.autograd.grad(t, ...)` without a `gradient=`/`grad_outputs=` "
                    "argument where `t` has more than one element: a per-sample loss (`reduction='none'`) or an "
                    "output whose shape gradsight knows.")
    why_bad = ("PyTorch raises `RuntimeError: grad can be implicitly created only for scalar outputs`. Reduce "
               "the loss first (`.mean()` or `.sum()`), or pass the vector of output gradients explicitly.")
    example = "per_item = F.mse_loss(pred, target, reduction='none')\nper_item.backward()"
    use_instead = "per_item = F.mse_loss(pred, target, reduction='none')\nper_item.mean().backward()"
    fix_safety = ("Unsafe: the fix inserts `.sum()`, which gives the same gradients PyTorch would compute with "
                  "an all-ones `gradient=`; you may want `.mean()` instead, which scales gradients by 1/N. "
                  "Either way it changes what is optimised, so it is never applied automatically.")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\n(x * 2).sum().backward()\n"),
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones_like(y))\n"),
        Valid("import torch\nx = torch.randn(1, requires_grad=True)\n(x * 2).backward()\n"),
    )
    invalid = (
        Invalid("import torch\nimport torch.nn as nn\nlayer = nn.Linear(4, 2)\n"
                "per_item = nn.functional.mse_loss(layer(torch.randn(3, 4)), torch.randn(3, 2), reduction='none')\n"
                "per_item.backward()\n", line=5, runtime="raises: grad can be implicitly created only for scalar outputs",
                fixed="import torch\nimport torch.nn as nn\nlayer = nn.Linear(4, 2)\n"
                      "per_item = nn.functional.mse_loss(layer(torch.randn(3, 4)), torch.randn(3, 2), reduction='none')\n"
                      "per_item.sum().backward()\n"),
        Invalid("import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward()\n", line=4,
                runtime="raises: grad can be implicitly created only for scalar outputs"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.YES or event.gradient_given or t.shape is None:
            return
        if t.shape == ("?",):
            size = "more than one element"
        elif all(isinstance(d, int) for d in t.shape) and all(d == 1 for d in t.shape):
            return
        elif any(isinstance(d, int) and d > 1 for d in t.shape):
            size = f"shape {tuple(t.shape)}"
        else:
            return
        fix = None
        if event.api == "Tensor.backward" and event.target_node is not None:
            _, _, end_line, end_col = report.source.span(event.target_node)
            fix = make_fix("Reduce with `.sum()` before backward (changes what is optimised)", Applicability.UNSAFE,
                           Edit(end_line, end_col, end_line, end_col, ".sum()"))
        line, col, _, _ = report.source.span(event.node)
        origin = t.origin
        report.add(self, event.node,
                   f"`{event.expr}` has {size}, so backward without a gradient argument raises. "
                   f"Reduce it with `.mean()` or `.sum()` first.",
                   related=[origin] if origin is not None and origin.line != line else [], fix=fix)
        if origin is not None and origin.path is None and origin.line != line:
            # The statement to change is where the unreduced value is made: report there too, with the backward
            # that raises in `related`.
            text = report.source.line_text(origin.line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, event.node,
                       msg(f"This value has {size} and is never reduced, so its backward at line ", line, " raises."),
                       related=[Note(line, col, f"raises here: \"{_ERROR}\"")],
                       span=(origin.line, start, origin.line, len(text) + 1))
