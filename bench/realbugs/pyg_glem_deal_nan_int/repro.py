"""Reproduction for `pyg_glem_deal_nan_int`: pyg-team/pytorch_geometric commit 278d015259 ("Fix `deal_nan()` to Preserve Differentiability and Prevent Autograd Er").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `deal_nan` returns the Python int `0` when a loss term is NaN, so the combined loss can become a plain number with no graph (backward fails, or that term's gradient silently disappears); the fix zeroes NaNs in a clone and keeps the tensor.
"""

import torch

def deal_nan_buggy(x):
    return 0 if torch.isnan(x) else x

def deal_nan_fixed(x):
    x = x.clone()
    x[torch.isnan(x)] = 0.0
    return x

w = torch.nn.Parameter(torch.tensor(1.0))
nan_loss = w * float("nan")
loss = deal_nan_buggy(nan_loss) + deal_nan_buggy(torch.tensor(0.0))   # every term NaN or constant
assert not isinstance(loss, torch.Tensor) or not loss.requires_grad  # no gradient reaches `w`
try:
    loss.backward()
    raise AssertionError("expected the backward to fail")
except (AttributeError, RuntimeError):
    pass
fixed = deal_nan_fixed(nan_loss)
fixed.backward()
assert w.grad is not None

print("CONFIRMED")
