"""Reproduction for `tnt_scalar_to_float_numpy`: meta-pytorch/tnt commit b6b41fb487 ("Add `.detach()` in `scalar_to_float()`").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `scalar_to_float` calls `scalar.cpu().numpy()` on logged values; a loss logged from a training loop requires grad, so logging raises "Can't call numpy() on Tensor that requires grad"; the fix detaches first.
"""

import torch

def scalar_to_float(scalar, detach):
    if isinstance(scalar, torch.Tensor):
        return float((scalar.cpu().detach() if detach else scalar.cpu()).numpy().item())
    return float(scalar)


loss = torch.nn.Linear(3, 1)(torch.randn(2, 3)).mean()      # a loss logged from a training loop
try:
    scalar_to_float(loss, detach=False)
    raise AssertionError("expected numpy() to raise")
except RuntimeError as exc:
    assert "Can't call numpy() on Tensor that requires grad" in str(exc), exc
assert isinstance(scalar_to_float(loss, detach=True), float)

print("CONFIRMED")
