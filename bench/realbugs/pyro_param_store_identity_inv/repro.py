"""Reproduction for `pyro_param_store_identity_inv`: pyro-ppl/pyro commit 67f5c1fb43 ("Add .detach()").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: For an unconstrained site `transform_to(constraint).inv` is the identity and returns the caller's tensor itself, so `requires_grad_(True)` flips the caller's tensor and the store keeps a tensor that may carry history (a non-leaf parameter); `.detach()` stores a fresh leaf.
"""

import torch

from torch.distributions import constraints, transform_to

x = torch.randn(3, requires_grad=True)
new_constrained_value = x * 2                      # a user's initial value that carries history
with torch.no_grad():
    unconstrained_value = transform_to(constraints.real).inv(new_constrained_value)
unconstrained_value.requires_grad_(True)
assert unconstrained_value is new_constrained_value   # the identity returned the caller's tensor
assert not unconstrained_value.is_leaf                # the stored "parameter" is a non-leaf
try:
    torch.optim.SGD([unconstrained_value], lr=0.1)
    raise AssertionError("expected ValueError")
except ValueError as exc:
    assert "can't optimize a non-leaf Tensor" in str(exc)
with torch.no_grad():
    fixed = transform_to(constraints.real).inv(new_constrained_value.detach())
fixed.requires_grad_(True)
assert fixed.is_leaf

print("CONFIRMED")
