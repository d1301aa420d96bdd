"""Reproduction for `sb_fbank_no_grad`: speechbrain/speechbrain commit e72550de4f ("Remove torch.no_grad in features").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Fbank.forward` computes the features inside `torch.no_grad()`, so learnable filterbanks (and anything upstream of `wav`) never receive gradients; the fix removes the `no_grad`.
"""

import torch

class Fbank(torch.nn.Module):
    def __init__(self, no_grad):
        super().__init__()
        self.filters = torch.nn.Parameter(torch.randn(8, 4))   # learnable filterbanks
        self.no_grad = no_grad
    def forward(self, wav):
        if self.no_grad:
            with torch.no_grad():
                return wav @ self.filters
        return wav @ self.filters

for no_grad, expect in ((True, False), (False, True)):
    f = Fbank(no_grad)
    out = f(torch.randn(2, 8))
    assert out.requires_grad == expect

print("CONFIRMED")
