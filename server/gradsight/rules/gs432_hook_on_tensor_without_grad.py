from __future__ import annotations

from ..engine.events import TensorHookEvent
from ..engine.report import Note
from ..engine.report import text as msg
from ..engine.values import GRAD_MODE_OFF, ONLY_FROM_NO_GRAD, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid, at
from .gs401_backward_without_grad import root_cause

_ERROR = "cannot register a hook on a tensor that doesn't require gradient"


class HookOnTensorWithoutGrad(Rule):
    code = "GS432"
    name = "hook-on-tensor-without-grad"
    severity = Severity.ERROR
    summary = "`t.register_hook(fn)` raises when `t` does not require grad (made under `no_grad`, detached, data)."
    events = (TensorHookEvent,)
    what_it_does = ("Flags `t.register_hook(...)` on a tensor gradsight knows does not require grad: made under "
                    "`torch.no_grad()`, detached, or plain data. When the statement that made it ran with grad mode "
                    "off, the finding stands there and the `register_hook` line is in `related`.")
    why_bad = (f"A tensor hook runs when the tensor's gradient is computed, so torch refuses it on a tensor that "
               f"will never get one: `register_hook` raises \"{_ERROR}\". Inside a forward hook this happens as soon "
               "as the model runs under `torch.no_grad()` (see GS430).")
    example = "with torch.no_grad():\n    feats = model(x)\nfeats.register_hook(save_grad)   # raises"
    use_instead = "feats = model(x)\nfeats.register_hook(save_grad)"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.register_hook.html",)
    valid = (
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\ngrads = []\nh = w * 2\n"
              "h.register_hook(grads.append)\nh.sum().backward()\n"),
        Valid("import torch\nw = torch.randn(3, requires_grad=True)\ngrads = []\nwith torch.no_grad():\n"
              "    w.register_hook(grads.append)\n(w * 2).sum().backward()\n"),
        Valid("import torch\n\n\ndef keep(t, grads):\n    if t.requires_grad:\n        t.register_hook(grads.append)\n"
              "\n\nkeep(torch.randn(3), [])\n"),
    )
    invalid = (
        Invalid("import torch\nmodel = torch.nn.Linear(4, 3)\ngrads = []\nwith torch.no_grad():\n"
                "    feats = model(torch.randn(2, 4))\nfeats.register_hook(grads.append)\n",
                line=5, also=(6,), runtime=f"raises: {_ERROR}"),
        Invalid("import torch\nmodel = torch.nn.Linear(4, 3)\ngrads = []\nfeats = model(torch.randn(2, 4)).detach()\n"
                "feats.register_hook(grads.append)\n", line=5, runtime=f"raises: {_ERROR}"),
    )

    def check(self, event: TensorHookEvent, report) -> None:
        t = event.target
        if t.rg is not Tri.NO:
            return
        chain = t.nograd.chain() if t.nograd is not None else []
        related = [f for f in chain if f.kind != ONLY_FROM_NO_GRAD]
        line, col, _, _ = report.source.span(event.node)
        raises = Note(line, col, f"raises here: \"{_ERROR}\"")
        severity = Severity.WARNING if t.evidence else None
        root = next((f for f in chain if f.kind == GRAD_MODE_OFF and f.path is None and f.line != line), None)
        if root is not None:
            text = report.source.line_text(root.line)
            start = len(text) - len(text.lstrip()) + 1
            report.add(self, event.node,
                       msg(f"This runs with grad mode disabled, so `{event.expr}.register_hook(...)` at line ", line,
                           " raises."),
                       related=[f for f in related if f is not root] + [raises],
                       span=(root.line, start, root.line, len(text) + 1), severity=severity)
            return
        cause = root_cause(t.nograd)
        why = msg(f" {cause.text[0].upper()}{cause.text[1:]} (", at(cause), ").") if cause else ""
        report.add(self, event.node,
                   msg(f"`{event.expr}` does not require grad, so `register_hook` on it raises.", why),
                   related=related, severity=severity)
