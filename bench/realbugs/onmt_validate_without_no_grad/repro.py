"""Reproduction for `onmt_validate_without_no_grad`: OpenNMT/OpenNMT-py commit f240346274 ("fix torch.no_grad for validation (#1156)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `validate()` runs the model and the loss over the whole validation set in grad mode, building (and holding) graphs that are never backwarded; the fix wraps the loop in `torch.no_grad()`.
"""

import torch

model = torch.nn.Linear(3, 1)
outputs = [model(torch.randn(2, 3)) for _ in range(3)]   # buggy: validation in grad mode
assert all(o.grad_fn is not None for o in outputs)      # every batch builds (and keeps) a graph
with torch.no_grad():                                   # the fix
    outputs = [model(torch.randn(2, 3)) for _ in range(3)]
assert all(o.grad_fn is None for o in outputs)

print("CONFIRMED")
