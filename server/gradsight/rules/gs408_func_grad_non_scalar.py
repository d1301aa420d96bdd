from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import FuncGradEvent
from ..findings import Severity
from .base import Invalid, Rule, Valid, at

_MSG = "\"Expected f(*args) to return a scalar Tensor\""


class FuncGradNonScalar(Rule):
    code = "GS408"
    name = "func-grad-non-scalar"
    severity = Severity.WARNING
    summary = "`torch.func.grad(f)` of a function that returns a tensor with dimensions raises: `f` must return a scalar."
    events = (FuncGradEvent,)
    what_it_does = ("Flags `torch.func.grad(f)(...)` (and `grad_and_value`, and their `functorch` spellings) "
                    "when `f` is defined in the analysed code and, for these arguments, returns a tensor that "
                    "gradsight knows has at least one dimension: per-sample losses (`reduction='none'`, no "
                    "`.mean()`), a matrix product of known shapes.")
    why_bad = ("`torch.func.grad` computes the gradient of a scalar function; given anything else it raises "
               f"{_MSG}, even for a one-element tensor of shape `(1,)`. Per-sample gradients are "
               "`vmap(grad(f))` of a function that returns one sample's scalar loss.")
    example = ("def per_sample_loss(w, x, y):\n    return (x @ w - y) ** 2   # shape (N,)\n\n"
               "g = torch.func.grad(per_sample_loss)(w, x, y)")
    use_instead = ("def loss(w, x, y):\n    return ((x @ w - y) ** 2).mean()\n\ng = torch.func.grad(loss)(w, x, y)\n"
                   "# per-sample gradients: torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(w, x, y)")
    fix_safety = ("No automatic fix: whether the losses should be summed, averaged, or differentiated per "
                  "sample with `vmap` is the author's choice.")
    references = ("https://pytorch.org/docs/stable/generated/torch.func.grad.html",)
    valid = (
        Valid("import torch\nfrom torch.func import grad\n\n\ndef loss(w, x):\n    return (x @ w).pow(2).mean()\n\n\n"
              "g = grad(loss)(torch.randn(3), torch.randn(5, 3))\n"),
        Valid("import torch\nfrom torch.func import grad, vmap\n\n\ndef loss(w, x):\n    return (x @ w).pow(2)\n\n\n"
              "g = vmap(grad(loss), in_dims=(None, 0))(torch.randn(3), torch.randn(5, 3))\n"),
    )
    invalid = (
        Invalid("import torch\nfrom torch.func import grad\n\n\ndef per_sample(w, x):\n    return (x @ w) ** 2\n\n\n"
                "g = grad(per_sample)(torch.randn(3), torch.randn(5, 3))\n", line=9,
                runtime="raises: Expected f(*args) to return a scalar Tensor"),
    )

    def check(self, event: FuncGradEvent, report) -> None:
        origin = event.result.origin
        where = msg(f" ({origin.text}, ", at(origin), ")") if origin is not None else ""
        dims = "a 1-dimensional tensor" if len(event.result.shape) == 1 and event.result.shape != ("?",) else \
            "a tensor with dimensions"
        if event.result.shape and "?" not in event.result.shape:
            dims = f"a tensor of shape {tuple(event.result.shape)}"
        report.add(self, event.node,
                   msg(f"`{event.func}` does not return a scalar, so `{event.api.rsplit('.', 1)[-1]}()` raises. "
                       f"It returns {dims}", where, f"; PyTorch says {_MSG}. Reduce it (`.mean()`, `.sum()`) or use "
                       "`vmap` for per-sample gradients."), related=[origin])
