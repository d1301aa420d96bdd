"""Reproduction for `st_listnet_zero_loss`: UKPLab/sentence-transformers commit 34b260e819 ("Set requires_grad for 0.0 loss edge case").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: The padded-only edge case returns `torch.tensor(0.0)`, a constant with no grad_fn; `loss.backward()` on it raises "element 0 of tensors does not require grad and does not have a grad_fn".
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

def buggy():
    loss = torch.tensor(0.0)                      # `return torch.tensor(0.0, device=...)`
    loss.backward()

def fixed():
    loss = torch.tensor(0.0, requires_grad=True)  # the fix adds requires_grad=True
    loss.backward()

raises(buggy, "element 0 of tensors does not require grad and does not have a grad_fn")
fixed()

print("CONFIRMED")
