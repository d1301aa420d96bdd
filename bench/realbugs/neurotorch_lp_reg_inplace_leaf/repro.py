"""Reproduction for `neurotorch_lp_reg_inplace_leaf`: NeuroTorch/NeuroTorch commit a44f658f ("rm inplace ops").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `Lp.forward` starts from `loss = torch.tensor(0.0, requires_grad=True).to(device)` and accumulates
`loss += torch.linalg.norm(param, p)`; when the parameters live on the tensor's own device (CPU) `.to()` returns the
same leaf that requires grad, and the in-place `+=` raises "a leaf Variable that requires grad is being used in an
in-place operation". The fix collects the norms in a list and returns their out-of-place `sum`.
"""

import torch

params = [torch.nn.Parameter(torch.randn(3, 3)), torch.nn.Parameter(torch.randn(3))]


def lp_forward(fixed, p=2):
    if fixed:
        losses = []
        device = params[0].device
        for param in params:
            if param.dim() > 0:
                losses.append(torch.linalg.norm(param, p).to(device))
        return sum(losses)
    loss = torch.tensor(0.0, requires_grad=True).to(params[0].device)   # buggy: still the leaf on CPU
    for param in params:
        loss += torch.linalg.norm(param, p)
    return loss


try:
    lp_forward(False)
    raise AssertionError("buggy form did not raise")
except RuntimeError as e:
    assert "leaf Variable that requires grad" in str(e), e
lp_forward(True).backward()
assert all(p.grad is not None for p in params)

print("CONFIRMED")
