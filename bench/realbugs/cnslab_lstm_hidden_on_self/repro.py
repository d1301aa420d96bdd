"""Reproduction for `cnslab_lstm_hidden_on_self`: sgadgil6/cnslab_fmri commit b673f9a41e ("lstm fix").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `lstm_out, self.hidden = self.lstm(x, self.hidden)` keeps the LSTM state on the module across training steps, so the second step's backward re-enters the first step's freed graph ("Trying to backward through the graph a second time"); the fix stops carrying the state.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

class FMRILSTM(torch.nn.Module):
    def __init__(self, carry):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 4, batch_first=True)
        self.hidden = (torch.randn(1, 2, 4), torch.randn(1, 2, 4))
        self.carry = carry
    def forward(self, x):
        if self.carry:
            lstm_out, self.hidden = self.lstm(x, self.hidden)   # buggy: the state keeps the graph
        else:
            lstm_out, _ = self.lstm(x)                          # the fix
        return lstm_out[:, -1, :].sum()

def run(carry):
    model = FMRILSTM(carry)
    for _ in range(2):
        model(torch.randn(2, 5, 3)).backward()

raises(lambda: run(True), "Trying to backward through the graph a second time")
run(False)

print("CONFIRMED")
