from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import BackwardEvent
from ..engine.values import SeqVal, TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at


def _known(shape) -> bool:
    return shape is not None and all(type(d) is int for d in shape)


def _size(shape: tuple) -> str:
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"


class GradientShapeMismatch(Rule):
    code = "GS409"
    name = "gradient-shape-mismatch"
    severity = Severity.ERROR
    summary = "The gradient passed to backward (or `grad_outputs`) has a different shape from the output."
    events = (BackwardEvent,)
    what_it_does = ("Flags `y.backward(g)`, `y.backward(gradient=g)`, `torch.autograd.backward(y, g)` and "
                    "`torch.autograd.grad(y, x, grad_outputs=g)` when gradsight knows the exact shapes of both "
                    "`y` and `g` and they differ. A common spelling is the pre-0.4 idiom "
                    "`loss.backward(torch.Tensor([1]))` on a loss that is now 0-dimensional.")
    why_bad = ("PyTorch requires the output gradient to have exactly the output's shape; it does not broadcast. "
               "It raises `RuntimeError: Mismatch in shape: grad_output[0] has a shape of ... and output[0] has a "
               "shape of ...`.")
    example = "loss = F.mse_loss(pred, target)\nloss.backward(torch.tensor([1.0]))  # loss is 0-dimensional"
    use_instead = ("loss = F.mse_loss(pred, target)\nloss.backward()\n"
                   "# for a non-scalar output: y.backward(torch.ones_like(y))")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.backward.html",
                  "https://pytorch.org/docs/stable/generated/torch.autograd.grad.html")
    valid = (
        Valid("import torch\nx = torch.randn(2, 3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones_like(y))\n"),
        Valid("import torch\nx = torch.randn(2, 3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones(2, 3))\n"),
        Valid("import torch\nx = torch.randn(2, 3, requires_grad=True)\nloss = (x * 2).sum()\n"
              "loss.backward(torch.tensor(1.0))\n"),
        Valid("import torch\nx = torch.randn(2, 3, requires_grad=True)\ny = x.exp()\n"
              "(g,) = torch.autograd.grad(y, x, grad_outputs=torch.ones((2, 3)))\n"),
    )
    invalid = (
        Invalid("import torch\nx = torch.randn(2, 3, requires_grad=True)\nloss = (x * 2).sum()\n"
                "loss.backward(torch.tensor([1.0]))\n", line=4,
                runtime="raises: Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and output[0] "
                        "has a shape of torch.Size([])"),
        Invalid("import torch\nx = torch.randn(2, 3, requires_grad=True)\ny = x * 2\n"
                "y.backward(gradient=torch.ones(3))\n", line=4,
                runtime="raises: Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] "
                        "has a shape of torch.Size([2, 3])"),
        Invalid("import torch\nx = torch.randn(2, 3, requires_grad=True)\ny = x.exp()\n"
                "g = torch.ones(3, 2)\n(dx,) = torch.autograd.grad(y, x, grad_outputs=g)\n", line=5,
                runtime="raises: Mismatch in shape: grad_output[0] has a shape of torch.Size([3, 2])"),
    )

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if event.gradient is None or t.rg is not Tri.YES or event.grad_mode is Tri.NO:
            return
        g_node, g = event.gradient
        if isinstance(g, SeqVal) and len(g.items) == 1:
            g = g.items[0]
            if hasattr(g_node, "elts"):
                g_node = g_node.elts[0]
        if not isinstance(g, TensorVal) or not _known(g.shape) or not _known(t.shape) or g.shape == t.shape:
            return
        text = report.source.segment(g_node)
        text = text if len(text) <= 40 and "\n" not in text else "the gradient"
        where = msg(" (made at ", at(g.origin), ")") if g.origin is not None and g.origin.line != event.node.lineno \
            else ""
        report.add(self, event.node,
                   msg(f"The gradient has shape {tuple(g.shape)} but `{event.expr}` has shape {tuple(t.shape)}, so "
                       f"this raises. `{text}`", where, " must be shaped like the output; PyTorch says \"Mismatch in "
                       f"shape: grad_output[0] has a shape of {_size(g.shape)} and output[0] has a shape of "
                       f"{_size(t.shape)}\"."),
                   related=[g.origin, t.origin])
