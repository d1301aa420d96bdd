from __future__ import annotations

from ..engine.events import NoneBackwardedEvent
from ..engine.report import Note, text as msg
from ..findings import Severity
from .base import Invalid, Rule, Valid, at


class OverrideReturnsNoneBackwarded(Rule):
    code = "GS424"
    name = "override-returns-none-backwarded"
    severity = Severity.ERROR
    summary = ("A method overrides one whose result an inherited method backwards, but returns nothing: "
               "`None.backward()` raises.")
    events = (NoneBackwardedEvent,)
    what_it_does = ("Flags a method of a class that never returns a value (no `return <value>`, no `yield`; not a "
                    "placeholder that only raises or passes) when a method the class inherits and does not define (from "
                    "a base class in this file or another workspace file) calls it on `self` and backwards its result: "
                    "`loss = self._compute_loss(...)` then `loss.backward()`. The finding stands on the override's last "
                    "statement, where the `return` is missing, with the base class's backward in `related`.")
    why_bad = ("The inherited method gets `None` and `loss.backward()` raises `AttributeError: 'NoneType' object has no "
               "attribute 'backward'`. Often the override backwards and steps itself (genrl's Bayesian bandit model), "
               "so returning the loss as well would backward it twice: leave the backward and the step to the base "
               "class and return the loss.")
    example = ("class Bayes(Model):\n    def _compute_loss(self, x):\n        loss = self.net(x).mean()\n"
               "        loss.backward()\n        self.optimizer.step()")
    use_instead = "class Bayes(Model):\n    def _compute_loss(self, x):\n        return self.net(x).mean()"
    references = ("https://docs.python.org/3/tutorial/classes.html#inheritance",)
    valid = (
        # The fix: the override returns the loss, the base class backwards it once.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
              "    def train_model(self, x):\n        loss = self.compute_loss(x)\n"
              "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n\n"
              "    def compute_loss(self, x):\n        raise NotImplementedError\n\n\nclass Bayes(Model):\n"
              "    def compute_loss(self, x):\n        loss = self.fc(x).pow(2).mean()\n        return loss\n\n\n"
              "def runs():\n    Bayes().train_model(torch.ones(2, 3))\n"),
        # The override returns nothing, and the base class never backwards its result.
        Valid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
              "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
              "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
              "    def train_model(self, x):\n        self.compute_loss(x)\n        self.optimizer.zero_grad()\n"
              "        self.fc(x).sum().backward()\n        self.optimizer.step()\n\n"
              "    def compute_loss(self, x):\n        raise NotImplementedError\n\n\nclass Bayes(Model):\n"
              "    def compute_loss(self, x):\n        self.last = self.fc(x).pow(2).mean().item()\n\n\n"
              "def runs():\n    Bayes().train_model(torch.ones(2, 3))\n"),
    )
    invalid = (
        # genrl's bandit model: the override backwards and steps itself and returns nothing.
        Invalid("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.fc = nn.Linear(3, 1)\n"
                "        self.optimizer = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n\n"
                "    def train_model(self, x):\n        loss = self.compute_loss(x)\n"
                "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n\n"
                "    def compute_loss(self, x):\n        raise NotImplementedError\n\n\nclass Bayes(Model):\n"
                "    def compute_loss(self, x):\n        loss = self.fc(x).pow(2).mean()\n"
                "        self.optimizer.zero_grad()\n        loss.backward()\n        self.optimizer.step()\n\n\n"
                "def none_backwarded():\n    try:\n        Bayes().train_model(torch.ones(2, 3))\n"
                "    except AttributeError as e:\n"
                "        return \"'NoneType' object has no attribute 'backward'\" in str(e)\n    return False\n",
                line=26, runtime="silent: none_backwarded()"),
    )

    def check(self, event: NoneBackwardedEvent, report) -> None:
        fn = event.node
        report.add(self, fn,
                   msg(f"This method returns nothing, yet the inherited `{event.inherited}` backwards its result. "
                       f"`None.backward()` raises there (", at(event.at), f"); return the loss from `{event.method}`."),
                   related=[Note(event.at.line, event.at.column, "`.backward()` on the `None` it returns: raises "
                                 "AttributeError", event.at.path)],
                   span=report.source.line_span(fn.body[-1].lineno))
