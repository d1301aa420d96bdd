"""Reproduction for `stanza_summ_coverage_kept_on_module`: stanfordnlp/stanza commit a8ee27cf ("Fix in-place tensor manipulation bug").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the decoder stores the coverage vector returned by the attention (`coverage_vec + attention`, with the
graph of the softmax attention) on the module as `self.coverage_vec = coverage_vec`; it is never reset, so the next
batch's forward builds on the previous batch's graph and its `loss.backward()` walks into buffers that the previous
backward freed ("Trying to backward through the graph a second time"); the fix stores `coverage_vec.detach()`.
"""

import torch


class Decoder(torch.nn.Module):
    def __init__(self, fixed):
        super().__init__()
        self.W = torch.nn.Linear(4, 1)
        self.coverage_vec = None
        self.fixed = fixed

    def forward(self, encoder_outputs):
        if self.coverage_vec is None:
            self.coverage_vec = torch.zeros(encoder_outputs.shape[:2])
        attention = torch.softmax(self.W(encoder_outputs).squeeze(2) + self.coverage_vec, dim=1)
        coverage_vec = self.coverage_vec + attention
        self.coverage_vec = coverage_vec.detach() if self.fixed else coverage_vec   # the fix adds .detach()
        return attention, coverage_vec


def train(fixed):
    dec = Decoder(fixed)
    for _ in range(2):                                        # two batches
        enc = torch.randn(2, 5, 4)
        loss = 0
        for _ in range(3):                                    # decoder time steps
            attention, coverage = dec(enc)
            loss = loss + torch.min(attention, coverage).sum()   # coverage loss
        loss.backward()


try:
    train(fixed=False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "backward through the graph a second time" in str(e), e
train(fixed=True)

print("CONFIRMED")
