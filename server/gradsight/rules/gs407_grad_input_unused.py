from __future__ import annotations

import ast

from ..engine.report import Note
from ..engine.events import BackwardEvent
from ..engine.values import MADE_LEAF_REQUIRE_GRAD, TensorVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid

_ERROR = "The differentiated Tensor at index N appears to not have been used in the graph"


class GradInputUnused(Rule):
    code = "GS407"
    name = "grad-input-unused"
    severity = Severity.ERROR
    summary = "`torch.autograd.grad(y, [x, z])` raises when some input does not feed `y` (unless allow_unused=True)."
    events = (BackwardEvent,)
    what_it_does = ("Flags `torch.autograd.grad` inputs created with `requires_grad=True` that gradsight can see "
                    "never reach the outputs.")
    why_bad = ("PyTorch raises `RuntimeError: The differentiated Tensor at index 1 appears to not have been used "
               "in the graph. Set allow_unused=True if this is the desired behavior.`")
    example = "x = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\ngx, gz = torch.autograd.grad((x * 2).sum(), [x, z])"
    use_instead = "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)  # gz is None"
    references = ("https://pytorch.org/docs/stable/generated/torch.autograd.grad.html",)
    valid = (
        Valid("import torch\nx = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\n"
              "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)\n"),
        # An input reaching the output only through a call gradsight cannot see (pyro's `kl_divergence` of
        # distributions built from it): it may feed the output, so nothing is claimed.
        Valid("import torch\nfrom torch.distributions import Bernoulli, kl_divergence\n"
              "q1 = torch.tensor(0.3, requires_grad=True)\nq2 = torch.tensor(0.6, requires_grad=True)\n"
              "elbo = q1 * kl_divergence(Bernoulli(q2 + 0.1), Bernoulli(0.65))\n"
              "g1, g2 = torch.autograd.grad(elbo, [q1, q2])\n"),
    )
    invalid = (Invalid("import torch\nx = torch.randn(3, requires_grad=True)\nz = torch.randn(3, requires_grad=True)\n"
                       "gx, gz = torch.autograd.grad((x * 2).sum(), [x, z])\n", line=4,
                       runtime="raises: appears to not have been used in the graph"),)

    def check(self, event: BackwardEvent, report) -> None:
        t = event.target
        if event.api != "torch.autograd.grad" or t.rg is not Tri.YES or event.allow_unused is not Tri.NO:
            return
        if t.psrc_partial:
            # A value gradsight cannot see fed the output (`kl_divergence(dist.Bernoulli(q2), ...)`): it may be
            # what carries an input, so "never feeds" cannot be claimed (pyro's tests differentiate such ELBOs).
            return
        for index, (node, val) in enumerate(event.inputs):
            if not isinstance(val, TensorVal) or val.leaf is not Tri.YES or val.rg is not Tri.YES or not val.sources:
                continue
            if val.sources & t.sources:
                continue
            name = report.source.segment(node)
            line, col, _, _ = report.source.span(event.node)
            origin = val.origin
            if origin is not None and origin.path is None and origin.line < line and origin.kind == MADE_LEAF_REQUIRE_GRAD \
                    and _used_before(report.tree, name, origin.line):
                # `x` was used before it started requiring grad: that ordering is the statement to change.
                text = report.source.line_text(origin.line)
                start = len(text) - len(text.lstrip()) + 1
                report.add(self, event.node,
                           f"`{name}` starts requiring grad after it was used, so `torch.autograd.grad` at line "
                           f"{line} raises.",
                           related=[Note(line, col, f"raises here: \"{_ERROR}\"")],
                           span=(origin.line, start, origin.line, len(text) + 1))
                return
            report.add(self, event.node,
                       f"Input {index} (`{name}`) never feeds `{event.expr}`, so `torch.autograd.grad` raises.",
                       related=[origin] if origin is not None and origin.line != line else [])
            return


def _used_before(tree, name: str, line: int) -> bool:
    """Whether `name` is read on a line before `line` (a computation that ran before it required grad)."""
    if tree is None or not name.isidentifier():
        return False
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno < line
               for n in ast.walk(tree))
