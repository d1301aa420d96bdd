"""Reproduction for `sb_storage_numpy_requires_grad`: speechbrain/speechbrain commit 098293932b ("Extraction: Fixes").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `data.numpy()` on a tensor produced by a model in grad mode raises "Can't call numpy() on Tensor that requires grad"; the fix calls `.detach().cpu().numpy()`.
"""

import torch

model = torch.nn.Linear(3, 2)
data = model(torch.randn(1, 3))                    # a tensor produced in grad mode
try:
    data.numpy()                                   # buggy
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc)
data.detach().cpu().numpy()                        # the fix

print("CONFIRMED")
