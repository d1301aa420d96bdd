"""Reproduction for `ts_batch_to_numpy`: thu-ml/tianshou commit 66be5641b6 ("Fix to_numpy. (#73)").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Batch.to_numpy` calls `v.cpu().numpy()` on tensors that may require grad (policy outputs), which raises "Can't call numpy() on Tensor that requires grad"; the fix detaches first.
"""

import torch

model = torch.nn.Linear(3, 2)
data = model(torch.randn(1, 3))                    # a tensor produced in grad mode
try:
    data.cpu().numpy()                                   # buggy
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc)
data.detach().cpu().numpy()                        # the fix

print("CONFIRMED")
