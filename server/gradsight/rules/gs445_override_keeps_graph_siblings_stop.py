from __future__ import annotations

from ..engine.events import SiblingStopsEvent
from ..engine.report import Note
from ..findings import Severity
from .base import Invalid, Rule, Valid

# An actor-critic family (d3rlpy's shape): the base class's `update_critic` backwards a TD loss built from
# `self.compute_target(...)`, which each algorithm implements; DDPG's computes it under `torch.no_grad()`.
_FAMILY = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
           "class ActorCritic:\n    def __init__(self):\n        self.q = nn.Linear(4, 1)\n"
           "        self.q_target = nn.Linear(4, 1)\n        self.build_optim()\n\n"
           "    def build_optim(self):\n        self.optim = torch.optim.SGD(self.q.parameters(), lr=0.1)\n\n"
           "    def compute_target(self, s2):\n        raise NotImplementedError\n\n"
           "    def update_critic(self, s, r, s2):\n        self.optim.zero_grad()\n"
           "        target = r + 0.99 * self.compute_target(s2)\n"
           "        loss = F.mse_loss(self.q(s), target)\n        loss.backward()\n        self.optim.step()\n\n\n"
           "class DDPG(ActorCritic):\n    def compute_target(self, s2):\n        with torch.no_grad():\n"
           "            return self.q_target(s2)\n\n\n"
           "class IQL(ActorCritic):\n    def build_optim(self):\n        self.v = nn.Linear(4, 1)\n"
           "        self.optim = torch.optim.SGD(list(self.q.parameters()) + list(self.v.parameters()), lr=0.1)\n\n"
           "    def compute_target(self, s2):\n")
_RUN = ("\n\nagent = IQL()\nagent.update_critic(torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 4))\n")


class OverrideKeepsGraphSiblingsStop(Rule):
    code = "GS445"
    name = "override-keeps-graph-siblings-stop"
    severity = Severity.WARNING
    summary = ("An override returns a trained module's output with its graph where every other implementation of "
               "the method stops the gradient: the caller's backward also trains that module.")
    events = (SiblingStopsEvent,)
    what_it_does = ("Flags the `return` of a method that overrides a base class's method (in this file or another "
                    "workspace file) when it returns the output of a module attribute (`self.v(x)`) with its graph, "
                    "the class family hands that module's parameters on (`self.v.parameters()`, to an optimizer), "
                    "a method of the family calls the method on `self` with grad mode on and backwards a loss, and "
                    "every other implementation of the method in view (the base's when concrete, and those of the "
                    "classes of this file or of the base's file that derive from the same base; at least one) "
                    "computes what it returns under `torch.no_grad()` or returns it detached, through other "
                    "module attributes. An override that mentions `no_grad` or `detach` itself, and variants that "
                    "differ only in freezing the same module (a linear probe and a fine-tuned model), are left "
                    "alone.")
    why_bad = ("Where every implementation of `compute_target` stops the gradient, the base class's caller treats "
               "the result as a constant: it builds the loss from it and backwards without `torch.no_grad()`. An "
               "override that returns a network's output with its graph makes that backward run into the "
               "network, and the optimizer that holds its parameters steps it with a gradient the algorithm does "
               "not have (IQL's value function trained through the Q-function's TD target): no error, only "
               "different training.")
    example = ("class IQL(ActorCritic):\n    def compute_target(self, batch):\n"
               "        return self._value_func(batch.next_observations)")
    use_instead = ("class IQL(ActorCritic):\n    def compute_target(self, batch):\n        with torch.no_grad():\n"
                   "            return self._value_func(batch.next_observations)")
    fix_safety = ("No automatic fix: whether the value is a constant is the algorithm's; `torch.no_grad()` around "
                  "the forward (or `.detach()`) changes the gradients the optimizer steps, which is the point.")
    references = ("https://pytorch.org/docs/stable/generated/torch.no_grad.html",
                  "https://github.com/takuseno/d3rlpy/commit/6b55a1b83b511eb46d4e5a3c92e28a5102ea0b48")
    valid = (
        # The fix: the override keeps the family's contract.
        Valid(_FAMILY + "        with torch.no_grad():\n            return self.v(s2)\n" + _RUN
              + "assert agent.v.weight.grad is None\n"),
        # The caller computes the target under `no_grad` itself: the override's graph is never recorded.
        Valid(_FAMILY.replace("        target = r + 0.99 * self.compute_target(s2)\n",
                              "        with torch.no_grad():\n            target = r + 0.99 * self.compute_target(s2)\n")
              + "        return self.v(s2)\n" + _RUN + "assert agent.v.weight.grad is None\n"),
        # A linear probe and a fine-tuned model: the variants differ in freezing the same backbone, which the
        # fine-tuned one trains on purpose.
        Valid("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
              "class Classifier:\n    def __init__(self):\n        self.backbone = nn.Linear(4, 4)\n"
              "        self.head = nn.Linear(4, 2)\n        self.optim = torch.optim.SGD(\n"
              "            list(self.backbone.parameters()) + list(self.head.parameters()), lr=0.1)\n\n"
              "    def features(self, x):\n        raise NotImplementedError\n\n"
              "    def train_step(self, x, y):\n        self.optim.zero_grad()\n"
              "        loss = F.cross_entropy(self.head(self.features(x)), y)\n        loss.backward()\n"
              "        self.optim.step()\n\n\nclass LinearProbe(Classifier):\n    def features(self, x):\n"
              "        with torch.no_grad():\n            return self.backbone(x)\n\n\n"
              "class FineTune(Classifier):\n    def features(self, x):\n        return self.backbone(x)\n\n\n"
              "model = FineTune()\nmodel.train_step(torch.randn(8, 4), torch.randint(0, 2, (8,)))\n"),
    )
    invalid = (
        # IQL (takuseno/d3rlpy@f473d197): the value function's output as the TD target, with its graph; the critic
        # optimizer holds its parameters, so the Q loss's backward trains it too.
        Invalid(_FAMILY + "        return self.v(s2)\n" + _RUN,
                line=38, runtime="silent: agent.v.weight.grad is not None and agent.v.weight.grad.abs().sum() > 0"),
    )

    def check(self, event: SiblingStopsEvent, report) -> None:
        other = event.other
        where = (f"{other.path.replace(chr(92), '/').rsplit('/', 1)[-1]} line {other.line}" if other.path
                 else f"line {other.line}")
        if event.count == 1:
            others = f"the other implementation, at {where}, computes it"
        else:
            both = "both" if event.count == 2 else f"all {event.count}"
            others = f"{both} other implementations, e.g. at {where}, compute it"
        report.add(self, event.node,
                   f"`{event.method}()` returns `self.{event.attr}`'s output with its graph; every other "
                   f"`{event.method}()` stops it. `{event.caller}` backwards a loss built from it as from a constant "
                   f"({others} under `torch.no_grad()` or detach it), so that backward "
                   f"also trains `self.{event.attr}`, whose parameters the class hands on. Compute it under "
                   "`torch.no_grad()` here too.",
                   related=[Note(other.line, other.column, f"another `{event.method}()` stops the gradient",
                                 other.path)])
