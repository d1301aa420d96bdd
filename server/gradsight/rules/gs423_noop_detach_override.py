from __future__ import annotations

from ..engine.events import NoopDetachEvent
from ..engine.report import Note
from ..engine.report import text as msg
from ..findings import Severity
from .base import Invalid, Rule, Valid, at

_BASE = ("import torch\nimport torch.nn as nn\n\n\nclass State:\n    def __init__(self, hidden):\n"
         "        self.hidden = hidden\n\n    def detach(self):\n        self.hidden = self.hidden.detach()\n\n\n"
         "class CachedState(State):\n    def __init__(self, hidden):\n        self.hidden = hidden\n\n"
         "    def update(self, hidden):\n        self.hidden = hidden\n\n    def detach(self):\n")
_LOOP = ("\n\nrnn = nn.RNNCell(2, 2)\n\n\ndef truncated_bptt(steps):\n    state = CachedState(torch.zeros(1, 2))\n"
         "    for _ in range(steps):\n        state.update(rnn(torch.ones(1, 2), state.hidden))\n"
         "        state.hidden.sum().backward()\n        state.detach()\n\n\n")


class NoopDetachOverride(Rule):
    code = "GS423"
    name = "noop-detach-override"
    severity = Severity.WARNING
    summary = ("A method that does nothing overrides a base class's method that detaches the object's tensors: the "
               "state keeps its graph.")
    events = (NoopDetachEvent,)
    what_it_does = ("Flags a method whose body does nothing (`pass`, a docstring, a bare `return`) that overrides a "
                    "method of the same name of a base class (in this file or another workspace file) whose body "
                    "detaches tensors it reads from the object (`self.hidden = self.hidden.detach()`), when the class "
                    "stores computed values on its instances. The finding stands on the override's body.")
    why_bad = ("Callers rely on the base class's contract: a trainer that runs truncated backpropagation through time "
               "calls `state.detach()` between chunks. With the override doing nothing, the state keeps the previous "
               "chunk's graph, the next backward runs into it and raises \"Trying to backward through the graph a "
               "second time\" (or, with `retain_graph=True`, memory grows with every chunk).")
    example = "class TransformerState(DecoderState):\n    def detach(self):\n        pass"
    use_instead = ("class TransformerState(DecoderState):\n    def detach(self):\n"
                   "        self.previous_input = self.previous_input.detach()")
    references = ("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",)
    valid = (
        # The fix: the override detaches its own state.
        Valid(_BASE + "        self.hidden = self.hidden.detach()\n" + _LOOP + "truncated_bptt(3)\n"),
        # A class that stores nothing computed on its instances has nothing to detach.
        Valid("import torch\n\n\nclass State:\n    def __init__(self, hidden):\n        self.hidden = hidden\n\n"
              "    def detach(self):\n        self.hidden = self.hidden.detach()\n\n\nclass EmptyState(State):\n"
              "    def __init__(self):\n        self.hidden = None\n\n    def detach(self):\n        pass\n\n\n"
              "EmptyState().detach()\n"),
    )
    invalid = (
        # OpenNMT-py's transformer decoder state: its `detach()` is `pass`, the RNN state's base detaches.
        Invalid(_BASE + "        pass\n" + _LOOP
                + "def second_backward_raises():\n    try:\n        truncated_bptt(3)\n    except RuntimeError as e:\n"
                  "        return \"second time\" in str(e)\n    return False\n",
                line=21, runtime="silent: second_backward_raises()", also=(18,)),
    )

    def check(self, event: NoopDetachEvent, report) -> None:
        fn = event.node
        report.add(self, fn,
                   msg(f"This `{event.method}()` does nothing, yet the base class's `{event.method}()` detaches the "
                       "object's tensors. The state keeps its graph (the base's is at ", at(event.base),
                       "); detach this class's tensors here."),
                   related=[Note(event.base.line, event.base.column, f"the base class's `{event.method}()` detaches",
                                 event.base.path)],
                   span=report.source.line_span(fn.body[-1].lineno))
