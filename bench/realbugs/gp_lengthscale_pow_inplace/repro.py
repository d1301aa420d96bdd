"""Reproduction for `gp_lengthscale_pow_inplace`: cornellius-gp/gpytorch commit 498a4bc8b9 ("Remove inplace operation on lengthscale from RBFKernelGrad").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: `self.lengthscale.pow_(2)` squares the lengthscale in place. When the constraint is not enforced the lengthscale IS the raw parameter, so in grad mode this raises "a leaf Variable that requires grad is being used in an in-place operation", and under no_grad it silently squares the parameter; the fix uses out-of-place `pow(2)`.
"""

import torch

def raises(fn, text):
    try:
        fn()
    except RuntimeError as exc:
        assert text in str(exc), exc
        return
    raise AssertionError("expected RuntimeError: " + text)

raw = torch.nn.Parameter(torch.tensor([0.5]))

def lengthscale(enforced):
    # gpytorch's constraint transform returns the raw parameter itself when the constraint is not
    # enforced (an identity transform), and softplus(raw) otherwise.
    return torch.nn.functional.softplus(raw) if enforced else raw

def run(inplace, enforced=False):
    ls = lengthscale(enforced)
    d = torch.ones(3) / (ls.pow_(2) if inplace else ls.pow(2))
    d.sum().backward()

raises(lambda: run(True), "a leaf Variable that requires grad is being used in an in-place operation")
run(False)
with torch.no_grad():
    lengthscale(False).pow_(2)                      # outside grad mode the parameter itself is squared
assert torch.allclose(raw.detach(), torch.tensor([0.25]))

print("CONFIRMED")
