"""Reproduction for `sb_tacotron_masked_fill_inplace`: speechbrain/speechbrain commit f79b77f143 ("fix torch 1.11 pb with clone()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `mel_outputs.masked_fill_(mask, 0.0)` modifies in place a decoder output that is saved for backward (it feeds the postnet), so backward raises "modified by an inplace operation" from torch 1.11 on; the fix works on a clone.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

postnet = torch.nn.Linear(4, 4)
decoder = torch.nn.Linear(4, 4)
x = torch.randn(2, 4)
mask = torch.tensor([[True, False, False, False], [False, False, False, True]])

def run(clone):
    mel_outputs = torch.sigmoid(decoder(x))        # sigmoid saves its output for backward
    mel_outputs_postnet = mel_outputs + postnet(mel_outputs)
    (mel_outputs.clone() if clone else mel_outputs).masked_fill_(mask, 0.0)
    (mel_outputs.sum() + mel_outputs_postnet.sum()).backward()

raises(lambda: run(False), "modified by an inplace operation")
run(True)

print("CONFIRMED")
