"""Reproduction for `onmt_transformer_state_detach_noop`: OpenNMT/OpenNMT-py commit 0f870670be ("[0.4] add detach for transformer state").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `TransformerDecoderState.detach()` is `pass`, so with truncated BPTT the decoder state carries the previous chunk's graph into the next one and the next backward raises "Trying to backward through the graph a second time".
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

rnn = torch.nn.Linear(4, 4)

class State:
    def __init__(self, real_detach):
        self.previous_input = None
        self.real_detach = real_detach
    def detach(self):
        if self.real_detach:
            self.previous_input = self.previous_input.detach()
        # buggy: `pass`

def run(real_detach):
    state = State(real_detach)
    state.previous_input = torch.zeros(1, 4)
    for _ in range(2):                              # two truncated-BPTT chunks
        out = torch.tanh(rnn(state.previous_input + torch.randn(1, 4)))
        state.previous_input = out
        out.sum().backward()
        state.detach()

raises(lambda: run(False), "Trying to backward through the graph a second time")
run(True)

print("CONFIRMED")
