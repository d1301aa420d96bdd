"""Reproduction for `deepxde_periodic_inplace_leaf_view`: lululxvi/deepxde commit 544926f8 ("no inplace").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: the PI-DeepONet examples' feature transform does `x, t = x[:, :1], x[:, 1:]; x *= 2 * np.pi`; with the
PyTorch backend the network input is a leaf with `requires_grad_()` (needed for the PDE derivatives), so the
in-place multiply on its view raises "a view of a leaf Variable that requires grad is being used in an in-place
operation". The fix writes `x = x * 2 * np.pi`.
"""

import numpy as np
import torch


def periodic(x, fixed):
    x, t = x[:, :1], x[:, 1:]
    if fixed:
        x = x * 2 * np.pi
    else:
        x *= 2 * np.pi                            # buggy
    return torch.cat([torch.cos(x), torch.sin(x), torch.cos(2 * x), torch.sin(2 * x), t], 1)


inputs = torch.as_tensor(np.random.rand(10, 2))
inputs.requires_grad_()                           # as deepxde's pytorch model does

try:
    periodic(inputs, fixed=False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "leaf Variable that requires grad" in str(e), e

features = periodic(inputs, fixed=True)
(du_x,) = torch.autograd.grad(features.sum(), inputs)
assert du_x.shape == inputs.shape

print("CONFIRMED")
