from __future__ import annotations

from ..engine.report import text as msg
from ..engine.events import ReassignEvent
from ..engine.values import ModuleVal, Tri
from ..findings import Severity
from .base import Invalid, Rule, Valid


class ParametersReplacedAfterOptimizer(Rule):
    code = "GS504"
    name = "module-replaced-after-optimizer"
    severity = Severity.WARNING
    summary = "A submodule replaced after the optimizer took `model.parameters()` is never optimized."
    events = (ReassignEvent,)
    what_it_does = ("Flags `model.head = nn.Linear(...)` (a new submodule with parameters) after "
                    "`torch.optim.X(model.parameters())` was built, unless every path after the replacement binds "
                    "the optimizer's name to a new `torch.optim` optimizer before anything reads it (a loop that swaps "
                    "the classifier, then builds that step's optimizer).")
    why_bad = ("The optimizer holds the old parameter tensors. The new layer gets gradients, but `step()` never "
               "updates it, silently.")
    example = "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.fc = nn.Linear(512, 10)"
    use_instead = "model.fc = nn.Linear(512, 10)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)"
    references = ("https://pytorch.org/docs/stable/optim.html",)
    valid = (Valid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2))\nmodel.head = nn.Linear(2, 1)\n"
                   "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"),
             # Class-incremental learning: each step swaps the classifier, then builds that step's optimizer over
             # the new parameters before training; the previous step's optimizer is never stepped again.
             Valid("import torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer):\n    optimizer.zero_grad()\n"
                   "    model(torch.randn(8, 4)).pow(2).sum().backward()\n    optimizer.step()\n\n\n"
                   "model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\nmodel.fc = nn.Linear(4, 2)\n"
                   "for task in range(3):\n"
                   "    if task > 0:\n        model.fc = nn.Linear(4, 2 + task)\n"
                   "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    train(model, optimizer)\n"),)
    invalid = (Invalid("import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(2, 2))\n"
                       "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.head = nn.Linear(2, 1)\n", line=5,
                       runtime="silent: all(p is not model.head.weight for g in opt.param_groups for p in g['params'])"),
               # The look-alike: the step's optimizer is built before the swap, then trains without the new layer.
               Invalid("import torch\nimport torch.nn as nn\n\n\ndef train(model, optimizer):\n    optimizer.zero_grad()\n"
                       "    model(torch.randn(8, 4)).pow(2).sum().backward()\n    optimizer.step()\n\n\n"
                       "model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())\nmodel.fc = nn.Linear(4, 2)\n"
                       "for task in range(3):\n"
                       "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                       "    if task > 0:\n        model.fc = nn.Linear(4, 2 + task)\n    train(model, optimizer)\n",
                       line=16, runtime="silent: all(p is not model.fc.weight for g in optimizer.param_groups "
                       "for p in g['params'])"),)

    def check(self, event: ReassignEvent, report) -> None:
        if event.optimizer_at is None or not isinstance(event.new, ModuleVal) or event.new.has_params is not Tri.YES:
            return
        report.add(self, event.node,
                   msg("The optimizer built at line ", event.optimizer_at.line, " holds the old parameters, so the new "
                       f"`{event.key}` is never updated by `step()`; build the optimizer after replacing layers."),
                   related=[event.optimizer_at])
