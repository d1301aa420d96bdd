from __future__ import annotations

from ..engine.events import FactoryEvent
from ..engine.values import Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class RequiresGradTypo(Rule):
    code = "GS208"
    name = "requires-grad-typo"
    severity = Severity.ERROR
    summary = "A misspelling of `requires_grad` (`require_grad`, `requires_grads`...) does nothing or raises."
    events = (FactoryEvent,)
    what_it_does = ("Flags `t.require_grad = True` and similar misspelt attribute assignments on tensors, and "
                    "misspelt keyword arguments to tensor factories (`torch.randn(3, require_grad=True)`). A misspelt "
                    "`= False` is flagged only when the tensor is known to require grad (a parameter, a tensor made "
                    "with `requires_grad=True`): on a fresh tensor such as a positional-encoding table "
                    "(`pe = torch.zeros(...); pe.require_grad = False`) the typo changes nothing, the tensor already "
                    "does not require grad.")
    why_bad = ("As an attribute, the typo silently creates a new Python attribute: the tensor still does not "
               "require grad, and the error (`element 0 of tensors does not require grad`) appears far away at "
               "backward. As a keyword, the factory raises `TypeError: ... received an invalid combination of "
               "arguments`.")
    example = "w = torch.randn(3)\nw.require_grad = True"
    use_instead = "w = torch.randn(3)\nw.requires_grad = True"
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.requires_grad.html",)
    valid = (
        Valid("import torch\nw = torch.randn(3)\nw.requires_grad = True\n(w * 2).sum().backward()\n"),
        # The positional-encoding shape of Informer / FEDformer / PatchTST: the typo sets what is already so.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass PositionalEmbedding(nn.Module):\n"
              "    def __init__(self, d_model=4, max_len=8):\n        super().__init__()\n"
              "        pe = torch.zeros(max_len, d_model).float()\n        pe.require_grad = False\n"
              "        self.register_buffer('pe', pe)\n\n\nm = PositionalEmbedding()\nassert not m.pe.requires_grad\n"),
    )
    invalid = (
        Invalid("import torch\nw = torch.randn(3)\nw.require_grad = True\n", line=3, runtime="silent: not w.requires_grad"),
        Invalid("import torch\nw = torch.randn(3, require_grad=True)\n", line=2,
                runtime="raises: received an invalid combination of arguments"),
        # Meant to freeze a parameter: the typo leaves it trainable.
        Invalid("import torch\nimport torch.nn as nn\nlin = nn.Linear(2, 2)\nlin.weight.require_grad = False\n",
                line=4, runtime="silent: lin.weight.requires_grad"),
    )

    def check(self, event: FactoryEvent, report) -> None:
        kind, _, spelling = event.api.partition(":")
        if kind not in ("attr", "kwarg") or spelling == "requires_grad":
            return
        if kind == "attr" and event.flag is Tri.NO:
            # Meant to switch gradients off: wrong only where they are on.
            if event.target.rg is not Tri.YES:
                return
            msg = (f"`{spelling}` is a typo of `requires_grad`, so the tensor still requires grad and keeps "
                   "training. The assignment only sets a new Python attribute.")
        elif kind == "attr":
            msg = (f"`{spelling}` is a typo of `requires_grad`, so the tensor still does not require grad. "
                   "The assignment only sets a new Python attribute.")
        else:
            msg = (f"`{spelling}=` is not a keyword of tensor factories; the call raises \"received an invalid "
                   "combination of arguments\"; use `requires_grad=`.")
        report.add(self, event.node, msg)
